/**
 * Time as a service, so tests can drive it and the code never reads the wall clock directly.
 *
 * @module
 */

/** A source of time and delays. Production code takes one of these instead of calling `Date.now()` or `setTimeout`. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** A monotonic reading in milliseconds, for measuring durations. */
  monotonic(): number;
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

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};
