/**
 * Ranking over the parts of an index: the scoring of {@link InvertedIndex} (see its module) for an index whose
 * documents live in several parts — a segment on disk and the documents written since, in memory — with document
 * frequencies, the document count and the mean norm taken over all of them, so a document scores exactly as it would
 * in one index holding everything.
 *
 * @module
 */

import type { DocMeta, Hit, ScoringOptions, SearchOptions } from "./inverted_index.ts";
import { type Candidate, Pool, scorePart } from "./max_score.ts";

/**
 * Marks a filter term: a document's metadata value of a key its store filters by (`=guest\u0000visitor`), indexed
 * like a term so an equality filter reads one posting list instead of every candidate's metadata. Such terms count
 * in no norm and match no query (the tokenizer never makes a term with this character: it splits on punctuation).
 */
export const FILTER_FIELD = "=";

/**
 * The filter term of `key` = `value`.
 *
 * @example
 * ```ts
 * filterTerm("guest", "visitor"); // "=guest\u0000visitor"
 * ```
 */
export function filterTerm(key: string, value: string | number | boolean): string {
  return `${FILTER_FIELD}${key}\u0000${String(value)}`;
}

/** A term's postings: slots and weights at `[from, to)` of the two arrays (which the next call may reuse). */
export interface Postings {
  slots: Int32Array;
  weights: Float32Array;
  from: number;
  to: number;
}

/** One part of an index, as the ranking reads it. Slots are the part's own; term ids too. */
export interface IndexPart {
  /** Slots in use, deleted ones included. */
  readonly slotCount: number;
  /** Live documents. */
  readonly live: number;
  /** The sum of the live documents' norms. */
  readonly normSum: number;
  /** 1 for a live slot (the array may be replaced when the part grows: read it once per search). */
  aliveFlags(): Uint8Array;
  /** Each slot's norm (as `aliveFlags`). */
  norms(): Float32Array;
  /** The term's id in this part, or -1. */
  termId(term: string): number;
  /** Live documents holding the term. */
  df(termId: number): number;
  /** A concept token (`~light`), weighted by `conceptWeight`. */
  concept(termId: number): boolean;
  /** A term outside the norms: the context field's or a filter term. */
  unnormed(termId: number): boolean;
  postings(termId: number): Postings;
  /** The term itself. */
  termText(termId: number): string;
  id(slot: number): string;
  meta(slot: number): DocMeta;
  /** The slot's term ids and weights (shared with other callers: read them, never change them). */
  docTerms(slot: number): { termIds: Int32Array; weights: Float32Array };
  /**
   * Bounds holding for every posting of the term (live or deleted) — what MaxScore prunes by (`max_score.ts`);
   * undefined when the part keeps none for the term (its postings are then always walked).
   */
  maxima(termId: number): TermMaxima | undefined;
}

/**
 * Pairs bounding a term's postings: every posting's weight is at most `weights[j]` and its document's norm at least
 * `norms[j]`, for some `j` (one pair per weight a term mostly has — tf 1, 2 — keeps the bound close to the truth).
 */
export interface TermMaxima {
  weights: readonly number[];
  norms: readonly number[];
}

/**
 * The pool of every search (ranking is synchronous; its candidates are copied out before the next). One pool for the
 * process rather than one a search, so that one is always alive: with none alive between two searches, a full garbage
 * collection dropped the pool's hidden class, which deoptimized the code V8 had optimized for it — the pool's methods
 * and MaxScore's loops (`max_score.ts`) — and the first searches after each such collection ran unoptimized: a year's
 * recalls took 2–6 ms instead of 1 until they were compiled again.
 */
const POOL = new Pool(0);

/**
 * The search options ranking takes, and the metadata keys whose equality filters are indexed as filter terms (or
 * given apart, see {@link rank}).
 */
export type RankOptions = SearchOptions & { indexedKeys?: ReadonlySet<string> };

/**
 * Top-k documents by score across `parts` (documents are in exactly one part; ties go to the earlier part, then the
 * lower slot). The pool of candidates (`pool`, or `k`) is found with MaxScore (`max_score.ts`): exactly the pool
 * scoring every posting would keep, without scoring the documents that cannot enter it.
 *
 * @example
 * ```ts
 * import { InvertedIndex } from "./inverted_index.ts";
 *
 * const index = new InvertedIndex();
 * index.put("note-1", new Map([["客厅", 1]]), { time: 1 });
 * rank([index.part()], new Map([["客厅", 1]]), { k: 5 }, index.scoring); // [{ id: "note-1", … }]
 * ```
 *
 * `indexedKeys` (default: the options') are given apart by a caller passing its own caller's options on: a copy
 * with them added has a hidden class that lives only during a search, and a full garbage collection between two
 * searches dropped it and deoptimized the code reading the options.
 */
