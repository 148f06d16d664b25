/**
 * A seeded random source (mulberry32) for generated evaluation sets: the same seed gives the same set.
 *
 * @module
 */

/** Draws from a seeded stream. */
export interface SeededRandom {
  /** A number in [0, 1). */
  next(): number;
  /** One of `items`. */
  pick<T>(items: readonly T[]): T;
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number;
}

/**
 * A seeded stream.
 *
 * @example
 * ```ts
 * const random = seededRandom(20261130);
 * random.pick(["a", "b"]); // always the same for this seed
 * ```
 */
export function seededRandom(seed: number): SeededRandom {
  const next = () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
  };
}
