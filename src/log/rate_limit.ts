/**
 * A limit on log lines that a peer can cause at will (a dropped QQ frame, an ignored QQ message): at most `lines` per
 * key in each window of `windowMs`; the lines held back are counted and reported by one summary line when the window
 * ends ("… 29990 more like this in the last 10 s"). Time comes from the injected clock.
 *
 * @module
 */

import type { Clock } from "../clock.ts";

/** Options of {@link LogLimiter}. */
export interface LogLimiterOptions {
  clock: Pick<Clock, "monotonic" | "after">;
  /** Lines written per key in one window (default 10). */
  lines?: number;
  /** Length of a window in milliseconds (default 10 s). */
  windowMs?: number;
}

/** Writes the summary of a window: `count` lines were held back in the last `seconds` seconds. */
export type LogSummary = (count: number, seconds: number) => void;

interface Window {
  start: number;
  written: number;
  held: number;
  summary: LogSummary;
  cancel: (() => void) | undefined;
}

/** Keys kept before windows that ended are swept out (keys are kinds of line, so a handful in practice). */
const SWEEP_ABOVE = 256;

/** Lines per key and window, and the summary of what was held back. */
export class LogLimiter {
  readonly lines: number;
  readonly windowMs: number;
  #clock: Pick<Clock, "monotonic" | "after">;
  #windows = new Map<string, Window>();

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const limiter = new LogLimiter({ clock: systemClock, lines: 10, windowMs: 10_000 });
   * limiter.lines; // 10
   * ```
   */
  constructor(options: LogLimiterOptions) {
    this.#clock = options.clock;
    this.lines = options.lines ?? 10;
    this.windowMs = options.windowMs ?? 10_000;
    if (!(this.lines >= 1) || !(this.windowMs > 0)) {
      throw new RangeError(`A log limit needs lines ≥ 1 and windowMs > 0, got ${this.lines} and ${this.windowMs}`);
    }
  }

  /**
   * Whether a line of kind `key` may be written now. When it may not, it is counted, and `summary` (the latest one
   * given for the key) is called once when the window ends, with the count and the window's length in seconds.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "./logging.ts";
   *
   * const logger = log("qq");
   * const limiter = new LogLimiter({ clock: systemClock });
   * const summary = (count: number, seconds: number) =>
   *   logger.warning("{count} more dropped frames like this in the last {seconds} s", { count, seconds });
   * if (limiter.allow("dropped", summary)) logger.warning("Dropped a frame that is not JSON");
   * limiter.flush(); // at stop: pending summaries are written now
   * ```
   */
  allow(key: string, summary: LogSummary): boolean {
    const now = this.#clock.monotonic();
    let window = this.#windows.get(key);
    if (window && now - window.start >= this.windowMs) {
      this.#end(key, window);
      window = undefined;
    }
    if (!window) {
      if (this.#windows.size >= SWEEP_ABOVE) this.#sweep(now);
      window = { start: now, written: 0, held: 0, summary, cancel: undefined };
      this.#windows.set(key, window);
    }
    if (window.written < this.lines) {
      window.written++;
      return true;
    }
    window.held++;
    window.summary = summary;
    if (!window.cancel) {
      const ending = window;
      ending.cancel = this.#clock.after(ending.start + this.windowMs - now, () => {
        ending.cancel = undefined;
        this.#end(key, ending);
      });
    }
    return false;
  }

  /** Lines held back so far in the current window of `key`. */
  held(key: string): number {
    return this.#windows.get(key)?.held ?? 0;
  }

  /** Writes every pending summary now and cancels the timers (call at stop). */
  flush(): void {
    for (const [key, window] of [...this.#windows]) this.#end(key, window);
  }

  #end(key: string, window: Window): void {
    window.cancel?.();
    window.cancel = undefined;
    if (this.#windows.get(key) === window) this.#windows.delete(key);
    if (window.held > 0) {
      const held = window.held;
      window.held = 0;
      window.summary(held, this.windowMs / 1000);
    }
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.held === 0 && now - window.start >= this.windowMs) this.#windows.delete(key);
    }
  }
}