export function rank(
  parts: readonly IndexPart[],
  query: ReadonlyMap<string, number>,
  options: RankOptions,
  scoring: ScoringOptions,
  indexedKeys: ReadonlySet<string> | undefined = options.indexedKeys,
): Hit[] {
  const k = options.k ?? 10;
  let n = 0;
  for (const part of parts) n += part.live;
  if (n === 0 || k <= 0) return [];
  // Per query term: its id in each part and its weight.
  const weights: Array<{ ids: number[]; weight: number; term: string }> = [];
  let queryNorm = 0;
  let queryNormAll = 0;
  for (const [term, tf] of query) {
    if (tf <= 0) continue;
    const ids = parts.map((part) => part.termId(term));
    let df = 0;
    ids.forEach((id, i) => df += id < 0 ? 0 : parts[i]!.df(id));
    if (df <= 0) continue;
    const first = ids.findIndex((id) => id >= 0);
    const part = parts[first]!, termId = ids[first]!;
    let weight = (1 + Math.log(tf)) * Math.log((n + 1) / df);
    if (part.concept(termId)) weight *= scoring.conceptWeight;
    if (weight <= 0) continue;
    weights.push({ ids, weight, term });
    if (!part.unnormed(termId)) queryNorm += weight * weight;
    queryNormAll += weight * weight;
  }
  if (!weights.length) return [];
  // Only context-field terms matched anything: normalise by them rather than divide by zero.
  queryNorm = Math.sqrt(queryNorm || queryNormAll);
  const allowed = allowedSlots(parts, options.filter, indexedKeys);

  let normSum = 0;
  for (const part of parts) normSum += part.normSum;
  const slope = scoring.slope;
  const pivot = normSum / n;
  const want = Math.max(options.pool ?? k, scoring.supersede ? Math.max(k, 20) : k);
  const pool = POOL.reset(want);
  const filter = allowed ? undefined : options.filter;
  parts.forEach((part, p) => {
    scorePart(part, pool, { part: p, terms: weights, queryNorm, slope, pivot, keep: allowed?.[p], filter, matches });
  });
  const heap = pool.items; // score, part, slot, mask
  // Candidates are read by index, not destructured: destructuring an array walks its iterator, an object a time.
  const hitOf = (candidate: Candidate): Hit => ({
    id: parts[candidate[1]]!.id(candidate[2]),
    score: candidate[0],
    meta: parts[candidate[1]]!.meta(candidate[2]),
  });
  const metas = new Map<number, DocMeta>();
  const metaOf = (p: number, slot: number) => {
    const key = slot * parts.length + p;
    let meta = metas.get(key);
    if (!meta) metas.set(key, meta = parts[p]!.meta(slot));
    return meta;
  };
  if (options.rerank) {
    const candidates = heap.map(hitOf);
    candidates.forEach((candidate, i) => metas.set(heap[i]![2] * parts.length + heap[i]![1], candidate.meta));
    options.rerank(candidates);
    candidates.forEach((candidate, i) => heap[i]![0] = candidate.score);
  }
  heap.sort((a, b) => b[0] - a[0] || a[1] - b[1] || a[2] - b[2]);
  if (scoring.supersede) supersede(parts, heap, weights, scoring.supersede, metaOf);
  return heap.slice(0, k).map((candidate) => {
    const hit: Hit = {
      id: parts[candidate[1]]!.id(candidate[2]),
      score: candidate[0],
      meta: metaOf(candidate[1], candidate[2]),
    };
    const mask = candidate[3];
    if (options.withMatched && mask >= 0) {
      hit.matched = weights.filter((_, q) => mask & (1 << q)).map(({ term }) => term);
    }
    return hit;
  });
}

/** For an equality filter on indexed keys only: per part, the slots holding every filter term. */
function allowedSlots(
  parts: readonly IndexPart[],
  filter: SearchOptions["filter"],
  indexedKeys: ReadonlySet<string> | undefined,
): Array<Set<number>> | undefined {
  if (!filter || typeof filter === "function" || !indexedKeys) return undefined;
  const entries = Object.entries(filter);
  if (!entries.length || !entries.every(([key]) => indexedKeys.has(key))) return undefined;
  return parts.map((part) => {
    let kept: Set<number> | undefined;
    for (const [key, value] of entries) {
      const termId = part.termId(filterTerm(key, value));
      if (termId < 0) return new Set<number>();
      const { slots, from, to } = part.postings(termId);
      const these = new Set<number>();
      for (let i = from; i < to; i++) if (!kept || kept.has(slots[i]!)) these.add(slots[i]!);
      kept = these;
    }
    return kept ?? new Set<number>();
  });
}

function matches(meta: DocMeta, filter: NonNullable<SearchOptions["filter"]>): boolean {
  if (typeof filter === "function") return filter(meta);
  for (const [key, value] of Object.entries(filter)) if (meta[key] !== value) return false;
  return true;
}

