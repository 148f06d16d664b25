/**
 * A clock for tests: time stands still unless moved, and every sleep is recorded and returns at once.
 *
 * @module
 */

import type { Clock } from "../../src/clock.ts";

/** Records sleeps; `now()` advances only by the sleeps and {@link FakeClock.advance}. */
export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  #now: number;

  constructor(start = Date.UTC(2026, 10, 30, 9)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#now;
  }

  advance(ms: number): void {
    this.#now += ms;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    this.#now += ms;
    return Promise.resolve();
  }
}
