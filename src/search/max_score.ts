/**
 * Exact top-k over one part of an index, with MaxScore's bounds (Turtle and Flood, 1995) in their term-at-a-time form
 * (quit and continue, Moffat and Zobel): a family member's name can match a quarter of all documents, and every
 * posting of it used to make a candidate to score. Each query term has an upper bound on what it can add to any
 * document's score, from its part's stored maxima (pairs of a weight and a norm such that every posting's weight is
 * at most one pair's weight and its document's norm at least that pair's norm): the largest `w · weight / (query norm
 * · ((1 − s) · pivot + s · norm))` of its pairs; a term without maxima has no bound (+∞). The lists are summed rarer
 * terms first (a higher query weight); before each list, when what the lists left can add together to a document not
 * met yet is below a lower bound of the pool's final bar (the `size`-th best of the pool and of the documents met at
 * their sums so far), the walk closes: the lists left only add to the documents met, and no new candidate is made.
 * The filter is asked only of a document whose score would enter the pool.
 *
 * Why it is exact: a document is left out only when an upper bound of its score (with a relative slack of 1e-5 for
 * rounding) is below a lower bound of the final bar; every document met is summed over all its terms, in float64 and
 * in one order for every part and every search (rarer terms first, then the query's order), which is the score; and
 * the pool is kept in one total order (score, then the earlier part, then the lower slot), so which of several equal
 * scores make it does not depend on the order documents are met in.
 *
 * @module
 */

import type { DocMeta, SearchOptions } from "./inverted_index.ts";
import type { IndexPart } from "./ranking.ts";

/** Rounding slack of the bounds: float64 sums of a few terms are off by far less. */
const SLACK = 1 + 1e-5;

/** One query term as ranking weighs it: its id in each part and its weight. */
export interface QueryTerm {
  ids: number[];
  weight: number;
}

/** Score, part, slot. */
export type Candidate = [number, number, number];

/**
 * The pool: the best candidates met so far, at most `size`, worst first (a sorted array: the pool is tens long).
 * Worse means a lower score, then a later part, then a higher slot.
 */
export class Pool {
  readonly size: number;
  readonly items: Candidate[] = [];

  /**
   * @example
   * ```ts
   * const pool = new Pool(2);
   * pool.offer(0.5, 0, 7);
   * pool.threshold; // -Infinity until the pool is full
   * ```
   */
  constructor(size: number) {
    this.size = size;
  }

  /** The worst score in a full pool (a candidate must reach it to enter); -∞ while it is not full. */
  get threshold(): number {
    return this.items.length < this.size ? -Infinity : this.items[0]![0];
  }

  /** Whether a candidate would enter (before any filter is asked). */
  admits(score: number, part: number, slot: number): boolean {
    if (this.items.length < this.size) return true;
    return worse(this.items[0]!, score, part, slot);
  }

  /** Puts a candidate in (when it {@link admits}), dropping the worst of a full pool. */
  offer(score: number, part: number, slot: number): void {
    if (!this.admits(score, part, slot)) return;
    const items = this.items;
    if (items.length === this.size) items.shift();
    let at = items.length;
    while (at > 0 && worse([score, part, slot], items[at - 1]![0], items[at - 1]![1], items[at - 1]![2])) at--;
    items.splice(at, 0, [score, part, slot]);
  }
}

/** Whether `a` ranks below the candidate (score, part, slot). */
function worse(a: Candidate, score: number, part: number, slot: number): boolean {
  return a[0] < score || (a[0] === score && (a[1] > part || (a[1] === part && a[2] > slot)));
}

/** What scoring a part needs besides the part. */
export interface PartScoring {
  part: number;
  terms: readonly QueryTerm[];
  queryNorm: number;
  slope: number;
  pivot: number;
  /** Per part, the slots an indexed filter allows, when it does. */
  keep: Set<number> | undefined;
  filter: SearchOptions["filter"] | undefined;
  matches: (meta: DocMeta, filter: NonNullable<SearchOptions["filter"]>) => boolean;
}

/**
 * Scores `part`'s documents into `pool`, closing the walk once MaxScore's bounds allow: the same pool as scoring
 * every posting.
 *
 * @example
 * ```ts
 * import { InvertedIndex } from "./inverted_index.ts";
 *
 * const index = new InvertedIndex();
 * index.put("a", new Map([["tom", 1]]), {});
 * const pool = new Pool(5);
 * scorePart(index.part(), pool, {
 *   part: 0, terms: [{ ids: [0], weight: 1 }], queryNorm: 1, slope: 0.75, pivot: 1,
 *   keep: undefined, filter: undefined, matches: () => true,
 * });
 * pool.items; // [[score, 0, 0]]
 * ```
 */