/**
 * The dot product of two documents of one part over B's normed terms, in B's order (the sum `supersede` compares).
 * A function of its own, of typed arrays and numbers: as a closure of each search it ran unoptimized for the first
 * searches, boxing a number per term.
 */
function dotOfTerms(
  part: IndexPart,
  termIdsA: Int32Array,
  weightsA: Float32Array,
  termIdsB: Int32Array,
  weightsB: Float32Array,
): number {
  let dot = 0;
  for (let j = 0; j < termIdsB.length; j++) {
    const termId = termIdsB[j]!;
    if (part.unnormed(termId)) continue;
    let weightA = 0;
    for (let i = 0; i < termIdsA.length; i++) {
      if (termIdsA[i] === termId) {
        weightA = weightsA[i]!;
        break;
      }
    }
    dot += weightA * weightsB[j]!;
  }
  return dot;
}

/**
 * Moves a newer near-duplicate of a document above it (a newer note on the same fact supersedes the older): only
 * when it matches every query term the older one matches — a note about another room is not a newer version.
 * Which query terms a candidate holds is its mask from scoring (`max_score.ts`), read from its terms only for a query
 * too long for one; two documents of one part are compared by term ids, of two parts by the terms' text.
 */
function supersede(
  parts: readonly IndexPart[],
  ranked: Candidate[],
  query: ReadonlyArray<{ ids: number[] }>,
  rule: { similarity: number; ratio: number },
  metaOf: (part: number, slot: number) => DocMeta,
): void {
  const time = (p: number, slot: number) => Number(metaOf(p, slot).time ?? 0);
  const terms = new Map<number, { termIds: Int32Array; weights: Float32Array }>();
  const termsOf = (p: number, slot: number) => {
    const key = slot * parts.length + p;
    let found = terms.get(key);
    if (!found) terms.set(key, found = parts[p]!.docTerms(slot));
    return found;
  };
  // The query terms a document holds, as bits of their indexes into `query` (the same in every part).
  const matched = (candidate: Candidate) => {
    const p = candidate[1], slot = candidate[2], mask = candidate[3];
    if (mask >= 0) return mask;
    const byId = new Map<number, number>();
    query.forEach(({ ids }, q) => ids[p]! >= 0 && byId.set(ids[p]!, q));
    const found = new Set<number>();
    for (const termId of termsOf(p, slot).termIds) {
      const q = byId.get(termId);
      if (q !== undefined) found.add(q);
    }
    return found;
  };
  const holdsAll = (a: Candidate, b: Candidate) => {
    const termsA = matched(a), termsB = matched(b);
    if (typeof termsA === "number" && typeof termsB === "number") return (termsA & ~termsB) === 0;
    const setOf = (found: number | Set<number>) =>
      typeof found === "number" ? new Set(query.map((_, q) => q).filter((q) => found & (1 << q))) : found;
    const inB = setOf(termsB);
    return [...setOf(termsA)].every((term) => inB.has(term));
  };
  // A document's normed terms by their text, for documents of two parts (their term ids differ).
  const byText = new Map<number, Map<string, number>>();
  const vectorByText = (p: number, slot: number) => {
    const key = slot * parts.length + p;
    let found = byText.get(key);
    if (!found) {
      found = new Map();
      const { termIds, weights } = termsOf(p, slot);
      const part = parts[p]!;
      for (let i = 0; i < termIds.length; i++) {
        if (!part.unnormed(termIds[i]!)) found.set(part.termText(termIds[i]!), weights[i]!);
      }
      byText.set(key, found);
    }
    return found;
  };
  // Over the documents' normed terms, B's in its order: the same sum, term for term, by term ids within a part (a
  // document holds tens of terms: two loops over its arrays) as by text across two.
  const cosine = (a: Candidate, b: Candidate) => {
    let dot = 0;
    if (a[1] === b[1]) {
      const termsA = termsOf(a[1], a[2]), termsB = termsOf(b[1], b[2]);
      dot = dotOfTerms(parts[a[1]]!, termsA.termIds, termsA.weights, termsB.termIds, termsB.weights);
    } else {
      const vectorA = vectorByText(a[1], a[2]);
      vectorByText(b[1], b[2]).forEach((weight, term) => dot += (vectorA.get(term) ?? 0) * weight);
    }
    return dot / (parts[a[1]]!.norms()[a[2]]! * parts[b[1]]!.norms()[b[2]]!);
  };
  for (let i = 0; i < Math.min(ranked.length, 10); i++) {
    for (let j = i + 1; j < ranked.length; j++) {
      const a = ranked[i]!, b = ranked[j]!;
      // The scores first: they are at hand, the times are read from a segment's metadata on disk.
      if (b[0] < rule.ratio * a[0] || time(b[1], b[2]) <= time(a[1], a[2])) continue;
      if (!holdsAll(a, b)) continue;
      if (cosine(a, b) < rule.similarity) continue;
      ranked.splice(j, 1);
      ranked.splice(i, 0, b);
    }
  }
}
