/**
 * The index a {@link VectorStore} searches: a {@link Segment} on disk (its documents at the last compaction) and, in
 * memory, an {@link InvertedIndex} of the documents written since. A put of a document the segment holds marks its
 * slot deleted there and adds it to the memory part; a search ranks both parts as one index (`ranking.ts`).
 *
 * @module
 */

import { type DocMeta, type Hit, InvertedIndex, type ScoringOptions } from "./inverted_index.ts";
import { FILTER_FIELD, type IndexPart, rank, type RankOptions } from "./ranking.ts";
import { idHash, type Segment } from "./segment.ts";
import type { SegmentInput } from "./segment_writer.ts";

/** The index. */
export class SegmentIndex {
  #segment: Segment | undefined;
  #recent: InvertedIndex;
  scoring: ScoringOptions;

  /**
   * @example
   * ```ts
   * import { Segment } from "./segment.ts";
   *
   * const index = new SegmentIndex(undefined, await Segment.open("/var/lib/homed/vector/knowledge/snap-3.bin"));
   * index.size; // the segment's documents
   * ```
   */
  constructor(scoring?: ScoringOptions, segment?: Segment) {
    this.#recent = new InvertedIndex(scoring);
    this.scoring = this.#recent.scoring;
    this.#segment = segment;
  }

  /** The segment searched, if there is one. */
  get segment(): Segment | undefined {
    return this.#segment;
  }

  /** Documents written since the segment. */
  get recentSize(): number {
    return this.#recent.size;
  }

  /** Live documents. */
  get size(): number {
    return (this.#segment?.live ?? 0) + this.#recent.size;
  }

  /** The live slot of `id` in the segment, or -1. */
  #segmentSlot(id: string): number {
    const segment = this.#segment;
    if (!segment) return -1;
    const slot = segment.slotOf(id);
    return slot >= 0 && segment.aliveFlags()[slot] ? slot : -1;
  }

  has(id: string): boolean {
    return this.#recent.has(id) || this.#segmentSlot(id) >= 0;
  }

  /** A document's metadata and term frequencies (filter terms left out). */
  get(id: string): { meta: DocMeta; terms: Map<string, number> } | undefined {
    const recent = this.#recent.get(id);
    if (recent) return recent;
    const slot = this.#segmentSlot(id);
    if (slot < 0) return undefined;
    const segment = this.#segment!;
    const { termIds, weights } = segment.docTerms(slot);
    const terms = new Map<string, number>();
    for (let i = 0; i < termIds.length; i++) {
      const term = segment.termText(termIds[i]!);
      if (!term.startsWith(FILTER_FIELD)) terms.set(term, Math.round(Math.exp(weights[i]! - 1)));
    }
    return { meta: segment.meta(slot), terms };
  }

  /** Every live id: the segment's in slot order, then the newer ones. */
  ids(): string[] {
    const ids: string[] = [];
    const segment = this.#segment;
    if (segment) {
      const alive = segment.aliveFlags();
      for (let slot = 0; slot < segment.documents; slot++) if (alive[slot]) ids.push(segment.id(slot));
    }
    return [...ids, ...this.#recent.ids()];
  }

  /**
   * How many live documents there are and the sum of their ids' {@link idHash}es: compared with the same over the
   * rows an index is kept for, it tells whether the index holds exactly those ids without reading them one by one.
   *
   * @example
   * ```ts
   * const index = new SegmentIndex();
   * index.put("a", new Map([["客厅", 1]]), {});
   * index.idDigest(); // { count: 1, hashSum: idHash("a") }
   * ```
   */
  idDigest(): { count: number; hashSum: number } {
    let hashSum = this.#segment?.liveIdHashSum() ?? 0;
    for (const id of this.#recent.ids()) hashSum += idHash(id);
    return { count: this.size, hashSum };
  }

  /**
   * Adds or replaces a document.
   *
   * @example
   * ```ts
   * const index = new SegmentIndex();
   * index.put("note-1", new Map([["客厅", 1]]), { time: Date.now() });
   * ```
   */
  put(id: string, terms: ReadonlyMap<string, number>, meta: DocMeta): void {
    const slot = this.#segmentSlot(id);
    if (slot >= 0) this.#segment!.kill(slot);
    this.#recent.put(id, terms, meta);
  }

  /** Removes a document; false when it was not there. */
  delete(id: string): boolean {
    if (this.#recent.delete(id)) return true;
    const slot = this.#segmentSlot(id);
    if (slot < 0) return false;
    this.#segment!.kill(slot);
    return true;
  }

  /**
   * Top-k documents for already-tokenized query terms, over the segment and the newer documents as one index
   * (`indexedKeys`: see {@link rank}).
   *
   * @example
   * ```ts
   * const index = new SegmentIndex();
   * index.put("note-1", new Map([["客厅", 1]]), { time: 1 });
   * index.search(new Map([["客厅", 1]]), { k: 5 }); // [{ id: "note-1", … }]
   * ```
   */
  search(
    query: ReadonlyMap<string, number>,
    options: RankOptions = {},
    indexedKeys: ReadonlySet<string> | undefined = options.indexedKeys,
  ): Hit[] {
    const parts: IndexPart[] = this.#segment ? [this.#segment, this.#recent.part()] : [this.#recent.part()];
    return rank(parts, query, options, this.scoring, indexedKeys);
  }

  /**
   * What a compaction starting now writes: the segment with its live flags and document frequencies as they are,
   * and a copy of the newer documents. Later changes do not touch it.
   */
  cut(): SegmentInput {
    const segment = this.#segment;
    return { base: segment ? { segment, ...segment.cut() } : undefined, delta: this.#recent.snapshot() };
  }

  /**
   * Checks the invariants: each part's document frequencies match its live documents, and no id is live in both.
   * Returns the problems found (tests, and after loading).
   */
  verify(): string[] {
    const problems = this.#recent.verify();
    const segment = this.#segment;
    if (!segment) return problems;
    const alive = segment.aliveFlags();
    const df = new Int32Array(segment.terms);
    let live = 0;
    for (let slot = 0; slot < segment.documents; slot++) {
      if (!alive[slot]) continue;
      live++;
      for (const termId of segment.docTerms(slot).termIds) df[termId]!++;
    }
    for (let termId = 0; termId < segment.terms; termId++) {
      if (df[termId] !== segment.df(termId)) {
        problems.push(`df of "${segment.termText(termId)}" is ${segment.df(termId)}, not ${df[termId]}`);
      }
    }
    if (live !== segment.live) problems.push(`segment live count ${segment.live} ≠ ${live}`);
    for (const id of this.#recent.ids()) {
      if (this.#segmentSlot(id) >= 0) problems.push(`${id} is live in the segment and among the newer documents`);
    }
    return problems;
  }

  /** Closes the segment's file. */
  close(): void {
    this.#segment?.close();
  }
}
