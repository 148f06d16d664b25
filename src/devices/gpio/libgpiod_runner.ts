/**
 * Running libgpiod's programs for the GPIO device: which syntax they speak, asked once of `gpiomon --version` (and,
 * after a failed start, asked again with backoff, so tools installed later are found without a restart), and each
 * `gpioget` or `gpioset` under a deadline. Apart from `gpio_device.ts` because the device should read as
 * lines and edges, not as process handling. A missing tool costs the GPIO device only: each failure is handed to the
 * device (its status counts it) with a message naming the program and, for a missing one, the package to install.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, sleepWith } from "../../clock.ts";
import { CommandError, runCommand } from "../../process/run_command.ts";
import { RESTART_BACKOFF } from "../../process/watched_command.ts";
import { Backoff } from "../../service/backoff.ts";
import { GPIO_SETTING } from "./gpio_line.ts";
import type { GpioVersion } from "./libgpiod_commands.ts";
import { parseGpioVersion } from "./libgpiod_output.ts";

/** `--version` answers at once; a tool that hangs on it is not one to wait for at start. */
export const DETECT_TIMEOUT_MS = 3_000;
/** gpioget prints a digit per line, `--version` five short lines: anything longer is not the tool. */
const MAX_OUTPUT_BYTES = 4_096;

/** Options of {@link LibgpiodRunner}. */
export interface LibgpiodRunnerOptions {
  /** gpiomon's program, asked for the version. */
  monitor: string;
  /** A program the tools are run through, with its arguments (see `GpioDeviceOptions.launcher`). */
  launcher: readonly string[];
  /** Deadline of one `gpioget` or `gpioset`. */
  commandTimeoutMs: number;
  clock: Clock;
  logger: Logger;
  /** In [0, 1): jitter for the retries' backoff. */
  random?: (() => number) | undefined;
  /** The running device's signal, which stops a detection; undefined while the device is not running. */
  signal: () => AbortSignal | undefined;
  /** Counts a failure (with its message) in the device's status. */
  onFail: (message: string) => void;
}

/** libgpiod's programs as the GPIO device runs them: the version detection and the one-shot commands. */
export class LibgpiodRunner {
  readonly #options: LibgpiodRunnerOptions;
  #version: GpioVersion | null = null;
  #libgpiod: string | null = null;
  #detecting: Promise<GpioVersion> | undefined;
  #detectError: string | null = null;
  #retryAt: number | null = null;

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const runner = new LibgpiodRunner({
   *   monitor: "gpiomon",
   *   launcher: [],
   *   commandTimeoutMs: 5_000,
   *   clock: systemClock,
   *   logger: getLogger(["homed", "gpio"]),
   *   signal: () => undefined,
   *   onFail: () => {},
   * });
   * runner.version; // null until detect() found the tools
   * ```
   */
  constructor(options: LibgpiodRunnerOptions) {
    this.#options = options;
  }

  /** The syntax the tools speak, once detected. */
  get version(): GpioVersion | null {
    return this.#version;
  }

  /** libgpiod's release as the tools printed it (`1.6.3`), once detected. */
  get libgpiod(): string | null {
    return this.#libgpiod;
  }

  /** Why the last detection failed, until one succeeds. */
  get detectError(): string | null {
    return this.#detectError;
  }

  /** When the next retry of the detection is due (clock monotonic ms), while one waits. */
  get retryAt(): number | null {
    return this.#retryAt;
  }

  /**
   * The tools' version, asked once (one detection at a time, shared by its waiters, so stopped only by the device's
   * stop); throws a message naming the tool and the fix.
   */
  detect(): Promise<GpioVersion> {
    if (this.#version) return Promise.resolve(this.#version);
    const signal = this.#options.signal() ?? new AbortController().signal;
    this.#detecting ??= this.#askVersion(signal).finally(() => (this.#detecting = undefined));
    return this.#detecting;
  }

  /**
   * After a failed detection at start: tries again with backoff until the tools are there or `signal` stops it.
   * False when stopped while waiting; true otherwise, and the caller goes on to watch.
   */
  async retry(signal: AbortSignal): Promise<boolean> {
    const { clock, logger } = this.#options;
    const backoff = new Backoff(RESTART_BACKOFF, this.#options.random ?? Math.random);
    while (!signal.aborted && !this.#version) {
      const wait = backoff.next();
      logger.warning("{setting}: {error}; trying again in {wait} ms", {
        setting: GPIO_SETTING,
        error: this.#detectError,
        wait,
      });
      this.#retryAt = clock.monotonic() + wait;
      try {
        await sleepWith(clock, wait, signal);
      } catch {
        return false; // stopped while waiting
      } finally {
        this.#retryAt = null;
      }
      await this.detect().catch(() => {});
    }
    return true;
  }

  /**
   * Runs one gpioget or gpioset (through the launcher) under the deadline and gives its output; a failure is counted
   * and its message names the program. `name`: the line, named in the setting the failure points at.
   */
  async run(argv: string[], name: string | null, signal: AbortSignal): Promise<string> {
    try {
      const { stdout } = await runCommand({
        argv: [...this.#options.launcher, ...argv],
        name: argv[0]!,
        timeoutMs: this.#options.commandTimeoutMs,
        maxOutputBytes: MAX_OUTPUT_BYTES,
        clock: this.#options.clock,
        setting: name === null ? GPIO_SETTING : `${GPIO_SETTING}.${name}`,
        signal,
      });
      return new TextDecoder().decode(stdout);
    } catch (error) {
      const message = describeError(error);
      this.#options.onFail(message);
      throw error instanceof CommandError ? new CommandError(error.code, message) : new Error(message);
    }
  }

  async #askVersion(signal: AbortSignal): Promise<GpioVersion> {
    const program = this.#options.monitor;
    let text: string;
    try {
      const { stdout } = await runCommand({
        argv: [...this.#options.launcher, program, "--version"],
        name: program,
        timeoutMs: DETECT_TIMEOUT_MS,
        maxOutputBytes: MAX_OUTPUT_BYTES,
        clock: this.#options.clock,
        setting: GPIO_SETTING,
        signal,
      });
      text = new TextDecoder().decode(stdout);
    } catch (error) {
      throw this.#detectFailed(describeError(error));
    }
    const version = parseGpioVersion(text);
    if (!version) {
      throw this.#detectFailed(
        `${GPIO_SETTING}: "${program} --version" printed ${JSON.stringify(text.trim().split("\n")[0] ?? "")}, not ` +
          `libgpiod's "gpiomon (libgpiod) v1.x" or "v2.x"; install libgpiod's tools (Debian: apt install gpiod)`,
      );
    }
    this.#version = version;
    this.#libgpiod = /\(libgpiod\)\s+v(\S+)/.exec(text)?.[1] ?? null;
    this.#detectError = null;
    this.#options.logger.info("GPIO through libgpiod {libgpiod} ({version} syntax)", {
      libgpiod: this.#libgpiod,
      version,
    });
    return version;
  }

  #detectFailed(message: string): Error {
    this.#detectError = message;
    this.#options.onFail(message);
    return new Error(message);
  }
}

/** A command's failure as a message for the user; a missing tool says which package has it. */
function describeError(error: unknown): string {
  if (error instanceof CommandError && error.code === "missing") {
    return `${error.message} (libgpiod's tools; Debian: apt install gpiod)`;
  }
  return error instanceof Error ? error.message : String(error);
}
