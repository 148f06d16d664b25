/**
 * A segment's document terms in memory: every document's term ids (4 bytes each) and their weights as one-byte codes
 * into the few weights a segment holds (1 + ln tf: a handful of values), so ≈ 5 bytes a term of a document where the
 * file has 8 — a year's 100k documents, 1.3M pairs: 6.6 MB. A segment with more than 256 distinct weights keeps them
 * whole (4 bytes). Read when the segment opens, in 1 MB slices of the file's section, synchronously.
 *
 * @module
 */

import { readFullySync } from "./segment_sections.ts";

/** Bytes of the file's section read at once. */
const SLICE_BYTES = 1 << 20;
/** Distinct weights a one-byte code can name. */
const CODES = 256;

/** The term ids and weights of every document of a segment, by slot. */
export class DocTerms {
  #docStart: Uint32Array;
  #termIds: Int32Array;
  #codes: Uint8Array | undefined;
  #table: number[] = [];
  #weights: Float32Array | undefined;

  private constructor(docStart: Uint32Array, pairs: number) {
    this.#docStart = docStart;
    this.#termIds = new Int32Array(pairs);
    this.#codes = new Uint8Array(pairs);
  }

  /**
   * Reads the document terms section of `file` (starting at `at`; per document its term ids as i32, then their weights
   * as f32, from `docStart`), awaiting `pause()` between slices.
   *
   * @example
   * ```ts
   * import { layoutOf, type Counts } from "./segment_layout.ts";
   *
   * declare const file: Deno.FsFile, counts: Counts, docStart: Uint32Array;
   * const terms = await DocTerms.read(file, layoutOf(counts).docTerms, docStart, () => Promise.resolve());
   * terms.of(0); // { termIds: Int32Array [...], weights: Float32Array [...] }
   * ```
   */
  static async read(
    file: Deno.FsFile,
    at: number,
    docStart: Uint32Array,
    pause: () => Promise<void>,
  ): Promise<DocTerms> {
    const documents = docStart.length - 1;
    const terms = new DocTerms(docStart, docStart[documents]!);
    const buffer = new Uint8Array(SLICE_BYTES);
    for (let from = 0; from < documents;) {
      // Whole documents, at least one, about a slice's worth.
      let to = from + 1;
      while (to < documents && 8 * (docStart[to + 1]! - docStart[from]!) <= SLICE_BYTES) to++;
      const length = 8 * (docStart[to]! - docStart[from]!);
      const bytes = length <= buffer.length ? buffer.subarray(0, length) : new Uint8Array(length);
      readFullySync(file, at + 8 * docStart[from]!, bytes);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let slot = from; slot < to; slot++) {
        const start = docStart[slot]!, count = docStart[slot + 1]! - start;
        const offset = 8 * (start - docStart[from]!);
        for (let i = 0; i < count; i++) {
          terms.#termIds[start + i] = view.getInt32(offset + 4 * i, true);
          terms.#put(start + i, view.getFloat32(offset + 4 * (count + i), true));
        }
      }
      from = to;
      await pause();
    }
    return terms;
  }

  /** Keeps pair `at`'s weight: as a code while there are few, whole once there are more. */
  #put(at: number, weight: number): void {
    if (this.#weights) {
      this.#weights[at] = weight;
      return;
    }
    let code = this.#table.indexOf(weight);
    if (code < 0) {
      if (this.#table.length === CODES) {
        const weights = new Float32Array(this.#termIds.length);
        for (let i = 0; i < at; i++) weights[i] = this.#table[this.#codes![i]!]!;
        weights[at] = weight;
        this.#weights = weights;
        this.#codes = undefined;
        return;
      }
      code = this.#table.push(weight) - 1;
    }
    this.#codes![at] = code;
  }

  /** The slot's term ids (a view: read it, never change it) and their weights. */
  of(slot: number): { termIds: Int32Array; weights: Float32Array } {
    const from = this.#docStart[slot]!, to = this.#docStart[slot + 1]!;
    const termIds = this.#termIds.subarray(from, to);
    if (this.#weights) return { termIds, weights: this.#weights.subarray(from, to) };
    const weights = new Float32Array(to - from), codes = this.#codes!, table = this.#table;
    for (let i = from; i < to; i++) weights[i - from] = table[codes[i]!]!;
    return { termIds, weights };
  }

  /** Bytes held. */
  get residentBytes(): number {
    return this.#termIds.byteLength + (this.#codes?.byteLength ?? 0) + (this.#weights?.byteLength ?? 0);
  }
}
