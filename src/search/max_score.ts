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
import type { IndexPart, Postings } from "./ranking.ts";

/** Rounding slack of the bounds: float64 sums of a few terms are off by far less. */
const SLACK = 1 + 1e-5;

/** One query term as ranking weighs it: its id in each part and its weight. */
export interface QueryTerm {
  ids: number[];
  weight: number;
}

/**
 * Score, part, slot, and which query terms the document holds: bit `q` for the `q`-th of the terms scored (the first
 * {@link MASK_TERMS}; a query with more has no mask, -1). Supersession reads it instead of each candidate's terms.
 */
export type Candidate = [number, number, number, number];

/** Query terms a candidate's mask can tell (bits of a 32-bit integer, the sign bit left alone). */
export const MASK_TERMS = 31;

/**
 * The pool: the best candidates met so far, at most `size`, worst first (sorted: the pool is tens long). Worse means
 * a lower score, then a later part, then a higher slot. Kept in typed arrays: a search offers it thousands of
 * candidates, and an array for each was most of what a recall left to the garbage collector.
 */
export class Pool {
  #size: number;
  #scores: Float64Array;
  #parts: Int32Array;
  #slots: Int32Array;
  #masks: Int32Array;
  #length = 0;

  /**
   * @example
   * ```ts
   * const pool = new Pool(2);
   * pool.offer(0.5, 0, 7);
   * pool.threshold; // -Infinity until the pool is full
   * ```
   */
  constructor(size: number) {
    this.#size = size;
    this.#scores = new Float64Array(size);
    this.#parts = new Int32Array(size);
    this.#slots = new Int32Array(size);
    this.#masks = new Int32Array(size);
  }

  /** At most this many candidates are kept. */
  get size(): number {
    return this.#size;
  }

  /**
   * Empties the pool for a search keeping at most `size` candidates (its arrays grown when they are shorter), and
   * returns it: ranking reuses one pool, see `ranking.ts`.
   *
   * @example
   * ```ts
   * const pool = new Pool(2);
   * pool.offer(0.5, 0, 7);
   * pool.reset(3).items; // []
   * ```
   */
  reset(size: number): this {
    if (this.#scores.length < size) {
      this.#scores = new Float64Array(size);
      this.#parts = new Int32Array(size);
      this.#slots = new Int32Array(size);
      this.#masks = new Int32Array(size);
    }
    this.#size = size;
    this.#length = 0;
    return this;
  }

  /** The candidates, worst first (fresh arrays). */
  get items(): Candidate[] {
    return Array.from({ length: this.#length }, (_, i) => [
      this.#scores[i]!,
      this.#parts[i]!,
      this.#slots[i]!,
      this.#masks[i]!,
    ]);
  }

