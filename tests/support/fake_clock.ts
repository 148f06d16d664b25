/**
 * A virtual-time clock for tests. Time moves only when a test says so ({@link FakeClock.advance}) or when code
 * sleeps: a sleep of `ms` moves time forward by `ms` at once and fires every timer that falls due on the way (a
 * retry's backoff takes no real time). Timers (`after`) never fire on their own, so a deadline in flight waits for the
 * test to advance.
 *
 * @module
 */

import type { Clock } from "../../src/clock.ts";

interface Timer {
  due: number;
  seq: number;
  callback: () => void;
}

/** Options of {@link FakeClock}. */
export interface FakeClockOptions {
  /** Start time (ms since the epoch). */
  start?: number;
}

/** Virtual time; every sleep is recorded in {@link FakeClock.sleeps}. */
export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  #now: number;
  #timers: Timer[] = [];
  #seq = 0;
  #waiters: Array<() => void> = [];

  constructor(options: FakeClockOptions | number = {}) {
    const opts = typeof options === "number" ? { start: options } : options;
    this.#now = opts.start ?? Date.UTC(2026, 10, 30, 9);
  }

  now(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#now;
  }

  /** Timers armed and not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  after(ms: number, callback: () => void): () => void {
    const timer = { due: this.#now + Math.max(0, ms), seq: this.#seq++, callback };
    this.#timers.push(timer);
    for (const wake of this.#waiters.splice(0)) wake();
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /** Moves time forward by `ms`, firing due timers in order (each sees `now()` at its due time). */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const next = this.#timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.due);
      next.callback();
    }
    this.#now = target;
  }

  /** Resolves once at least `count` timers are armed (e.g. a request's idle timeout), so a test can then advance. */
  async timersArmed(count = 1, limitMs = 5_000): Promise<void> {
    const started = performance.now();
    while (this.#timers.length < count) {
      if (performance.now() - started > limitMs) {
        throw new Error(`FakeClock: waited ${limitMs} ms for ${count} armed timer(s); ${this.#timers.length} armed`);
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters = this.#waiters.filter((w) => w !== wake);
          resolve();
        };
        const timer = setTimeout(wake, 10);
        this.#waiters.push(wake);
      });
    }
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    this.advance(ms);
    return Promise.resolve();
  }
}
