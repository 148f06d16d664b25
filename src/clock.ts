/**
 * Time as a service, so tests can drive it and the code never reads the wall clock directly.
 *
 * @module
 */

/** A source of time, delays and timers. Production code takes one of these instead of `Date.now()` or `setTimeout`. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** A monotonic reading in milliseconds, for measuring durations. */
  monotonic(): number;
  /**
   * Calls `callback` once after `ms` milliseconds; returns a function that cancels it. Deadlines (idle and turn
   * timeouts, send and tool timeouts, job schedules) are built on this.
   *
   * @example
   * ```ts
   * const controller = new AbortController();
   * const cancel = systemClock.after(30_000, () => controller.abort());
   * cancel(); // the timer never fires
   * ```
   */
  after(ms: number, callback: () => void): () => void;
  /**
   * Waits `ms` milliseconds, or rejects with the signal's reason when it aborts first.
   *
   * @example
   * ```ts
   * await systemClock.sleep(10);
   * ```
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * A sleep built on {@link Clock.after}, for clocks that implement only timers.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * await sleepWith(systemClock, 500, controller.signal);
 * ```
 */
export function sleepWith(clock: Pick<Clock, "after">, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = clock.after(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** What a deadline's race gives: the work's value, or `late` when the time ran out first. */
export type Raced<T> = { late: false; value: T } | { late: true };

/** One deadline on a clock, shared by the waits under it (see {@link deadline}). */
export interface Deadline {
  /** Waits for `work` until the deadline; the work itself goes on after a `late`. A rejection passes through. */
  race<T>(work: Promise<T>): Promise<Raced<T>>;
  /** Disarms the timer (always call it, in a `finally`). */
  cancel(): void;
}

/**
 * A deadline `ms` from now on `clock`, for one or several waits in a row that share it.
 *
 * @example
 * ```ts
 * const limit = deadline(systemClock, 5_000);
 * try {
 *   const raced = await limit.race(fetch("http://127.0.0.1:8080/healthz"));
 *   if (raced.late) console.log("no answer within 5 s");
 * } finally {
 *   limit.cancel();
 * }
 * ```
 */
export function deadline(clock: Pick<Clock, "after">, ms: number): Deadline {
  let cancel = () => {};
  const late = new Promise<{ late: true }>((resolve) => (cancel = clock.after(ms, () => resolve({ late: true }))));
  return {
    race: <T>(work: Promise<T>) => Promise.race([work.then((value): Raced<T> => ({ late: false, value })), late]),
    cancel: () => cancel(),
  };
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  after(ms, callback) {
    const timer = setTimeout(callback, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
  sleep(ms, signal) {
    return sleepWith(systemClock, ms, signal);
  },
};
