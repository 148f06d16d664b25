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

/**
 * An AbortSignal that aborts after `ms` on `clock` (with a `TimeoutError` DOMException, like `AbortSignal.timeout`),
 * and a function that disarms it.
 *
 * @example
 * ```ts
 * const deadline = deadlineSignal(systemClock, 30_000);
 * try {
 *   await fetch("http://127.0.0.1:8080/healthz", { signal: deadline.signal });
 * } finally {
 *   deadline.cancel();
 * }
 * ```
 */
export function deadlineSignal(clock: Pick<Clock, "after">, ms: number): { signal: AbortSignal; cancel: () => void } {
  const controller = new AbortController();
  const cancel = clock.after(ms, () => controller.abort(new DOMException(`Timed out after ${ms} ms`, "TimeoutError")));
  return { signal: controller.signal, cancel };
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
