/**
 * Running an outside program for a device (a camera's `ffmpeg`, `gpioset`, the speaker's `aplay`): one call with its
 * input, a deadline after which the program is killed, and a cap on what it may print — so a hung or chatty tool
 * never holds homed. Failures are one error type whose message names the program and what to do.
 *
 * @module
 */

import { type Clock, deadline } from "../clock.ts";
import { concatBytes } from "../text/concat_bytes.ts";

/** Why a program did not give what was asked. */
export type CommandErrorCode = "missing" | "denied" | "timeout" | "failed" | "too_big";

/** A program could not be run, or did not finish well; the message names it. */
export class CommandError extends Error {
  readonly code: CommandErrorCode;

  /**
   * @example
   * ```ts
   * throw new CommandError("missing", "ffmpeg is not installed (not found on PATH); install it or set devices.camera.command");
   * ```
   */
  constructor(code: CommandErrorCode, message: string) {
    super(message);
    this.name = "CommandError";
    this.code = code;
  }
}

/** Options of {@link runCommand}. */
export interface RunCommandOptions {
  /** The program and its arguments. */
  argv: readonly string[];
  /** Bytes written to its standard input, which is then closed. */
  stdin?: Uint8Array;
  /** The program is killed (SIGKILL) when it has not exited by then. */
  timeoutMs: number;
  /** Most bytes of standard output kept; more kills the program. */
  maxOutputBytes: number;
  clock: Clock;
  /** The setting that names the command, for messages (`devices.camera.command`). */
  setting: string;
  /** How messages name the program: the tool, when `argv` runs it through a launcher (`sudo`, `sh`). */
  name?: string;
  signal?: AbortSignal;
}

/** What a program that exited with 0 printed. */
export interface CommandOutput {
  stdout: Uint8Array;
  /** The end of its standard error (at most 2,000 characters), for logs. */
  stderr: string;
}

/**
 * Runs `argv` once; resolves when it exited with 0, else throws {@link CommandError}.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 *
 * const { stdout } = await runCommand({
 *   argv: ["ffmpeg", "-loglevel", "error", "-f", "v4l2", "-i", "/dev/video0", "-frames:v", "1", "-f", "image2", "-"],
 *   timeoutMs: 10_000,
 *   maxOutputBytes: 10_485_760,
 *   clock: systemClock,
 *   setting: "devices.camera.command",
 * });
 * ```
 */
export async function runCommand(options: RunCommandOptions): Promise<CommandOutput> {
  const [executable, ...args] = options.argv;
  if (!executable) throw new CommandError("failed", `${options.setting} is empty: name a program and its arguments`);
  const program = options.name ?? executable;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(executable, {
      args,
      stdin: options.stdin ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    throw spawnError(executable, options.setting, error);
  }
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  };
  const timer = deadline(options.clock, options.timeoutMs);
  const onAbort = () => kill();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let tooBig = false;
  const writing = options.stdin ? writeAll(child.stdin, options.stdin) : Promise.resolve();
  const reading = readCapped(child.stdout, options.maxOutputBytes, () => {
    tooBig = true;
    kill();
  });
  const errors = readTail(child.stderr);
  try {
    const raced = await timer.race(Promise.all([child.status, reading, errors, writing.catch(() => {})]));
    if (raced.late) {
      kill();
      await Promise.allSettled([child.status, reading, errors]);
      throw new CommandError(
        "timeout",
        `${program} did not finish within ${options.timeoutMs} ms and was stopped (${options.setting})`,
      );
    }
    const [status, stdout, stderr] = raced.value;
    if (tooBig) {
      throw new CommandError(
        "too_big",
        `${program} printed more than ${options.maxOutputBytes} bytes and was stopped (${options.setting})`,
      );
    }
    if (options.signal?.aborted) throw options.signal.reason;
    if (!status.success) {
      const why = stderr.trim().split("\n").at(-1) ?? "";
      throw new CommandError(
        "failed",
        `${program} failed (exit code ${status.code}${why ? `: ${why}` : ""}); check ${options.setting}`,
      );
    }
    return { stdout, stderr };
  } finally {
    timer.cancel();
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * A spawn failure as the error a user can act on: not installed, or not allowed by homed's rights.
 *
 * @example
 * ```ts
 * spawnError("gpiomon", "devices.gpio", new Deno.errors.NotFound("gpiomon")).code; // "missing"
 * ```
 */
export function spawnError(program: string, setting: string, error: unknown): CommandError {
  if (error instanceof Deno.errors.NotFound) {
    return new CommandError(
      "missing",
      `${program} is not installed (not found on PATH); install it or change ${setting}`,
    );
  }
  if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
    return new CommandError(
      "denied",
      `homed may not run ${program} (${(error as Error).message}); start homed with the flags \`homed flags\` prints`,
    );
  }
  return new CommandError("failed", `${program} could not be started: ${(error as Error).message}`);
}

async function writeAll(stream: WritableStream<Uint8Array>, bytes: Uint8Array): Promise<void> {
  const writer = stream.getWriter();
  try {
    await writer.write(bytes);
  } finally {
    await writer.close().catch(() => {});
  }
}

/** Reads a stream whole up to `max` bytes; past that, calls `over` once and keeps draining (discarding). */
async function readCapped(stream: ReadableStream<Uint8Array>, max: number, over: () => void): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let overflowed = false;
  for await (const chunk of stream) {
    if (overflowed) continue;
    if (size + chunk.length > max) {
      overflowed = true;
      over();
      continue;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return concatBytes(chunks);
}

/**
 * The last 2,000 characters of a stream, as text: what a tool said before it failed, for the message.
 *
 * @example
 * ```ts
 * const child = new Deno.Command("ls", { args: ["/nowhere"], stderr: "piped" }).spawn();
 * await readTail(child.stderr); // "ls: cannot access '/nowhere': No such file or directory\n"
 * ```
 */
export async function readTail(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let tail = "";
  for await (const chunk of stream) tail = (tail + decoder.decode(chunk, { stream: true })).slice(-2_000);
  return tail;
}