  /** The candidates' scores, worst first, as the first `count` of a reused array (valid until the next offer). */
  get scores(): { values: Float64Array; count: number } {
    return { values: this.#scores, count: this.#length };
  }

  /** The worst score in a full pool (a candidate must reach it to enter); -∞ while it is not full. */
  get threshold(): number {
    return this.#length < this.#size ? -Infinity : this.#scores[0]!;
  }

  /** Whether a candidate would enter (before any filter is asked). */
  admits(score: number, part: number, slot: number): boolean {
    if (this.#length < this.#size) return true;
    // The worst candidate ranks below the new one.
    return this.#size > 0 && this.#below(0, score, part, slot);
  }

  /** Puts a candidate in (when it {@link admits}), dropping the worst of a full pool. */
  offer(score: number, part: number, slot: number, mask = -1): void {
    if (!this.admits(score, part, slot)) return;
    const scores = this.#scores, parts = this.#parts, slots = this.#slots, masks = this.#masks;
    let n = this.#length;
    if (n === this.#size) {
      scores.copyWithin(0, 1, n);
      parts.copyWithin(0, 1, n);
      slots.copyWithin(0, 1, n);
      masks.copyWithin(0, 1, n);
      n--;
    }
    let at = n;
    while (at > 0 && !this.#below(at - 1, score, part, slot)) at--;
    scores.copyWithin(at + 1, at, n);
    parts.copyWithin(at + 1, at, n);
    slots.copyWithin(at + 1, at, n);
    masks.copyWithin(at + 1, at, n);
    scores[at] = score;
    parts[at] = part;
    slots[at] = slot;
    masks[at] = mask;
    this.#length = n + 1;
  }

  /** Whether the `i`-th candidate ranks below the candidate (score, part, slot). */
  #below(i: number, score: number, part: number, slot: number): boolean {
    const held = this.#scores[i]!;
    return held < score ||
      (held === score && (this.#parts[i]! > part || (this.#parts[i] === part && this.#slots[i]! > slot)));
  }
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
 * pool.items; // [[score, 0, 0, 1]]: score, part, slot, and the query terms it holds (bit 0: the first)
 * ```
 */
export function scorePart(part: IndexPart, pool: Pool, s: PartScoring): void {
  // The summing order, the same in every part: rarer terms first (a higher weight), then the query's order.
  // Indexes, not copies of the terms: a copy's hidden class lived only during a search, and a full garbage collection
  // between searches dropped it and deoptimized this function (see `ranking.ts`'s pool).
  const terms = s.terms;
  const order = terms.map((_, q) => q).sort((a, b) => terms[b]!.weight - terms[a]!.weight || a - b);
  const lists: Array<{ termId: number; weight: number; bound: number; length: number; bit: number }> = [];
  // Masks are kept when every term has a bit (a longer query's candidates have none: -1).
  const masked = s.terms.length <= MASK_TERMS;
  for (const q of order) {
    const { ids, weight } = terms[q]!;
    const termId = ids[s.part]!;
    if (termId < 0) continue;
    // Before any postings are read: a segment may read them to find its maxima.
    const maxima = s.slope >= 0 ? part.maxima(termId) : undefined;
    let bound = maxima ? 0 : Infinity;
    for (let j = 0; maxima && j < maxima.weights.length; j++) {
      const pair = (weight * maxima.weights[j]!) /
        (s.queryNorm * ((1 - s.slope) * s.pivot + s.slope * maxima.norms[j]!));
      if (pair > bound) bound = pair;
    }
    lists.push({ termId, weight, bound, length: part.df(termId), bit: masked ? 1 << q : 0 });
  }
  if (!lists.length) return;
  if (accumulator.length < part.slotCount) {
    accumulator = new Float64Array(part.slotCount);
    touched = new Int32Array(part.slotCount);
    held = new Int32Array(part.slotCount);
  }
  const acc = accumulator, met = touched, masks = held, norms = part.norms(), alive = part.aliveFlags();
  const queryNorm = s.queryNorm, slope = s.slope, base = (1 - s.slope) * s.pivot;
  // `unmet[i]`: what the lists from i on can add together, to a document none of the lists before i holds.
  const unmet = lists.map(() => 0);
  for (let i = lists.length - 1; i >= 0; i--) unmet[i] = (unmet[i + 1] ?? 0) + lists[i]!.bound;
  let left = lists.reduce((sum, list) => sum + list.length, 0);
  let count = 0, open = true;
  // A document's score is its sum / (queryNorm · (base + slope · norm)), written out where it is needed: a function
  // returning it boxed each number, thousands a search.
  const candidates: Candidates = { pool, part: s.part, keep: s.keep, masked, queryNorm, base, slope, norms };
  try {
    let read: Postings | undefined;
    for (let i = 0; i < lists.length; i++) {
      const list = lists[i]!;
      // Closed once no document not met yet can reach the pool: the lists left only add to the documents met. Checked
      // where the lists left are longer than the documents met (the check reads those); not under a filter function,
      // whose verdicts would have to be asked of every document met.
      if (open && i > 0 && !s.filter && unmet[i]! < Infinity && left > count) {
        if (barAbove(unmet[i]! * SLACK, acc, met, count, candidates)) open = false;
      }
      left -= list.length;
      let postings = read ?? part.postings(list.termId);
      read = undefined;
      // A twin: the next list holds the same documents (a name and its concept, 奶奶 and ~grandmother), so both are
      // summed in one walk, in the same order as two. Not the last list, nor under a filter (the paths below).
      const next = lists[i + 1];
      if (next && i + 1 < lists.length - 1 && !s.filter && next.length === list.length && list.length >= TWIN_FROM) {
        postings = kept(postings);
        read = part.postings(next.termId);
        if (sameSlots(postings, read)) {
          const second = read;
          read = undefined;
          left -= next.length;
          const bits = list.bit | next.bit;
          if (open) count = meetTwin(postings, second, list.weight, next.weight, bits, alive, acc, masks, met, count);
          else addTwinToMet(postings, second, list.weight, next.weight, bits, acc, masks);
          i++;
          continue;
        }
      }
      if (!open) addToMet(postings, list.weight, list.bit, acc, masks);
      // The last list, open: each of its documents has its whole sum here, so it is scored at once rather than met
      // and scored after (a family member's name is in 40,000 documents of a year: the second pass was half the
      // search). Not under a filter, which would read metadata into the buffer these postings are in.
      else if (i === lists.length - 1 && !s.filter) {
        scoreLast(postings, list.weight, list.bit, alive, acc, masks, candidates);
      } else count = meet(postings, list.weight, list.bit, alive, acc, masks, met, count);
    }
    scoreMet(acc, masks, met, count, candidates, s.filter && ((slot) => s.matches(part.meta(slot), s.filter!)));
  } finally {
    clearMet(acc, masks, met, count);
  }
}

/** Lists shorter than this are never checked for a twin (comparing them would cost what summing them does). */
const TWIN_FROM = 1024;

/** A copy of `postings` in a reused buffer (a segment reads each list into one buffer: the next read overwrites it). */
function kept({ slots, weights, from, to }: Postings): Postings {
  if (keptSlots.length < to - from) {
    keptSlots = new Int32Array(2 * (to - from));
    keptWeights = new Float32Array(2 * (to - from));
  }
  keptSlots.set(slots.subarray(from, to));
  keptWeights.set(weights.subarray(from, to));
  return { slots: keptSlots, weights: keptWeights, from: 0, to: to - from };
}
let keptSlots = new Int32Array(0);
let keptWeights = new Float32Array(0);

/** Whether two lists hold the same slots, in the same order. */
function sameSlots(a: Postings, b: Postings): boolean {
  if (a.to - a.from !== b.to - b.from) return false;
  for (let i = 0; i < a.to - a.from; i++) if (a.slots[a.from + i] !== b.slots[b.from + i]) return false;
  return true;
}

/** {@link meet} for twin lists: each document's sum takes the first list's term, then the second's. */
function meetTwin(
  a: Postings,
  b: Postings,
  weightA: number,
  weightB: number,
  bits: number,
  alive: Uint8Array,
  acc: Float64Array,
  masks: Int32Array,
  met: Int32Array,
  count: number,
): number {
  const slots = a.slots, weightsA = a.weights, weightsB = b.weights, shift = b.from - a.from;
  for (let j = a.from; j < a.to; j++) {
    const slot = slots[j]!;
    if (!alive[slot]) continue;
    const before = acc[slot]!;
    if (before === 0) met[count++] = slot;
    acc[slot] = before + weightA * weightsA[j]! + weightB * weightsB[j + shift]!;
    masks[slot] = masks[slot]! | bits;
  }
  return count;
}

/** {@link addToMet} for twin lists. */
function addTwinToMet(
  a: Postings,
  b: Postings,
  weightA: number,
  weightB: number,
  bits: number,
  acc: Float64Array,
  masks: Int32Array,
): void {
  const slots = a.slots, weightsA = a.weights, weightsB = b.weights, shift = b.from - a.from;
  for (let j = a.from; j < a.to; j++) {
    const slot = slots[j]!;
    const before = acc[slot]!;
    if (before === 0) continue;
    acc[slot] = before + weightA * weightsA[j]! + weightB * weightsB[j + shift]!;
    masks[slot] = masks[slot]! | bits;
  }
}

// The loops over postings are functions of their own, of typed arrays and numbers: inside the search's one function
// they were deoptimized whenever its other parts changed (another index's part, a garbage collection), and ran
// unoptimized meanwhile, boxing a number per posting.

/** Adds a list to the documents it holds, meeting those not met yet; returns how many are met now. */
function meet(
  { slots, weights, from, to }: Postings,
  weight: number,
  bit: number,
  alive: Uint8Array,
  acc: Float64Array,
  masks: Int32Array,
  met: Int32Array,
  count: number,
): number {
  for (let j = from; j < to; j++) {
    const slot = slots[j]!;
    if (!alive[slot]) continue;
    const before = acc[slot]!;
    if (before === 0) met[count++] = slot;
    acc[slot] = before + weight * weights[j]!;
    masks[slot] = masks[slot]! | bit;
  }
  return count;
}

/** Adds a list to the documents met only (the walk is closed; a deleted document never was met). */
function addToMet(
  { slots, weights, from, to }: Postings,
  weight: number,
  bit: number,
  acc: Float64Array,
  masks: Int32Array,
): void {
  for (let j = from; j < to; j++) {
    const slot = slots[j]!;
    const before = acc[slot]!;
    if (before === 0) continue;
    acc[slot] = before + weight * weights[j]!;
    masks[slot] = masks[slot]! | bit;
  }
}

/**
 * Offers the documents met to the pool at their whole sums (one scored with the last list is skipped); `allows`, the
 * filter, is asked only of a document that would enter (a filter function reads metadata from disk).
 */
function scoreMet(
  acc: Float64Array,
  masks: Int32Array,
  met: Int32Array,
  count: number,
  { pool, part, keep, masked, queryNorm, base, slope, norms }: Candidates,
  allows: ((slot: number) => boolean) | undefined,
): void {
  let threshold = pool.threshold;
  for (let i = 0; i < count; i++) {
    const slot = met[i]!, sum = acc[slot]!;
    if (sum < 0) continue; // scored with the last list
    const score = sum / (queryNorm * (base + slope * norms[slot]!));
    if (score < threshold || !pool.admits(score, part, slot)) continue;
    if (keep && !keep.has(slot)) continue;
    if (allows && !allows(slot)) continue;
    pool.offer(score, part, slot, masked ? masks[slot]! : -1);
    threshold = pool.threshold;
  }
}

/** Clears the sums and masks of the documents met, for the next search. */
function clearMet(acc: Float64Array, masks: Int32Array, met: Int32Array, count: number): void {
  for (let i = 0; i < count; i++) acc[met[i]!] = masks[met[i]!] = 0;
}

/** The pool, and what a document's score and admission are figured with ({@link scoreLast}, {@link barAbove}). */
interface Candidates {
  pool: Pool;
  part: number;
  keep: Set<number> | undefined;
  masked: boolean;
  queryNorm: number;
  base: number;
  slope: number;
  norms: Float32Array;
}

/**
 * Scores the documents of the last list at their whole sums and offers them to the pool; one met before is marked
 * scored (its sum negated) for the loop over the documents met, which clears it with the rest.
 */
function scoreLast(
  { slots, weights, from, to }: Postings,
  weight: number,
  bit: number,
  alive: Uint8Array,
  acc: Float64Array,
  masks: Int32Array,
  { pool, part, keep, masked, queryNorm, base, slope, norms }: Candidates,
): void {
  let threshold = pool.threshold;
  for (let j = from; j < to; j++) {
    const slot = slots[j]!;
    if (!alive[slot]) continue;
    const before = acc[slot]!, sum = before + weight * weights[j]!;
    if (before !== 0) acc[slot] = -sum;
    const score = sum / (queryNorm * (base + slope * norms[slot]!));
    if (score < threshold || !pool.admits(score, part, slot)) continue;
    if (keep && !keep.has(slot)) continue;
    pool.offer(score, part, slot, masked ? masks[slot]! | bit : -1);
    threshold = pool.threshold;
  }
}

/** One search at a time (ranking is synchronous): the sums and the documents met, grown to the largest part. */
let accumulator = new Float64Array(0);
let touched = new Int32Array(0);
/** Per document met, the bits of the query terms whose lists held it (see {@link Candidate}). */
let held = new Int32Array(0);

/**
 * Whether a lower bound of the pool's final bar is above `bound`: whether at least the pool's size of the scores of
 * the pool and of the documents met, each at its sum so far (which only grows), are above it — the `size`-th best is
 * then above it, and so is the final bar. Counted, not ranked: the count stops once it reaches the pool's size (the
 * check that closes the walk reads a few hundred documents, not every one met).
 */
function barAbove(
  bound: number,
  acc: Float64Array,
  met: Int32Array,
  count: number,
  { pool, keep, queryNorm, base, slope, norms }: Candidates,
): boolean {
  const size = pool.size;
  if (size === 0) return false;
  const { values, count: pooled } = pool.scores;
  let above = 0;
  for (let i = 0; i < pooled; i++) if (values[i]! > bound && ++above === size) return true;
  for (let i = 0; i < count; i++) {
    const slot = met[i]!;
    if (keep && !keep.has(slot)) continue;
    if (acc[slot]! / (queryNorm * (base + slope * norms[slot]!)) > bound && ++above === size) return true;
  }
  return false;
}
