/**
 * The idle timeout of one HTTP attempt (`llm.timeout`): it bounds the wait for the answer's headers and the gap
 * between two streamed pieces, not the whole answer — a long answer that keeps arriving is bounded by the turn
 * deadline instead.
 *
 * @module
 */

import type { Clock } from "../clock.ts";

/**
 * Aborts when nothing arrived for `ms` on the injected clock. `touch()` only records the time (it runs on every
 * streamed piece); the one timer re-arms itself for the remainder when it fires early.
 */
export class IdleTimeout {
  readonly controller = new AbortController();
  fired = false;
  #cancel: () => void = () => {};
  #last: number;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const idle = new IdleTimeout(30_000, systemClock);
   * const response = await fetch("https://api.deepseek.com/v1/models", { signal: idle.controller.signal });
   * idle.touch(); // on every streamed piece
   * idle.clear(); // when the answer is complete
   * idle.fired; // false
   * ```
   */
  constructor(private readonly ms: number, private readonly clock: Clock) {
    this.#last = clock.monotonic();
    this.#arm(ms);
  }

  #arm(delay: number): void {
    this.#cancel = this.clock.after(delay, () => {
      const idle = this.clock.monotonic() - this.#last;
      if (idle < this.ms) return this.#arm(this.ms - idle);
      this.fired = true;
      this.controller.abort(new Error("timeout"));
    });
  }

  /** Something arrived: the next wait is measured from now. */
  touch(): void {
    this.#last = this.clock.monotonic();
  }

  /** Stops the timer; the signal then never aborts for idleness. */
  clear(): void {
    this.#cancel();
  }
}
