/**
 * `homed mcp serve` on standard input and output: the MCP server of {@link createHomedMcpServer}, one JSON-RPC
 * message a line, until standard input ends. Standard output carries the protocol and nothing else, so every log line
 * must go to standard error (homed's logging does).
 *
 * The transport is written over web streams rather than the SDK's `StdioServerTransport`: that one takes Node's
 * `process.stdin`, and never notices the end of its input, which is how an MCP client tells a stdio server to stop.
 *
 * @module
 */

// The SDK's "./*" export maps `x.js` to types at `x.js.d.ts`, which do not exist: without @ts-types naming
// `x.d.ts`, Deno types every import from it as `any`.
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { log } from "../../log/logging.ts";
import { ChatTurns } from "./chat_turns.ts";
import { type ButlerAccess, createHomedMcpServer } from "./homed_tools.ts";
import { readJsonRpc, refusalResponse } from "./jsonrpc_body.ts";

/** The longest message line read, in characters: as much as the SDK's own stdio transports buffer (10 MiB). */
export const STDIO_MAX_LINE_CHARS = 10 * 1024 * 1024;

/** Options of {@link LineStreamTransport}. */
export interface LineStreamTransportOptions {
  /** The longest line accepted, in characters ({@link STDIO_MAX_LINE_CHARS} by default); a longer one ends the connection. */
  maxLineChars?: number;
}

const encoder = new TextEncoder();

/**
 * An MCP transport over a byte stream in and one out, newline-delimited JSON-RPC as MCP's stdio transport has it.
 * When the input ends, the requests already read are still answered; then the output is closed and `onclose` runs.
 *
 * @example
 * ```ts
 * // @ts-types="@modelcontextprotocol/sdk/client/index"
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 *
 * // A client of a stdio server this process started itself (the server's stdout is our input).
 * const child = new Deno.Command("homed", { args: ["mcp", "serve"], stdin: "piped", stdout: "piped" }).spawn();
 * const client = new Client({ name: "example", version: "1.0.0" });
 * await client.connect(new LineStreamTransport(child.stdout, child.stdin));
 * ```
 */
