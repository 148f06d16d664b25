/**
 * One chip's `gpiomon`: the watched program (started again with backoff when it exits, see `watched_command.ts`),
 * its output cut into lines, and each line read as an edge of one of the chip's watched input lines. Apart from
 * `gpio_device.ts` because turning a byte stream into edges is its own job: a chunk may end mid-line or mid-character,
 * the last line may come without its line break, and text that is not an event line — a warning, or a run without a
 * line break longer than {@link MAX_LINE_CHARS} — is handed back as unparseable instead of growing a buffer.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import { WatchedCommand, type WatchedCommandStatus } from "../../process/watched_command.ts";
import { GPIO_SETTING, type LineState } from "./gpio_line.ts";
import { type GpioMonitorEvent, parseMonitorLine } from "./libgpiod_output.ts";

/** An event line is under 100 characters; a longer run without a line break is not gpiomon's. */
export const MAX_LINE_CHARS = 1_024;

/** Options of {@link ChipMonitor}. */
export interface ChipMonitorOptions {
  /** The chip, as the config names it (`gpiochip0`). */
  chip: string;
  /** The whole command: the launcher, then gpiomon's command line (`monitorArgv`). */
  argv: readonly string[];
  /** gpiomon's program, as messages name it. */
  program: string;
  /** The chip's watched input lines by offset. */
  lines: ReadonlyMap<number, LineState>;
  clock: Clock;
  logger: Logger;
  /** In [0, 1): jitter for the restarts' backoff. */
  random?: (() => number) | undefined;
  /** An event line about one of `lines`. */
  onEdge(state: LineState, event: GpioMonitorEvent): void;
  /** A line of output that is no edge of a watched line, and why. */
  onUnparseable(line: string, why: string): void;
  /** gpiomon ended (or could not start), after its last output was read. */
  onEnd(): void;
}

/** gpiomon on one chip, read as edges of its watched lines. */
export class ChipMonitor {
  readonly #options: ChipMonitorOptions;
  readonly #watched: WatchedCommand;
  #decoder = new TextDecoder();
  /** The part of a line the output has not finished yet. */
  #pending = "";

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const monitor = new ChipMonitor({
   *   chip: "gpiochip0",
   *   argv: ["gpiomon", "-b", "gpiochip0", "17"],
   *   program: "gpiomon",
   *   lines: new Map(),
   *   clock: systemClock,
   *   logger: getLogger(["homed", "gpio"]),
   *   onEdge: (state, event) => console.log(state.name, event.edge),
   *   onUnparseable: (line, why) => console.log(why, line),
   *   onEnd: () => {},
   * });
   * monitor.status().running; // false until start()
   * ```
   */
  constructor(options: ChipMonitorOptions) {
    this.#options = options;
    this.#watched = new WatchedCommand({
      argv: options.argv,
      name: options.program,
      setting: `${GPIO_SETTING} (${options.chip})`,
      clock: options.clock,
      logger: options.logger,
      onOutput: (chunk) => this.#onOutput(chunk),
      onEnd: () => this.#onEnd(),
      ...(options.random ? { random: options.random } : {}),
    });
  }

  /** Starts gpiomon (and keeps it running until {@link stop}). */
  start(): void {
    this.#watched.start();
  }

  /** Stops gpiomon for good. */
  stop(): Promise<void> {
    return this.#watched.stop();
  }

  /** gpiomon's state, as status shows it. */
  status(): WatchedCommandStatus {
    return this.#watched.status();
  }

  #onOutput(chunk: Uint8Array): void {
    this.#pending += this.#decoder.decode(chunk, { stream: true });
    let end = this.#pending.indexOf("\n");
    while (end !== -1) {
      this.#onLine(this.#pending.slice(0, end));
      this.#pending = this.#pending.slice(end + 1);
      end = this.#pending.indexOf("\n");
    }
    if (this.#pending.length > MAX_LINE_CHARS) {
      this.#options.onUnparseable(this.#pending, `longer than ${MAX_LINE_CHARS} characters`);
      this.#pending = "";
    }
  }

  #onEnd(): void {
    const rest = this.#pending + this.#decoder.decode();
    this.#pending = "";
    this.#decoder = new TextDecoder();
    if (rest.trim()) this.#onLine(rest);
    this.#options.onEnd();
  }

  #onLine(raw: string): void {
    const line = raw.replace(/\r$/, "");
    if (!line.trim()) return;
    const event = parseMonitorLine(line);
    if (!event) return this.#options.onUnparseable(line, "not a gpiomon event line");
    const state = this.#options.lines.get(event.offset);
    if (!state) return this.#options.onUnparseable(line, `about line ${event.offset}, which is not watched`);
    this.#options.onEdge(state, event);
  }
}