export function scorePart(part: IndexPart, pool: Pool, s: PartScoring): void {
  // The summing order, the same in every part: rarer terms first (a higher weight), then the query's order.
  const order = s.terms.map((term, q) => ({ ...term, q })).sort((a, b) => b.weight - a.weight || a.q - b.q);
  const lists: Array<{ termId: number; weight: number; bound: number; length: number }> = [];
  for (const { ids, weight } of order) {
    const termId = ids[s.part]!;
    if (termId < 0) continue;
    // Before any postings are read: a segment may read them to find its maxima.
    const maxima = s.slope >= 0 ? part.maxima(termId) : undefined;
    let bound = maxima ? 0 : Infinity;
    maxima?.weights.forEach((most, j) => {
      const pair = (weight * most) / (s.queryNorm * ((1 - s.slope) * s.pivot + s.slope * maxima.norms[j]!));
      if (pair > bound) bound = pair;
    });
    lists.push({ termId, weight, bound, length: part.df(termId) });
  }
  if (!lists.length) return;
  if (accumulator.length < part.slotCount) {
    accumulator = new Float64Array(part.slotCount);
    touched = new Int32Array(part.slotCount);
  }
  const acc = accumulator, met = touched, norms = part.norms(), alive = part.aliveFlags();
  const scale = (slot: number) => s.queryNorm * ((1 - s.slope) * s.pivot + s.slope * norms[slot]!);
  // `unmet[i]`: what the lists from i on can add together, to a document none of the lists before i holds.
  const unmet = lists.map(() => 0);
  for (let i = lists.length - 1; i >= 0; i--) unmet[i] = (unmet[i + 1] ?? 0) + lists[i]!.bound;
  let left = lists.reduce((sum, list) => sum + list.length, 0);
  let count = 0, open = true;
  try {
    for (let i = 0; i < lists.length; i++) {
      const list = lists[i]!;
      // Closed once no document not met yet can reach the pool: the lists left only add to the documents met. Checked
      // where the lists left are longer than the documents met (the check reads those); not under a filter function,
      // whose verdicts would have to be asked of every document met.
      if (open && i > 0 && !s.filter && unmet[i]! < Infinity && left > count) {
        if (unmet[i]! * SLACK < lowerBar(pool, acc, met, count, scale, s.keep)) open = false;
      }
      left -= list.length;
      const { slots, weights, from, to } = part.postings(list.termId);
      for (let j = from; j < to; j++) {
        const slot = slots[j]!;
        if (!alive[slot]) continue;
        const before = acc[slot]!;
        if (before === 0) {
          if (!open) continue;
          met[count++] = slot;
        }
        acc[slot] = before + list.weight * weights[j]!;
      }
    }
    for (let i = 0; i < count; i++) {
      const slot = met[i]!, score = acc[slot]! / scale(slot);
      // The filter is asked only of a document that would enter (a filter function reads metadata from disk).
      if (!pool.admits(score, s.part, slot)) continue;
      if (s.keep && !s.keep.has(slot)) continue;
      if (s.filter && !s.matches(part.meta(slot), s.filter)) continue;
      pool.offer(score, s.part, slot);
    }
  } finally {
    for (let i = 0; i < count; i++) acc[met[i]!] = 0;
  }
}

/** One search at a time (ranking is synchronous): the sums and the documents met, grown to the largest part. */
let accumulator = new Float64Array(0);
let touched = new Int32Array(0);

/**
 * A lower bound of the pool's final bar: the worst of the best `size` among the pool and the documents met, each at
 * its sum so far (which only grows); -∞ while there are not that many.
 */
function lowerBar(
  pool: Pool,
  acc: Float64Array,
  met: Int32Array,
  count: number,
  scale: (slot: number) => number,
  keep: Set<number> | undefined,
): number {
  const best = new Pool(pool.size);
  for (const item of pool.items) best.offer(item[0], item[1], item[2]);
  for (let i = 0; i < count; i++) {
    const slot = met[i]!;
    if (!keep || keep.has(slot)) best.offer(acc[slot]! / scale(slot), Infinity, slot);
  }
  return best.threshold;
}
