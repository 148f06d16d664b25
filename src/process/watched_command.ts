/**
 * A long-running outside program a device reads from (`gpiomon`'s event lines, `arecord`'s PCM): started with the
 * device, its standard output handed over chunk by chunk, and — when it exits or cannot start — started again with
 * backoff (1 s doubling to 1 min), so an unplugged microphone or a missing tool costs that device only, logged, and
 * comes back by itself. Stopping kills it (SIGTERM, SIGKILL after 2 s).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, sleepWith } from "../clock.ts";
import { Backoff, type BackoffPolicy } from "../service/backoff.ts";
import { readTail, spawnError } from "./run_command.ts";

/** Options of {@link WatchedCommand}. */
export interface WatchedCommandOptions {
  /** The program and its arguments. */
  argv: readonly string[];
  /** The setting that names the command, for messages (`devices.microphone.command`). */
  setting: string;
  /** How messages name the program: the tool, when `argv` runs it through a launcher (`sudo`, `sh`). */
  name?: string;
  clock: Clock;
  logger: Logger;
  /** Each chunk of standard output, in order. */
  onOutput(chunk: Uint8Array): void;
  /** The program ended (or could not start): its output so far is complete. */
  onEnd?(): void;
  /** In [0, 1): jitter for the backoff. */
  random?: () => number;
}

/** What {@link WatchedCommand.status} shows. */
export interface WatchedCommandStatus {
  running: boolean;
  starts: number;
  /** Why it last ended or failed to start. */
  last_error: string | null;
  /** Milliseconds until the next start, while waiting for it. */
  restart_in_ms: number | null;
}

/** How a program that exited is started again (and `gpiomon`'s tools looked for again): 1 s doubling to 1 min, ±20 %. */
export const RESTART_BACKOFF: BackoffPolicy = Object.freeze({ minMs: 1_000, maxMs: 60_000, jitter: 0.2 });
/** A run this long counts as healthy: the next failure starts the backoff over. */
const HEALTHY_MS = 30_000;
const KILL_AFTER_MS = 2_000;

/** One watched program. */
export class WatchedCommand {
  #options: WatchedCommandOptions;
  #stopping = new AbortController();
  #child: Deno.ChildProcess | undefined;
  #loop: Promise<void> | undefined;
  #starts = 0;
  #lastError: string | null = null;
  #restartAt: number | null = null;

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../clock.ts";
   *
   * const mic = new WatchedCommand({
   *   argv: ["arecord", "-q", "-f", "S16_LE", "-r", "16000", "-c", "1", "-t", "raw"],
   *   setting: "devices.microphone.command",
   *   clock: systemClock,
   *   logger: getLogger(["homed", "mic"]),
   *   onOutput: (pcm) => console.log(pcm.length),
   * });
   * mic.start();
   * await mic.stop();
   * ```
   */
  constructor(options: WatchedCommandOptions) {
    this.#options = options;
  }

  /** Starts the program (and keeps it running) in the background; never throws. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Kills the program and waits for it to be gone. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#signal("SIGTERM");
    const child = this.#child;
    if (child) {
      const cancel = this.#options.clock.after(KILL_AFTER_MS, () => this.#signal("SIGKILL"));
      await child.status.catch(() => {});
      cancel();
    }
    await this.#loop;
  }

  status(): WatchedCommandStatus {
    return {
      running: this.#child !== undefined,
      starts: this.#starts,
      last_error: this.#lastError,
      restart_in_ms: this.#restartAt === null
        ? null
        : Math.max(0, Math.round(this.#restartAt - this.#options.clock.monotonic())),
    };
  }

  #signal(signal: Deno.Signal): void {
    try {
      this.#child?.kill(signal);
    } catch {
      // Already gone.
    }
  }

  async #run(): Promise<void> {
    const { argv, setting, clock, logger } = this.#options;
    const [executable, ...args] = argv;
    const program = this.#options.name ?? executable;
    const backoff = new Backoff(RESTART_BACKOFF, this.#options.random ?? Math.random);
    while (!this.#stopping.signal.aborted) {
      const started = clock.monotonic();
      try {
        if (!executable) throw new Error(`${setting} is empty: name a program and its arguments`);
        this.#child = new Deno.Command(executable, { args, stdin: "null", stdout: "piped", stderr: "piped" }).spawn();
        this.#starts++;
        const stderr = readTail(this.#child.stderr);
        for await (const chunk of this.#child.stdout) this.#options.onOutput(chunk);
        const status = await this.#child.status;
        const why = (await stderr).trim().split("\n").at(-1) ?? "";
        this.#lastError = `${program} exited with code ${status.code}${why ? `: ${why}` : ""}`;
      } catch (error) {
        this.#lastError = executable ? spawnError(executable, setting, error).message : (error as Error).message;
      } finally {
        this.#child = undefined;
        this.#options.onEnd?.();
      }
      if (this.#stopping.signal.aborted) return;
      if (clock.monotonic() - started >= HEALTHY_MS) backoff.reset();
      const wait = backoff.next();
      logger.warning("{setting}: {error}; starting it again in {wait} ms", { setting, error: this.#lastError, wait });
      this.#restartAt = clock.monotonic() + wait;
      try {
        await sleepWith(clock, wait, this.#stopping.signal);
      } catch {
        return; // stopped while waiting
      } finally {
        this.#restartAt = null;
      }
    }
  }
}
