/**
 * The default pause of a store's long work (opening a segment, a compaction): a turn of the event loop — a zero-delay
 * timer — once some milliseconds have passed since the last one, else nothing. A timer per slice made opening a 100k
 * store three times slower, and no slice is long, so most pauses cost nothing.
 *
 * @module
 */

/**
 * A pause that yields to the event loop only once `ms` have passed since it last did (counted from its making).
 *
 * @example
 * ```ts
 * const pause = yieldEvery(8);
 * for (let i = 0; i < 1_000_000; i++) if (i % 1024 === 0) await pause();
 * ```
 */
export function yieldEvery(ms: number): () => Promise<void> {
  let last = performance.now();
  return (): Promise<void> => {
    if (performance.now() - last < ms) return Promise.resolve();
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        last = performance.now();
        resolve();
      }, 0)
    );
  };
}
