/**
 * The serial transport: a tty driven through coreutils — `stty` sets the line (speed, raw, no echo, 8N1, no flow
 * control), one `dd` reads the port and one `dd` writes it — because under Deno's permissions nothing else works:
 *
 * - Deno refuses to open anything under `/dev` (after resolving symlinks) without `--allow-all`, whatever
 *   `--allow-read`/`--allow-write` say, so `Deno.open("/dev/ttyUSB0")` is not possible in a sandboxed homed;
 * - `npm:serialport`'s binding loads with `--allow-ffi=<its .node>`, but only with `--allow-env` for every variable
 *   (its `debug` dependency lists them all) and read access to `/etc/alpine-release`, its port listing runs
 *   `udevadm`, and its reads and writes then fail with EBADF: it opens the port natively and hands the raw descriptor
 *   to `node:fs`, which in Deno knows only its own resources.
 *
 * The children hold the port open, so its settings hold too (`stty` runs again once they have opened it). The port
 * going away (unplugged, the far end of a pty closing) ends the reading `dd` with end of input or EIO, which ends
 * {@link SerialLink.read}. Closing kills both children, so no read is ever left blocked in homed: stop never hangs.
 * Rights: `--allow-run=stty,dd`; homed itself opens nothing, the port's access comes from the user (group `dialout`).
 *
 * @module
 */

import { type Clock, deadline } from "../../clock.ts";
import { readTail, runCommand, spawnError } from "../../process/run_command.ts";

/** An open serial port, whatever carries it. */
export interface SerialLink {
  /** The next bytes the port gave (at most 64 KiB at a time); `undefined` once it is closed. */
  read(): Promise<Uint8Array | undefined>;
  /** Writes all of `bytes`; rejects when the port is closed or failed. */
  write(bytes: Uint8Array): Promise<void>;
  /** Closes the port; settles within a few seconds whatever the port does. Safe to call more than once. */
  close(): Promise<void>;
  /** Why the port closed, once {@link SerialLink.read} returned `undefined`. */
  closed(): Promise<string>;
}

/** What opening a port needs. */
export interface OpenRequest {
  /** The port's name under `devices.serial`, for messages. */
  name: string;
  path: string;
  baud: number;
  clock: Clock;
  /** Aborts an opening in progress (the device stops). */
  signal: AbortSignal;
}

/** Opens a serial port; rejects with a message naming the setting when it cannot. */
export type OpenPort = (request: OpenRequest) => Promise<SerialLink>;

/** Longest `stty` may take (it opens the port without waiting for a carrier, so it answers at once). */
const STTY_TIMEOUT_MS = 5_000;
/** Longest a child may take to exit after SIGTERM before it gets SIGKILL, and again after that. */
const EXIT_WAIT_MS = 2_000;
/** Bytes `dd` reads at once: a read returns what the port has, up to this. */
const READ_BYTES = 65_536;

/**
 * The speeds Linux's termios (and so `stty`) can set; another `baud` is refused before anything runs, since `stty`
 * would only say "invalid argument".
 *
 * @example
 * ```ts
 * TTY_SPEEDS.includes(115_200); // true
 * TTY_SPEEDS.includes(250_000); // false
 * ```
 */
export const TTY_SPEEDS: readonly number[] = [
  50,
  75,
  110,
  134,
  150,
  200,
  300,
  600,
  1_200,
  1_800,
  2_400,
  4_800,
  9_600,
  19_200,
  38_400,
  57_600,
  115_200,
  230_400,
  460_800,
  500_000,
  576_000,
  921_600,
  1_000_000,
  1_152_000,
  1_500_000,
  2_000_000,
  2_500_000,
  3_000_000,
  3_500_000,
  4_000_000,
];

/**
 * The `stty` arguments that set `path` up for line-oriented data: the speed, raw input and output (no line editing,
 * no signals, no CR/LF translation), no echo, 8 data bits, no parity, one stop bit, modem lines ignored (`clocal`,
 * so an open never waits for a carrier) and no hardware or software flow control; reads return what has arrived.
 *
 * @example
 * ```ts
 * sttyArguments("/dev/ttyUSB0", 115_200);
 * // ["-F", "/dev/ttyUSB0", "115200", "raw", "-echo", "-echoe", "-echok", "-echonl", "cs8", "-parenb", …]
 * ```
 */
export function sttyArguments(path: string, baud: number): string[] {
  return [
    "-F",
    path,
    String(baud),
    "raw",
    "-echo",
    "-echoe",
    "-echok",
    "-echonl",
    "cs8",
    "-parenb",
    "-cstopb",
    "clocal",
    "-crtscts",
    "-ixon",
    "-ixoff",
    "min",
    "1",
    "time",
    "0",
  ];
}

/**
 * Opens a tty with `stty` and two `dd`s (see the module doc); the default {@link OpenPort}.
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 *
 * const link = await openTty({
 *   name: "sensor",
 *   path: "/dev/ttyUSB0",
 *   baud: 115_200,
 *   clock: systemClock,
 *   signal: new AbortController().signal,
 * });
 * await link.write(new TextEncoder().encode("status\n"));
 * const bytes = await link.read(); // what the port sent, or undefined once it is gone
 * await link.close();
 * ```
 */
