/**
 * The in-memory TF-IDF index: an inverted index over typed arrays with incremental document frequencies.
 *
 * Weighting (SMART "lnc.ltc" with pivoted normalisation, chosen on the retrieval eval, see
 * bench/retrieval/README.md): a document term weighs `1 + ln tf`; a query term `(1 + ln tf) · ln((N + 1) / df)`;
 * the score is their dot product divided by the query norm and by the document's pivoted norm
 * `(1 − s) · mean norm + s · norm`. Document weights do not depend on idf, so an insert never invalidates other
 * documents; idf is read from the live counts at query time.
 *
 * @module
 */

import { FILTER_FIELD, type IndexPart, rank, type RankOptions, type TermMaxima } from "./ranking.ts";
import type { IndexSnapshot } from "./snapshot.ts";
import { DocPool, PostingPool } from "./posting_pools.ts";

/** A stored document's metadata; `time` (ms since epoch) lets newer notes supersede older ones. */
export type DocMeta = Record<string, string | number | boolean>;

/** One search result. */
export interface Hit {
  id: string;
  score: number;
  meta: DocMeta;
  /** With {@link SearchOptions.withMatched}: the query's terms it holds (analyzed), for a query of ≤ 31 terms. */
  matched?: readonly string[];
}

/** Tunable scoring. */
export interface ScoringOptions {
  /** Pivot slope `s`: 1 is plain cosine; lower favours longer documents. */
  slope: number;
  /** Weight of concept tokens (`~light`) relative to plain terms. */
  conceptWeight: number;
  /**
   * Among the top results, a newer document that is at least `similarity` alike (cosine) to an older one ranked
   * above it, and scores at least `ratio` of it, moves above it. `undefined` turns this off.
   */
  supersede?: { similarity: number; ratio: number } | undefined;
}

/** Search options. */
export interface SearchOptions {
  k?: number;
  /** How many of the best candidates `rerank` sees (default: `k`, at least 20 with supersession). */
  pool?: number;
  /**
   * Adjusts the candidates' scores (in place) before they are ordered, superseded and cut to `k` — for what one
   * document's score cannot say alone (its conversation's other turns, say).
   */
  rerank?: (candidates: Hit[]) => void;
  /** Keeps only documents whose metadata has these values, or for which the predicate is true. */
  filter?: DocMeta | ((meta: DocMeta) => boolean);
  /** Each hit names the query terms it holds (`Hit.matched`), as scoring found them: no document is read for it. */
  withMatched?: boolean;
}

/**
 * Marks a term of a document's second field, its context (the turn said before it): such terms add to a score but
 * count in neither the document's nor the query's norm, so a document matched by its own words scores exactly as it
 * would without the field, and a long context does not make its document "long". The tokenizer never makes a term
 * with this character (it splits on punctuation).
 */
export const CONTEXT_FIELD = "^";

/** Chosen by the sweep in bench/retrieval/tune.ts (results in bench/retrieval/README.md). */
export const DEFAULT_SCORING: ScoringOptions = {
  slope: 0.75,
  conceptWeight: 1.5,
  supersede: { similarity: 0.2, ratio: 0.7 },
};

/** The index. Not persistent by itself: {@link VectorStore} adds the log and snapshots. */
export class InvertedIndex {
  #termIds = new Map<string, number>();
  #terms: string[] = [];
  #postings = new PostingPool();
  #df: number[] = [];
  #concept: boolean[] = [];
  #context: boolean[] = [];
  /**
   * Per term, MaxScore's bounds, ever (removals leave them wide): the smallest norm of a document holding it once,
   * and the largest weight and smallest norm of those holding it more often.
   */
  #minNormOnce: number[] = [];
  #maxWeight: number[] = [];
  #minNorm: number[] = [];
  #slotOf = new Map<string, number>();
  #ids: string[] = [];
  #meta: DocMeta[] = [];
  #docs = new DocPool();
  #alive = new Uint8Array(16);
  #norms = new Float32Array(16);
  #normSum = 0;
  #live = 0;
  scoring: ScoringOptions;

  /**
   * @example
   * ```ts
   * const index = new InvertedIndex();
   * index.put("a", new Map([["客厅", 1]]), {});
   * ```
   */
  constructor(scoring: ScoringOptions = DEFAULT_SCORING) {
    this.scoring = scoring;
  }

  /** Live documents. */
  get size(): number {
    return this.#live;
  }

  has(id: string): boolean {
    return this.#slotOf.has(id);
  }