export class LineStreamTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  readonly #input: ReadableStream<Uint8Array>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #maxLineChars: number;
  #reader: ReadableStreamDefaultReader<string> | undefined;
  #started = false;
  #closed = false;
  #inputEnded = false;
  /** Requests read and not yet answered: at the input's end they still get their answers. */
  readonly #unanswered = new Set<RequestId>();
  readonly #done = Promise.withResolvers<void>();

  /** A transport reading `input` and writing `output` (it takes both streams' locks). */
  constructor(
    input: ReadableStream<Uint8Array>,
    output: WritableStream<Uint8Array>,
    options: LineStreamTransportOptions = {},
  ) {
    this.#input = input;
    this.#writer = output.getWriter();
    this.#maxLineChars = options.maxLineChars ?? STDIO_MAX_LINE_CHARS;
  }

  /** Settles when the transport has closed (the input ended and the last answer went out, or {@link close}). */
  get closed(): Promise<void> {
    return this.#done.promise;
  }

  /** Starts reading; the messages go to `onmessage` as their lines complete. */
  start(): Promise<void> {
    if (this.#started) return Promise.reject(new Error("The transport is already started"));
    this.#started = true;
    this.#reader = this.#input.pipeThrough(new TextDecoderStream()).getReader();
    void this.#read(this.#reader);
    return Promise.resolve();
  }

  async #read(reader: ReadableStreamDefaultReader<string>): Promise<void> {
    let buffer = "";
    try {
      while (!this.#closed) {
        const { value, done } = await reader.read();
        if (done) break;
        // Only the new text is searched for line ends: a long line in many chunks is not scanned again and again.
        let from = buffer.length;
        buffer += value;
        for (let end = buffer.indexOf("\n", from); end !== -1; end = buffer.indexOf("\n", from)) {
          this.#receive(buffer.slice(0, end).replace(/\r$/, ""));
          buffer = buffer.slice(end + 1);
          from = 0;
        }
        if (buffer.length > this.#maxLineChars) {
          throw new RangeError(`A message on the input exceeds ${this.#maxLineChars} characters`);
        }
      }
      if (buffer.trim() !== "") this.#receive(buffer);
    } catch (error) {
      if (!this.#closed) this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
    this.#inputEnded = true;
    if (this.#unanswered.size === 0) await this.close();
  }

  /**
   * One line: a message to hand on, or a refusal to answer (-32700 for a line that is not JSON, -32600 for JSON that
   * is not a JSON-RPC message) and report; the connection goes on, as the SDK's stdio does.
   */
  #receive(line: string): void {
    if (line.trim() === "") return;
    // One message a line: MCP's stdio transport has no batches.
    const read = readJsonRpc(line, { what: "the line", batches: false });
    if (!read.ok) {
      const what = read.refusal.code === ErrorCode.ParseError ? "not JSON" : "not a JSON-RPC message";
      this.onerror?.(new Error(`A line of the input is ${what}: ${line.slice(0, 80)}`));
      void this.#write(refusalResponse(read.refusal)).catch((error) => this.onerror?.(error));
      return;
    }
    const message = read.messages[0]!;
    if (isJSONRPCRequest(message)) this.#unanswered.add(message.id);
    // A cancelled request is never answered (the SDK drops its result): it must not hold the end of the input back.
    if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
      const id: unknown = message.params?.requestId;
      if (typeof id === "string" || typeof id === "number") this.#answered(id);
    }
    this.onmessage?.(message);
  }

  #answered(id: RequestId): void {
    this.#unanswered.delete(id);
    if (this.#inputEnded && this.#unanswered.size === 0) void this.close();
  }

  /** Writes one message as a line. */
  async send(message: JSONRPCMessage): Promise<void> {
    await this.#write(message);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      if (message.id !== undefined) this.#answered(message.id);
    }
  }

  /** Writes one line of JSON, unless the connection is closed. */
  async #write(message: unknown): Promise<void> {
    if (this.#closed) throw new Error("The MCP connection is closed");
    await this.#writer.write(encoder.encode(`${JSON.stringify(message)}\n`));
  }

  /** Stops reading, closes the output and runs `onclose` (once). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#reader?.cancel().catch(() => {});
    // The output may be gone already (the client closed its end): nothing is left to tell it.
    await this.#writer.close().catch(() => {});
    this.onclose?.();
    this.#done.resolve();
  }
}

/** Options of {@link serveStdio}. */
export interface ServeStdioOptions {
  /** homed's version, shown to clients. */
  version: string;
  /** Where the client's messages come from: standard input by default. */
  input?: ReadableStream<Uint8Array>;
  /** Where the answers go: standard output by default (nothing else may write there). */
  output?: WritableStream<Uint8Array>;
  /** Stops serving when it aborts (a signal to the process). */
  signal?: AbortSignal;
  /** A message that could not be read or sent; logged as a warning (to standard error) by default. */
  onError?: (error: Error) => void;
  /** The longest a `chat` call waits for its turn before answering with what is known (`MCP_ANSWER_WITHIN_MS`). */
  answerWithinMs?: number;
  /** Time between a `chat` call's progress notifications, when it asked for them (`MCP_PROGRESS_EVERY_MS`). */
  progressEveryMs?: number;
}

/**
 * Serves homed's MCP tools on standard input and output until the input ends (or `signal` aborts).
 *
 * @example
 * ```ts
 * import { httpButlerAccess } from "./daemon_access.ts";
 * import { VERSION } from "../../version.ts";
 *
 * const access = httpButlerAccess({ baseUrl: "http://127.0.0.1:8080", token: "", timeoutMs: 15_000 });
 * await serveStdio(access, { version: VERSION }); // returns when the client closes our standard input
 * ```
 */
export async function serveStdio(access: ButlerAccess, options: ServeStdioOptions): Promise<void> {
  const logger = log("mcp", "serve");
  const transport = new LineStreamTransport(
    options.input ?? Deno.stdin.readable,
    options.output ?? Deno.stdout.writable,
  );
  // The turns of this one client. When it leaves, the reads of their replies from the daemon stop: nobody is left to
  // ask for them (the turns themselves go on in the daemon).
  const turns = new ChatTurns();
  const server = createHomedMcpServer(access, {
    version: options.version,
    turns,
    ...(options.answerWithinMs === undefined ? {} : { answerWithinMs: options.answerWithinMs }),
    ...(options.progressEveryMs === undefined ? {} : { progressEveryMs: options.progressEveryMs }),
  });
  server.server.onerror = options.onError ??
    ((error) => logger.warning("MCP on standard input/output: {error}", { error: error.message }));
  const stop = () => void transport.close();
  options.signal?.addEventListener("abort", stop, { once: true });
  try {
    if (options.signal?.aborted) return;
    await server.connect(transport);
    await transport.closed;
  } finally {
    options.signal?.removeEventListener("abort", stop);
    await server.close();
    turns.close();
  }
}
