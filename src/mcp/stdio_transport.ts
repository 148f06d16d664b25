/**
 * The MCP stdio transport, on `Deno.Command` instead of the SDK's `StdioClientTransport`, for four reasons found in
 * the SDK's source (1.32.2, `client/stdio.js`):
 *
 * - the SDK merges `HOME, LOGNAME, PATH, SHELL, TERM, USER` from homed's own environment into the child's, so a server
 *   could not get *only* `PATH`, `HOME` and its own `env` (and reading them needs `--allow-env` for all six); here the
 *   environment is exactly what the caller gives (`clearEnv`);
 * - its read buffer throws past 10 MB and then closes the connection, so one large tool result would cost the server's
 *   session instead of being cut; here one message may be up to `maxMessageBytes` (16 MiB), and a larger one is
 *   dropped without holding it, answered for the request it belonged to with an error that says so;
 * - the child's stderr goes to homed's by default; here each line goes to `onStderr` (the caller logs it,
 *   rate-limited) and the last lines are kept for error messages;
 * - the session ends when the child exits, even when a grandchild keeps its pipes open, and `close()` always ends
 *   with the child gone: stdin closed, then SIGTERM, then SIGKILL.
 *
 * The framing is the SDK's: one JSON-RPC message per line, parsed with its `JSONRPCMessageSchema`.
 *
 * @module
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { type Clock, deadline } from "../clock.ts";

/** Options of {@link StdioTransport}. */
export interface StdioTransportOptions {
  command: string;
  args: readonly string[];
  /** The child's whole environment (nothing else is inherited). */
  env: Readonly<Record<string, string>>;
  /** Its working folder; homed's when absent. */
  cwd?: string;
  clock: Pick<Clock, "after">;
  /** How messages name the server: `MCP server "filesystem"`. */
  label: string;
  /** Each line the child writes to stderr (cut at 2,000 characters). */
  onStderr?(line: string): void;
  /** Largest message read from the child, in bytes; 16 MiB. */
  maxMessageBytes?: number;
  /** How long `close()` waits after closing stdin, and again after SIGTERM; 1 s each. */
  graceMs?: number;
}

/** Largest message accepted by default: room for a 10 MB tool result and its JSON escaping. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const STDERR_LINE = 2_000;
const STDERR_KEPT = 5;
/** After the child exits, how long its pipes may take to drain before they are cut (a grandchild may hold them). */
const DRAIN_MS = 500;
const NEWLINE = 0x0a;

/** What ended the child, in words: "it exited with code 1", "it was killed by SIGKILL". */
function describeStatus(status: Deno.CommandStatus): string {
  return status.signal ? `its process was killed by ${status.signal}` : `its process exited with code ${status.code}`;
}

/**
 * The id of a JSON-RPC message from its first and last bytes, for a message too large to parse: the SDK's servers
 * write `{"result":…,"jsonrpc":"2.0","id":7}`, others put the id first.
 */
function idOf(head: string, tail: string): number | string | undefined {
  const match = /"id"\s*:\s*(\d+|"(?:[^"\\]|\\.){0,200}")\s*\}\s*$/.exec(tail) ??
    /^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(\d+|"(?:[^"\\]|\\.){0,200}")/.exec(head);
  if (!match?.[1]) return undefined;
  try {
    return JSON.parse(match[1]) as number | string;
  } catch {
    return undefined;
  }
}