export async function openTty(request: OpenRequest): Promise<SerialLink> {
  const setting = `devices.serial.${request.name}`;
  await stty(request, setting);
  let reader: Deno.ChildProcess;
  let writer: Deno.ChildProcess;
  try {
    reader = new Deno.Command("dd", {
      args: [`if=${request.path}`, `bs=${READ_BYTES}`, "status=none"],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    throw spawnError("dd", setting, error);
  }
  try {
    // nocreat: a port that vanished in between must not come back as a regular file of that name.
    writer = new Deno.Command("dd", {
      args: [`of=${request.path}`, `bs=${READ_BYTES}`, "conv=nocreat,notrunc", "status=none"],
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    kill(reader, "SIGKILL");
    await Promise.allSettled([reader.status, reader.stdout.cancel(), readTail(reader.stderr)]);
    throw spawnError("dd", setting, error);
  }
  const link = new TtyLink(request, reader, writer);
  try {
    // Again now that the port is held open: whatever a driver does on a last close or a first open, these hold now.
    await stty(request, setting);
  } catch (error) {
    await link.close();
    throw error;
  }
  return link;
}

async function stty(request: OpenRequest, setting: string): Promise<void> {
  try {
    await runCommand({
      argv: ["stty", ...sttyArguments(request.path, request.baud)],
      timeoutMs: STTY_TIMEOUT_MS,
      maxOutputBytes: 4_096,
      clock: request.clock,
      setting,
      signal: request.signal,
    });
  } catch (error) {
    if (request.signal.aborted) throw request.signal.reason;
    const message = (error as Error).message;
    // The rights to a port come from the system, not from homed's flags: say where.
    if (/permission denied/i.test(message)) {
      throw new Error(
        `${message}; the user homed runs as needs read and write access to ${request.path} (usually the dialout group)`,
      );
    }
    throw error;
  }
}

function kill(child: Deno.ChildProcess, signal: Deno.Signal): void {
  try {
    child.kill(signal);
  } catch {
    // Already exited.
  }
}

class TtyLink implements SerialLink {
  readonly #request: OpenRequest;
  readonly #reader: Deno.ChildProcess;
  readonly #writer: Deno.ChildProcess;
  readonly #input: ReadableStreamDefaultReader<Uint8Array>;
  readonly #output: WritableStreamDefaultWriter<Uint8Array>;
  readonly #readerDone: Promise<[Deno.CommandStatus, string]>;
  readonly #writerDone: Promise<[Deno.CommandStatus, string]>;
  #closing: Promise<void> | undefined;
  #ended = false;
  /** The first failure seen on the writing side, which closes the port before the reader can tell why. */
  #why: string | undefined;

  constructor(request: OpenRequest, reader: Deno.ChildProcess, writer: Deno.ChildProcess) {
    this.#request = request;
    this.#reader = reader;
    this.#writer = writer;
    this.#input = reader.stdout.getReader();
    this.#output = writer.stdin.getWriter();
    // Standard error is drained from the start (a chatty child never blocks on it) and kept for the reason.
    const tail = (stream: ReadableStream<Uint8Array>) => readTail(stream).catch(() => "");
    this.#readerDone = Promise.all([reader.status, tail(reader.stderr)]);
    this.#writerDone = Promise.all([writer.status, tail(writer.stderr)]);
    // The writer failing (EIO on a port that went away) closes the port, so reading ends too.
    void this.#writerDone.then(([status, stderr]) => {
      if (!this.#closing) this.#why ??= reasonOf(status, stderr);
      return this.close();
    });
  }

  async read(): Promise<Uint8Array | undefined> {
    if (this.#ended) return undefined;
    try {
      const { value, done } = await this.#input.read();
      if (!done) return value;
    } catch {
      // The stream was cancelled by close(), or the pipe failed: the port is closed either way.
    }
    this.#ended = true;
    return undefined;
  }

  async write(bytes: Uint8Array): Promise<void> {
    if (this.#closing) throw new Error(`Serial port ${this.#request.name} (${this.#request.path}) is closed`);
    try {
      await this.#output.write(bytes);
    } catch (error) {
      const message = `Serial port ${this.#request.name} (${this.#request.path}) failed while writing: ${
        (error as Error).message
      }`;
      this.#why ??= message;
      void this.close();
      throw new Error(message);
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    kill(this.#reader, "SIGTERM");
    kill(this.#writer, "SIGTERM");
    // Under the same deadline as the exits: a write stuck on a full pipe ends only once its dd has gone.
    const both = Promise.all([
      this.#readerDone,
      this.#writerDone,
      Promise.allSettled([this.#output.close(), this.#input.cancel()]),
    ]);
    const limit = deadline(this.#request.clock, EXIT_WAIT_MS);
    try {
      if (!(await limit.race(both)).late) return;
    } finally {
      limit.cancel();
    }
    // A child stuck in the kernel on a dying USB device: SIGKILL, then give up waiting (it exits when the kernel lets it).
    kill(this.#reader, "SIGKILL");
    kill(this.#writer, "SIGKILL");
    const last = deadline(this.#request.clock, EXIT_WAIT_MS);
    try {
      await last.race(both);
    } finally {
      last.cancel();
    }
  }

  async closed(): Promise<string> {
    const [status, stderr] = await this.#readerDone;
    if (this.#why) return this.#why;
    if (this.#closing && status.signal) return "closed by homed";
    return reasonOf(status, stderr);
  }
}

/** Why a `dd` ended, from its last line of standard error ("error reading '/dev/ttyUSB0': Input/output error"). */
function reasonOf(status: Deno.CommandStatus, stderr: string): string {
  const why = stderr.trim().split("\n").at(-1)?.replace(/^\S*dd: /, "") ?? "";
  if (why) return why;
  return status.success ? "the port reported end of input (hung up)" : `dd exited with code ${status.code}`;
}