  /** A document's metadata and term frequencies. */
  get(id: string): { meta: DocMeta; terms: Map<string, number> } | undefined {
    const slot = this.#slotOf.get(id);
    if (slot === undefined) return undefined;
    const terms = new Map<string, number>();
    const ids = this.#docs.termsOf(slot);
    const weights = this.#docs.weightsOf(slot);
    for (let i = 0; i < ids.length; i++) {
      const term = this.#terms[ids[i]!]!;
      if (!term.startsWith(FILTER_FIELD)) terms.set(term, Math.round(Math.exp(weights[i]! - 1)));
    }
    return { meta: this.#meta[slot]!, terms };
  }

  /** Every live id. */
  ids(): string[] {
    return [...this.#slotOf.keys()];
  }

  #termId(term: string): number {
    let id = this.#termIds.get(term);
    if (id === undefined) {
      id = this.#terms.length;
      this.#termIds.set(term, id);
      this.#terms.push(term);
      this.#postings.addTerm();
      this.#df.push(0);
      this.#concept.push(term.startsWith("~"));
      this.#context.push(unnormed(term));
      this.#minNormOnce.push(Infinity);
      this.#maxWeight.push(0);
      this.#minNorm.push(Infinity);
    }
    return id;
  }

  #ensureSlots(capacity: number): void {
    if (capacity <= this.#alive.length) return;
    const size = Math.max(capacity, this.#alive.length * 2);
    const alive = new Uint8Array(size);
    alive.set(this.#alive);
    this.#alive = alive;
    const norms = new Float32Array(size);
    norms.set(this.#norms);
    this.#norms = norms;
  }

  /**
   * Adds or replaces a document.
   *
   * @example
   * ```ts
   * import { termFrequencies } from "./tokenizer.ts";
   *
   * const index = new InvertedIndex();
   * index.put("note-1", termFrequencies("客厅的灯"), { time: Date.now() });
   * ```
   */
  put(id: string, terms: ReadonlyMap<string, number>, meta: DocMeta): void {
    this.#remove(id);
    const termIds = new Int32Array(terms.size);
    const weights = new Float32Array(terms.size);
    let count = 0;
    for (const [term, tf] of terms) {
      if (tf <= 0) continue;
      termIds[count] = this.#termId(term);
      weights[count++] = 1 + Math.log(tf);
    }
    this.#insert(id, termIds, weights, count, meta);
  }

  /** Adds a document not in the index, from its term ids and weights (`count` of them). */
  #insert(id: string, termIds: Int32Array, weights: Float32Array, count: number, meta: DocMeta): void {
    const slot = this.#ids.length;
    this.#ensureSlots(slot + 1);
    let squares = 0;
    for (let i = 0; i < count; i++) {
      const termId = termIds[i]!;
      const weight = weights[i]!;
      this.#postings.push(termId, slot, weight);
      this.#df[termId]!++;
      if (!this.#context[termId]) squares += weight * weight;
    }
    this.#ids.push(id);
    this.#meta.push(meta);
    this.#docs.add(slot, termIds, weights, count);
    this.#alive[slot] = 1;
    const norm = Math.sqrt(squares) || 1;
    this.#norms[slot] = norm;
    // The stored (f32) norm, as removal subtracts it and a segment sums it: the mean is the same in every part.
    this.#normSum += this.#norms[slot]!;
    this.#raiseMaxima(termIds, weights, count, this.#norms[slot]!);
    this.#live++;
    this.#slotOf.set(id, slot);
  }

  /** Widens the terms' bounds to a document's weights and (stored) norm; removals leave them wide, still bounds. */
  #raiseMaxima(termIds: ArrayLike<number>, weights: ArrayLike<number>, count: number, norm: number): void {
    for (let i = 0; i < count; i++) {
      const termId = termIds[i]!;
      if (weights[i]! === 1) {
        if (norm < this.#minNormOnce[termId]!) this.#minNormOnce[termId] = norm;
        continue;
      }
      if (weights[i]! > this.#maxWeight[termId]!) this.#maxWeight[termId] = weights[i]!;
      if (norm < this.#minNorm[termId]!) this.#minNorm[termId] = norm;
    }
  }

  /**
   * Copies `slot` of `source` (a live document) in, replacing any earlier copy of `id`, remapping its term ids; no
   * intermediate maps or strings.
   */
  #copy(source: InvertedIndex, id: string, slot: number): void {
    this.#remove(id);
    const sourceIds = source.#docs.termsOf(slot);
    const termIds = new Int32Array(sourceIds.length);
    for (let i = 0; i < sourceIds.length; i++) termIds[i] = this.#termId(source.#terms[sourceIds[i]!]!);
    this.#insert(id, termIds, source.#docs.weightsOf(slot), sourceIds.length, source.#meta[slot]!);
  }

  /** Removes a document; false when it was not there. Its postings are skipped until {@link compact}. */
  delete(id: string): boolean {
    if (!this.#slotOf.has(id)) return false;
    return this.#remove(id);
  }

  #remove(id: string): boolean {
    const slot = this.#slotOf.get(id);
    if (slot === undefined) return false;
    this.#slotOf.delete(id);
    this.#alive[slot] = 0;
    for (const termId of this.#docs.termsOf(slot)) this.#df[termId]!--;
    this.#normSum -= this.#norms[slot]!;
    this.#live--;
    this.#docs.clear(slot);
    return true;
  }

  /**
   * The live documents as flat arrays, in slot order, with only the terms they use (for a binary snapshot).
   *
   * @example
   * ```ts
   * const index = new InvertedIndex();
   * index.put("a", new Map([["客厅", 1]]), {});
   * const copy = InvertedIndex.fromSnapshot(index.snapshot());
   * copy.size; // 1
   * ```
   */
  snapshot(): IndexSnapshot {
    const remap = new Int32Array(this.#terms.length).fill(-1);
    const terms: string[] = [];
    const ids: string[] = [];
    const metas: DocMeta[] = [];
    const lengths = new Int32Array(this.#live);
    let pairs = 0;
    for (const slot of this.#slotOf.values()) pairs += this.#docs.length[slot]!;
    const termIds = new Int32Array(pairs);
    const weights = new Float32Array(pairs);
    let at = 0;
    for (const [id, slot] of this.#slotOf) {
      const slotTerms = this.#docs.termsOf(slot);
      weights.set(this.#docs.weightsOf(slot), at);
      for (const termId of slotTerms) {
        if (remap[termId] === -1) {
          remap[termId] = terms.length;
          terms.push(this.#terms[termId]!);
        }
        termIds[at++] = remap[termId]!;
      }
      lengths[ids.length] = slotTerms.length;
      ids.push(id);
      metas.push(this.#meta[slot]!);
    }
    return { terms, ids, metas, lengths, termIds, weights };
  }

  /**
   * Builds an index from a snapshot in one pass: postings are allocated at their final size and no per-document
   * object is made beyond its id and metadata. Throws a `RangeError` when the snapshot holds an id twice.
   *
   * @example
   * ```ts
   * import { decodeSnapshot } from "./snapshot.ts";
   *
   * const index = InvertedIndex.fromSnapshot(decodeSnapshot(await Deno.readFile("index.bin")));
   * ```
   */
  static fromSnapshot(snapshot: IndexSnapshot, scoring: ScoringOptions = DEFAULT_SCORING): InvertedIndex {
    const index = new InvertedIndex(scoring);
    const { terms, ids, lengths, termIds, weights } = snapshot;
    const df = new Int32Array(terms.length);
    for (const termId of termIds) df[termId]!++;
    index.#postings.presize(terms.length, termIds.length);
    terms.forEach((term, termId) => {
      index.#termIds.set(term, termId);
      index.#postings.addTerm(df[termId]!);
      index.#df.push(df[termId]!);
      index.#concept.push(term.startsWith("~"));
      index.#context.push(unnormed(term));
      index.#minNormOnce.push(Infinity);
      index.#maxWeight.push(0);
      index.#minNorm.push(Infinity);
    });
    index.#terms = terms;
    const count = ids.length;
    index.#ensureSlots(count);
    const docs = index.#docs;
    docs.terms = termIds;
    docs.weights = weights;
    docs.used = termIds.length;
    docs.start = new Int32Array(Math.max(count, 1));
    docs.length = new Int32Array(Math.max(count, 1));
    let at = 0;
    for (let slot = 0; slot < count; slot++) {
      const length = lengths[slot]!;
      docs.start[slot] = at;
      docs.length[slot] = length;
      let squares = 0;
      for (let i = at; i < at + length; i++) {
        const termId = termIds[i]!;
        const weight = weights[i]!;
        index.#postings.push(termId, slot, weight);
        if (!index.#context[termId]) squares += weight * weight;
      }
      at += length;
      const norm = Math.sqrt(squares) || 1;
      index.#norms[slot] = norm;
      index.#normSum += index.#norms[slot]!;
      index.#raiseMaxima(
        termIds.subarray(at - length, at),
        weights.subarray(at - length, at),
        length,
        index.#norms[slot]!,
      );
      index.#alive[slot] = 1;
      if (index.#slotOf.has(ids[slot]!)) throw new RangeError(`The snapshot holds the id "${ids[slot]}" twice`);
      index.#slotOf.set(ids[slot]!, slot);
    }
    index.#ids = ids;
    index.#meta = snapshot.metas;
    index.#live = count;
    return index;
  }

  /** Drops deleted slots and unused terms, rebuilding the postings in one synchronous step (small indexes, tests). */
  compact(): void {
    const fresh = new InvertedIndex(this.scoring);
    for (const [id, slot] of this.#slotOf) fresh.#copy(this, id, slot);
    this.#replaceWith(fresh);
  }

  #replaceWith(other: InvertedIndex): void {
    this.#termIds = other.#termIds;
    this.#terms = other.#terms;
    this.#postings = other.#postings;
    this.#df = other.#df;
    this.#concept = other.#concept;
    this.#context = other.#context;
    this.#minNormOnce = other.#minNormOnce;
    this.#maxWeight = other.#maxWeight;
    this.#minNorm = other.#minNorm;
    this.#slotOf = other.#slotOf;
    this.#ids = other.#ids;
    this.#meta = other.#meta;
    this.#docs = other.#docs;
    this.#alive = other.#alive;
    this.#norms = other.#norms;
    this.#normSum = other.#normSum;
    this.#live = other.#live;
  }

  /**
   * Checks the invariants (document frequencies match the postings, counts agree); returns the problems found.
   * Used by tests and after recovery.
   */
  verify(): string[] {
    const problems: string[] = [];
    const df = new Array<number>(this.#terms.length).fill(0);
    for (const slot of this.#slotOf.values()) {
      if (!this.#alive[slot]) problems.push(`slot ${slot} of ${this.#ids[slot]} is not alive`);
      for (const termId of this.#docs.termsOf(slot)) df[termId]!++;
    }
    df.forEach((count, termId) => {
      if (count !== this.#df[termId]) {
        problems.push(`df of "${this.#terms[termId]}" is ${this.#df[termId]}, not ${count}`);
      }
    });
    if (this.#live !== this.#slotOf.size) problems.push(`live count ${this.#live} ≠ ${this.#slotOf.size}`);
    return problems;
  }

  /**
   * Top-k documents by score for already-tokenized query terms.
   *
   * @example
   * ```ts
   * import { termFrequencies } from "./tokenizer.ts";
   *
   * const index = new InvertedIndex();
   * index.put("note-1", termFrequencies("客厅的灯"), { time: 1 });
   * index.search(termFrequencies("客厅灯几点关"), { k: 5 }); // [{ id: "note-1", score: 0.71, meta: { time: 1 } }]
   * ```
   */
  search(query: ReadonlyMap<string, number>, options: RankOptions = {}): Hit[] {
    return rank([this.part()], query, options, this.scoring);
  }

  /** The view {@link part} returns: made once, it reads the index's fields as they are at each call. */
  #part: IndexPart | undefined;

  /**
   * This index as a part of a larger one (the documents written since a segment on disk, say): what
   * {@link rank} reads. The view stays valid while the index changes.
   *
   * @example
   * ```ts
   * const index = new InvertedIndex();
   * index.put("a", new Map([["客厅", 1]]), {});
   * index.part().live; // 1
   * ```
   */
  part(): IndexPart {
    if (this.#part) return this.#part;
    // deno-lint-ignore no-this-alias
    const index = this;
    return this.#part = {
      get slotCount() {
        return index.#ids.length;
      },
      get live() {
        return index.#live;
      },
      get normSum() {
        return index.#normSum;
      },
      aliveFlags: () => this.#alive,
      norms: () => this.#norms,
      termId: (term) => this.#termIds.get(term) ?? -1,
      df: (termId) => this.#df[termId]!,
      concept: (termId) => this.#concept[termId]!,
      unnormed: (termId) => this.#context[termId]!,
      postings: (termId) => {
        const postings = this.#postings;
        const from = postings.start[termId]!;
        return { slots: postings.slots, weights: postings.weights, from, to: from + postings.length[termId]! };
      },
      termText: (termId) => this.#terms[termId]!,
      id: (slot) => this.#ids[slot]!,
      meta: (slot) => this.#meta[slot]!,
      docTerms: (slot) => ({ termIds: this.#docs.termsOf(slot).slice(), weights: this.#docs.weightsOf(slot).slice() }),
      maxima: (termId): TermMaxima => ({
        weights: [1, this.#maxWeight[termId]!],
        norms: [this.#minNormOnce[termId]!, this.#minNorm[termId]!],
      }),
    };
  }
}

/** Terms that count in no norm: the context field's and filter terms. */
function unnormed(term: string): boolean {
  return term.startsWith(CONTEXT_FIELD) || term.startsWith(FILTER_FIELD);
}