/** A child process speaking MCP on its stdin and stdout. */
export class StdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  #options: StdioTransportOptions;
  #maxBytes: number;
  #child: Deno.ChildProcess | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #readers: Array<ReadableStreamDefaultReader<Uint8Array>> = [];
  #pumps: Promise<void>[] = [];
  #status: Promise<Deno.CommandStatus> | undefined;
  #ended: string | undefined;
  #exited = false;
  #exitStatus: Deno.CommandStatus | undefined;
  /** close() had to signal the child: its end is homed's doing, not a reason of its own. */
  #signalled = false;
  #onEnded: () => void = () => {};
  #endedPromise = new Promise<void>((resolve) => (this.#onEnded = resolve));
  #closed = false;
  #stderrTail: string[] = [];
  #encoder = new TextEncoder();

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const transport = new StdioTransport({
   *   command: "node",
   *   args: ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
   *   env: { PATH: "/usr/bin:/bin", HOME: "/home/homed" },
   *   clock: systemClock,
   *   label: 'MCP server "everything"',
   *   onStderr: (line) => console.error(line),
   * });
   * await transport.start();
   * await transport.close();
   * ```
   */
  constructor(options: StdioTransportOptions) {
    this.#options = options;
    this.#maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  /** The child's process id once started; `null` before and after. */
  get pid(): number | null {
    return this.#child && !this.#exited ? this.#child.pid : null;
  }

  /** Why the child ended ("its process exited with code 1"), with its last stderr line; `undefined` while it runs. */
  get endReason(): string | undefined {
    return this.#ended;
  }

  /** The last lines the child wrote to stderr (at most 5), oldest first. */
  get stderrTail(): readonly string[] {
    return this.#stderrTail;
  }

  /** Starts the child; throws when it cannot be started (not found, not allowed), with the OS's reason. */
  // deno-lint-ignore require-await -- the Transport interface wants a promise; a spawn error becomes its rejection
  async start(): Promise<void> {
    if (this.#child) throw new Error(`${this.#options.label}: the stdio transport was started twice`);
    const { command, args, env, cwd } = this.#options;
    const child = new Deno.Command(command, {
      args: [...args],
      env: { ...env },
      clearEnv: true,
      ...(cwd ? { cwd } : {}),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    // A write to a child that is gone rejects; the session's end is reported by the exit, not by this.
    this.#writer.closed.catch(() => {});
    const stdout = child.stdout.getReader();
    const stderr = child.stderr.getReader();
    this.#readers = [stdout, stderr];
    this.#pumps = [this.#readStdout(stdout), this.#readStderr(stderr)];
    this.#status = child.status;
    void this.#watch(child);
  }

  /** Writes one message as a line; rejects when the child is gone. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#exited || this.#ended !== undefined) {
      throw new Error(`${this.#options.label} is not running${this.#ended ? ` (${this.#ended})` : ""}`);
    }
    await this.#writer.write(this.#encoder.encode(`${JSON.stringify(message)}\n`));
  }

  /** Ends the session: closes stdin, then SIGTERM, then SIGKILL, each after `graceMs`; resolves once the child is gone. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const child = this.#child;
    const status = this.#status;
    if (child && status && !this.#exited) {
      const grace = this.#options.graceMs ?? 1_000;
      await this.#writer?.close().catch(() => {});
      const exited = status.then(() => true, () => true);
      const wait = () => this.#within(exited, grace);
      if (!(await wait())) {
        this.#signalled = true;
        this.#kill(child, "SIGTERM");
        if (!(await wait())) this.#kill(child, "SIGKILL");
      }
      await exited;
    }
    await this.#drain();
    this.#finish(this.#signalled ? "homed stopped it" : this.#describeExit());
  }

  /** The child's end in words, with its last stderr line. */
  #describeExit(): string {
    if (!this.#exitStatus) return "homed closed it";
    const last = this.#stderrTail.at(-1);
    return `${describeStatus(this.#exitStatus)}${last ? ` (its last words on stderr: ${last})` : ""}`;
  }

  /** `work`'s value, or `false` after `ms` (the timer is always disarmed). */
  async #within(work: Promise<boolean>, ms: number): Promise<boolean> {
    const limit = deadline(this.#options.clock, ms);
    try {
      const raced = await limit.race(work);
      return raced.late ? false : raced.value;
    } finally {
      limit.cancel();
    }
  }

  #kill(child: Deno.ChildProcess, signal: Deno.Signal): void {
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
  }

  /** Waits for the pipes to be read to their end, and cuts them after a moment when something else holds them. */
  async #drain(): Promise<void> {
    const pumps = Promise.all(this.#pumps);
    if (!(await this.#within(pumps.then(() => true), DRAIN_MS))) {
      for (const reader of this.#readers) await reader.cancel().catch(() => {});
      await pumps;
    }
    await this.#writer?.abort().catch(() => {});
  }

  async #watch(child: Deno.ChildProcess): Promise<void> {
    this.#exitStatus = await child.status;
    this.#exited = true;
    if (this.#closed) return; // close() reports the end itself
    // Its last stderr lines may still be in the pipe: read them first, they say why it ended.
    await this.#drain();
    this.#finish(this.#describeExit());
  }

  /**
   * Why the child failed, waiting up to `ms` for its end to be known (a failed write often comes before the exit is
   * read): its exit when that was abnormal (a code other than 0, a signal homed did not send); `undefined` otherwise —
   * a child that exits with 0 once its stdin closes (the SDK closes a client whose `initialize` failed) says nothing.
   */
  async failureWithin(ms: number): Promise<string | undefined> {
    if (this.#ended === undefined && this.#child) await this.#within(this.#endedPromise.then(() => true), ms);
    const status = this.#exitStatus;
    if (!status || this.#signalled || (status.code === 0 && !status.signal)) return undefined;
    return this.#ended;
  }

  #finish(reason: string): void {
    if (this.#ended === undefined) this.#ended = reason;
    this.#onEnded();
    const onclose = this.onclose;
    this.onclose = undefined;
    onclose?.();
  }

  async #readStdout(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    let parts: Uint8Array[] = [];
    let size = 0;
    // Past the limit: the message is not kept, only its first and last bytes (to name the request it answers).
    let dropping = false;
    let head = new Uint8Array(0);
    let tail = new Uint8Array(0);
    const keepTail = (bytes: Uint8Array) => {
      const joined = new Uint8Array(tail.length + bytes.length);
      joined.set(tail);
      joined.set(bytes, tail.length);
      tail = joined.slice(-512);
    };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        let chunk = value;
        for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE)) {
          const piece = chunk.subarray(0, end);
          chunk = chunk.subarray(end + 1);
          if (dropping) {
            keepTail(piece);
            this.#oversize(size + piece.length, head, tail);
          } else if (size + piece.length > this.#maxBytes) {
            this.#oversize(
              size + piece.length,
              (parts[0] ?? piece).slice(0, 512),
              joinBytes([...parts.slice(-2), piece]).slice(-512),
            );
          } else {
            this.#deliver(parts.length ? joinBytes([...parts, piece]) : piece);
          }
          parts = [];
          size = 0;
          dropping = false;
        }
        if (!chunk.length) continue;
        if (dropping) {
          size += chunk.length;
          keepTail(chunk);
        } else if (size + chunk.length > this.#maxBytes) {
          head = (parts[0] ?? chunk).slice(0, 512);
          tail = chunk.slice(-512);
          size += chunk.length;
          parts = [];
          dropping = true;
        } else {
          // Copied: Deno may reuse a chunk's buffer for the next read.
          parts.push(chunk.slice());
          size += chunk.length;
        }
      }
    } catch {
      // The pipe was cut (the child is gone); what was read is all there is.
    }
  }

  #deliver(line: Uint8Array): void {
    const text = new TextDecoder().decode(line).replace(/\r$/, "");
    if (text.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(text));
    } catch {
      // Some servers print logs to stdout; such a line is no message. Said, not fatal.
      this.onerror?.(
        new Error(`${this.#options.label} wrote a line that is not JSON-RPC on stdout: ${text.slice(0, 200)}`),
      );
      return;
    }
    this.onmessage?.(message);
  }

  #oversize(size: number, head: Uint8Array, tail: Uint8Array): void {
    const decoder = new TextDecoder();
    const id = idOf(decoder.decode(head), decoder.decode(tail));
    const what = `${this.#options.label} sent a message of ${size} bytes, over homed's limit of ${this.#maxBytes}; ` +
      `it was dropped unread`;
    this.onerror?.(new Error(what));
    // The request it answered would otherwise wait for its deadline: answer it with the reason instead.
    if (id !== undefined) this.onmessage?.({ jsonrpc: "2.0", id, error: { code: -32603, message: what } });
  }

  async #readStderr(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    const emit = (line: string) => {
      const clean = line.replace(/\r$/, "").slice(0, STDERR_LINE);
      if (clean.trim() === "") return;
      this.#stderrTail.push(clean);
      if (this.#stderrTail.length > STDERR_KEPT) this.#stderrTail.shift();
      this.#options.onStderr?.(clean);
    };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf("\n"); end !== -1; end = buffer.indexOf("\n")) {
          emit(buffer.slice(0, end));
          buffer = buffer.slice(end + 1);
        }
        // A line without end is cut, not held without bound.
        if (buffer.length > STDERR_LINE) {
          emit(buffer);
          buffer = "";
        }
      }
    } catch {
      // Cut with the child.
    }
    if (buffer) emit(buffer);
  }
}

function joinBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
