/**
 * A segment: an index's documents at its last compaction, in one file searched where it lies. What a search needs at
 * every step stays in memory — the sorted term dictionary (terms packed as UTF-8, their document frequencies and where
 * their postings are), the ids (packed, with a hash order for lookup), per document its norm, whether it is still
 * live and where its terms are (≈ 30 bytes a document and 20 a term), every document's terms (`doc_terms.ts`, ≈ 5
 * bytes a term of a document, ≈ 65 a household's document) and its metadata in columns (`meta_columns.ts`, ≈ 30
 * bytes a document): a recall compares its 40 best candidates by their terms and reads their metadata, and reading
 * each from the file cost more than ranking the first time a question was asked. The postings stay in the file and
 * are read when a query asks for them (positioned reads; the operating system's page cache, not this process, holds
 * what is read often), with each long list's MaxScore bounds found when the segment opens.
 *
 * Layout, little-endian: the magic `HVS3`, a u32 CRC-32 of everything after it, the counts (documents, terms,
 * postings, bytes of the terms, of the ids and of the metadata; u32 each), zeros to byte 64, then the sections, each
 * padded to 4 bytes: term bytes, term starts (u32, terms + 1), document frequencies (i32), posting starts (u32,
 * terms + 1), id bytes, id starts (u32, documents + 1), the id order (u32 slots sorted by the ids' FNV-1a hash),
 * document starts (u32, documents + 1, into the document terms), metadata starts (u32, documents + 1), norms (f32);
 * then the postings (per term: its slots as i32, then their weights as f32), the document terms (per document: term
 * ids as i32, then weights as f32) and the metadata (one JSON object per document). Terms are sorted by their UTF-8
 * bytes. A segment is written once (by {@link writeSegment}, through a temporary file) and never changed; deletions
 * since are kept in memory (and in the store's log).
 *
 * The layout's offsets are computed in `segment_layout.ts`, the two byte orders in `segment_bytes.ts`, and the
 * resident sections are read and checked at open in `segment_sections.ts`.
 *
 * @module
 */

import { crc32 } from "./crc32.ts";
import type { DocMeta } from "./inverted_index.ts";
import type { IndexPart, Postings, TermMaxima } from "./ranking.ts";
import { FILTER_FIELD } from "./ranking.ts";
import { compareBytes, hashBytes, textOf } from "./segment_bytes.ts";
import { type Counts, type Layout, layoutOf, SEGMENT_HEADER_BYTES, SEGMENT_MAGIC } from "./segment_layout.ts";
import { DocTerms } from "./doc_terms.ts";
import { MetaColumns } from "./meta_columns.ts";
import { readAt, readFullySync, readSections, type Sections } from "./segment_sections.ts";
import { SnapshotError } from "./snapshot.ts";

export { compareBytes, hashBytes, idHash } from "./segment_bytes.ts";
export { SEGMENT_HEADER_BYTES, SEGMENT_MAGIC } from "./segment_layout.ts";

const MAGIC = SEGMENT_MAGIC;
const HEADER_BYTES = SEGMENT_HEADER_BYTES;
const CHUNK = 1 << 20;
const TILDE = 0x7e;
const CARET = 0x5e;
const EQUALS = FILTER_FIELD.charCodeAt(0);
/**
 * Terms with at least this many postings keep their maxima (MaxScore's bounds), found the first time a search asks
 * and kept while the segment is open (a few thousand terms of a year: tens of kB); shorter lists are always walked.
 */
const MAXIMA_FROM = 256;
/** Pairs of maxima kept per term. */
const MAXIMA_PAIRS = 4;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** A segment opened for searching. */
export class Segment implements IndexPart {
  readonly path: string;
  readonly documents: number;
  readonly terms: number;
  #file: Deno.FsFile | undefined;
  #layout: Layout;
  #termBytes: Uint8Array;
  #termStart: Uint32Array;
  /** Live document frequencies: the stored ones less deletions since. */
  #df: Int32Array;
  #postStart: Uint32Array;
  #idBytes: Uint8Array;
  #idStart: Uint32Array;
  #idOrder: Uint32Array;
  #idHash: Uint32Array;
  #docStart: Uint32Array;
  #metaStart: Uint32Array;
  #norms: Float32Array;
  #docTerms: DocTerms;
  #alive: Uint8Array;
  #live: number;
  #normSum = 0;
  #scratch = new Uint8Array(4096);
  #rangeScratch = new Uint8Array(0);
  #key = new Uint8Array(256);
  /** The maxima of long lists, as searches asked for them: the segment never changes, deletions keep them bounds. */
  #maxima = new Map<number, TermMaxima>();
  /** The metadata in columns; undefined for metadata of too many keys, which is read from the file. */
  #columns: MetaColumns | undefined;

  private constructor(path: string, file: Deno.FsFile, counts: Counts, sections: Sections, docTerms: DocTerms) {
    this.path = path;
    this.#file = file;
    this.documents = counts.documents;
    this.terms = counts.terms;
    this.#layout = layoutOf(counts);
    this.#termBytes = sections.termBytes;
    this.#termStart = sections.termStart;
    this.#df = sections.df;
    this.#postStart = sections.postStart;
    this.#idBytes = sections.idBytes;
    this.#idStart = sections.idStart;
    this.#idOrder = sections.idOrder;
    this.#idHash = sections.idHash;
    this.#docStart = sections.docStart;
    this.#metaStart = sections.metaStart;
    this.#norms = sections.norms;
    this.#docTerms = docTerms;
    this.#alive = new Uint8Array(counts.documents).fill(1);
    this.#live = counts.documents;
    for (const norm of this.#norms) this.#normSum += norm;
  }

  /**
   * Opens a segment, checking its checksum (read through once, in chunks) and that its parts agree; throws a
   * {@link SnapshotError} naming the byte and the problem otherwise.
   *
   * @example
   * ```ts
   * const segment = await Segment.open("/var/lib/homed/memory/documents-index/seg-4.bin");
   * segment.slotOf("doc-1"); // 0
   * ```
   */
  static async open(path: string, pause: () => Promise<void> = () => Promise.resolve()): Promise<Segment> {
    const file = await Deno.open(path, { read: true });
    try {
      const size = (await file.stat()).size;
      const header = await readAt(file, 0, Math.min(size, HEADER_BYTES));
      if (header.length < HEADER_BYTES || !MAGIC.every((byte, i) => header[i] === byte)) {
        throw new SnapshotError(0, "not a segment");
      }
      const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
      const counts: Counts = {
        documents: view.getUint32(8, true),
        terms: view.getUint32(12, true),
        pairs: view.getUint32(16, true),
        termBytes: view.getUint32(20, true),
        idBytes: view.getUint32(24, true),
        metaBytes: view.getUint32(28, true),
      };
      const layout = layoutOf(counts);
      if (layout.end !== size) {
        throw new SnapshotError(8, `the header's counts make ${layout.end} bytes, the file has ${size}`);
      }
      // One buffer for the whole pass: a fresh 1 MB buffer per read left glibc's heap holding tens of MB after.
      let crc = 0;
      const chunk = new Uint8Array(Math.min(CHUNK, size));
      for (let at = 8; at < size; at += CHUNK) {
        const length = Math.min(CHUNK, size - at);
        crc = crc32(await readAt(file, at, length, chunk), crc);
        await pause();
      }
      if (crc !== view.getUint32(4, true)) throw new SnapshotError(4, "checksum mismatch");
      const sections = await readSections(file, counts, layout, pause);
      const docTerms = await DocTerms.read(file, layout.docTerms, sections.docStart, pause);
      const segment = new Segment(path, file, counts, sections, docTerms);
      await segment.#findMaxima(pause);
      segment.#columns = await MetaColumns.read(segment, pause).catch((error) => {
        // The checksum held, so the writer wrote it: a damaged segment all the same, set aside like any other.
        if (error instanceof SyntaxError) {
          throw new SnapshotError(layout.metas, `metadata that is not JSON: ${error.message}`);
        }
        throw error;
      });
      // The metadata slices' buffer, let go: only a compaction reads slices again (and grows it again then).
      segment.#rangeScratch = new Uint8Array(0);
      return segment;
    } catch (error) {
      file.close();
      throw error;
    }
  }

  get slotCount(): number {
    return this.documents;
  }

  get live(): number {
    return this.#live;
  }

  get normSum(): number {
    return this.#normSum;
  }

  /** Bytes this segment keeps in memory (its dictionary, ids and per-document arrays). */
  get residentBytes(): number {
    return [
      this.#termBytes,
      this.#termStart,
      this.#df,
      this.#postStart,
      this.#idBytes,
      this.#idStart,
      this.#idOrder,
      this.#idHash,
      this.#docStart,
      this.#metaStart,
      this.#norms,
      this.#alive,
      this.#scratch,
      this.#rangeScratch,
    ].reduce(
      (sum, array) => sum + array.byteLength,
      this.#docTerms.residentBytes + (this.#columns?.residentBytes ?? 0),
    );
  }

  aliveFlags(): Uint8Array {
    return this.#alive;
  }

  norms(): Float32Array {
    return this.#norms;
  }

  /**
   * Finds the maxima of every long list now, once per segment (at open, and so after each compaction), yielding to
   * `pause` between lists: found on a term's first search instead, they made the first recall of each term after a
   * compaction read its whole list twice — a year's 300 long lists of the document index are 1.2 million postings,
   * ≈ 13 ms here, where the first recall asking about 奶奶 and 放在 paid ≈ 1 ms of them.
   */
  async #findMaxima(pause: () => Promise<void>): Promise<void> {
    for (let termId = 0; termId < this.terms; termId++) {
      if (this.#postStart[termId + 1]! - this.#postStart[termId]! < MAXIMA_FROM) continue;
      this.maxima(termId);
      await pause();
    }
  }

  /** The term's maxima when its list is long (read from its postings once); undefined for a short list. */
  maxima(termId: number): TermMaxima | undefined {
    let found = this.#maxima.get(termId);
    if (found || this.#postStart[termId + 1]! - this.#postStart[termId]! < MAXIMA_FROM) return found;
    const { slots, weights, to } = this.postings(termId);
    // The smallest norm per weight (a term's weights are few: 1 + ln tf); beyond a few, the rest folded into one.
    // Kept in two short arrays, the last weight met checked first: a map lookup per posting made the first search
    // of a long list after each compaction cost a millisecond.
    const norms = this.#norms, seen: number[] = [], least: number[] = [];
    let last = -1;
    for (let i = 0; i < to; i++) {
      const weight = weights[i]!, norm = norms[slots[i]!]!;
      if (last < 0 || seen[last] !== weight) {
        last = seen.indexOf(weight);
        if (last < 0) {
          last = seen.push(weight) - 1;
          least.push(norm);
          continue;
        }
      }
      if (norm < least[last]!) least[last] = norm;
    }
    const pairs = seen.map((weight, j) => [weight, least[j]!] as const).sort((a, b) => a[0] - b[0]);
    const kept = pairs.slice(0, MAXIMA_PAIRS - 1);
    if (pairs.length >= MAXIMA_PAIRS) {
      kept.push([pairs.at(-1)![0], Math.min(...pairs.slice(MAXIMA_PAIRS - 1).map(([, norm]) => norm))]);
    }
    this.#maxima.set(termId, found = { weights: kept.map(([w]) => w), norms: kept.map(([, n]) => n) });
    return found;
  }

  /** `text` as UTF-8 in a reused buffer; returns its length. */
  #encodeKey(text: string): number {
    if (text.length * 3 > this.#key.length) this.#key = new Uint8Array(text.length * 3);
    return encoder.encodeInto(text, this.#key).written;
  }

  termId(term: string): number {
    const length = this.#encodeKey(term);
    const bytes = this.#termBytes, starts = this.#termStart;
    let low = 0, high = this.terms - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const order = compareBytes(bytes, starts[mid]!, starts[mid + 1]!, this.#key, 0, length);
      if (order === 0) return mid;
      if (order < 0) low = mid + 1;
      else high = mid - 1;
    }
    return -1;
  }

  df(termId: number): number {
    return this.#df[termId]!;
  }

  concept(termId: number): boolean {
    return this.#termBytes[this.#termStart[termId]!] === TILDE;
  }

  unnormed(termId: number): boolean {
    const first = this.#termBytes[this.#termStart[termId]!];
    return first === CARET || first === EQUALS;
  }

  termText(termId: number): string {
    return decoder.decode(this.#termBytes.subarray(this.#termStart[termId]!, this.#termStart[termId + 1]!));
  }

  /** The term's postings as written (deleted slots included; `aliveFlags` tells them), in a reused buffer. */
  postings(termId: number): Postings {
    const from = this.#postStart[termId]!, count = this.#postStart[termId + 1]! - from;
    const bytes = this.#read(this.#layout.postings + 8 * from, 8 * count);
    return {
      slots: new Int32Array(bytes.buffer, 0, count),
      weights: new Float32Array(bytes.buffer, 4 * count, count),
      from: 0,
      to: count,
    };
  }

  id(slot: number): string {
    return textOf(this.#idBytes, this.#idStart[slot]!, this.#idStart[slot + 1]!);
  }

  /** The slot of `id` (live or deleted), or -1. */
  slotOf(id: string): number {
    const length = this.#encodeKey(id);
    const hash = hashBytes(this.#key, 0, length);
    const order = this.#idOrder, hashes = this.#idHash;
    let low = 0, high = this.documents;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (hashes[order[mid]!]! < hash) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < this.documents && hashes[order[i]!] === hash; i++) {
      const slot = order[i]!;
      const start = this.#idStart[slot]!, end = this.#idStart[slot + 1]!;
      if (compareBytes(this.#idBytes, start, end, this.#key, 0, length) === 0) return slot;
    }
    return -1;
  }

  /** The slot's metadata (a new object). */
  meta(slot: number): DocMeta {
    if (this.#columns) return this.#columns.get(slot);
    const from = this.#metaStart[slot]!, to = this.#metaStart[slot + 1]!;
    const bytes = this.#read(this.#layout.metas + from, to - from);
    return JSON.parse(decoder.decode(bytes.subarray(0, to - from))) as DocMeta;
  }

  /** The slot's term ids and weights (the ids a view of the segment's own: read them, never change them). */
  docTerms(slot: number): { termIds: Int32Array; weights: Float32Array } {
    return this.#docTerms.of(slot);
  }

  /** Term count of a slot (as written). */
  termCount(slot: number): number {
    return this.#docStart[slot + 1]! - this.#docStart[slot]!;
  }

  /** Metadata bytes of a slot (as written). */
  metaBytes(slot: number): number {
    return this.#metaStart[slot + 1]! - this.#metaStart[slot]!;
  }

  /** The slots in id-hash order (ties by slot), and each slot's id hash: for a compaction's merge of the orders. */
  idOrder(): { order: Uint32Array; hash: Uint32Array } {
    return { order: this.#idOrder, hash: this.#idHash };
  }

  /** The sum of the live ids' hashes (see {@link idHash}). */
  liveIdHashSum(): number {
    let sum = 0;
    for (let slot = 0; slot < this.documents; slot++) if (this.#alive[slot]) sum += this.#idHash[slot]!;
    return sum;
  }

  /** Marks a slot deleted: it is skipped by searches, and its terms no longer count in document frequencies. */
  kill(slot: number): void {
    if (!this.#alive[slot]) return;
    this.#alive[slot] = 0;
    this.#live--;
    this.#normSum -= this.#norms[slot]!;
    for (const termId of this.docTerms(slot).termIds) this.#df[termId]!--;
  }

  /** A copy of the live flags and document frequencies: what a compaction starting now writes. */
  cut(): { alive: Uint8Array; df: Int32Array } {
    return { alive: this.#alive.slice(), df: this.#df.slice() };
  }

  /** The term's UTF-8 bytes (a view). */
  termBytes(termId: number): Uint8Array {
    return this.#termBytes.subarray(this.#termStart[termId]!, this.#termStart[termId + 1]!);
  }

  /** The id's UTF-8 bytes (a view). */
  idBytes(slot: number): Uint8Array {
    return this.#idBytes.subarray(this.#idStart[slot]!, this.#idStart[slot + 1]!);
  }

  /**
   * The metadata bytes of slots `[from, to)` in one read into a reused buffer (valid until the next range is read);
   * slot `s`'s are at `[offset(s), offset(s + 1))`.
   */
  metasOfRange(from: number, to: number): { bytes: Uint8Array; offset: (slot: number) => number } {
    const first = this.#metaStart[from]!;
    const bytes = this.#readRange(this.#layout.metas + first, this.#metaStart[to]! - first);
    return { bytes, offset: (slot) => this.#metaStart[slot]! - first };
  }

  /** Ranges of slots whose metadata is about `bytes` each (at least one slot), for reading in slices. */
  *metaSlices(bytes: number): Generator<[number, number]> {
    const size = (slot: number) => this.#metaStart[slot + 1]! - this.#metaStart[slot]!;
    for (let from = 0; from < this.documents;) {
      let to = from, taken = 0;
      while (to < this.documents && (to === from || taken + size(to) <= bytes)) taken += size(to++);
      yield [from, to];
      from = to;
    }
  }

  /** Reads into the range buffer, grown as needed and kept (a compaction reads many ranges of about one size). */
  #readRange(position: number, length: number): Uint8Array {
    if (length > this.#rangeScratch.length) {
      this.#rangeScratch = new Uint8Array(Math.max(length, 2 * this.#rangeScratch.length));
    }
    const into = this.#rangeScratch.subarray(0, length);
    this.#readInto(position, into);
    return into;
  }

  /** Reads into the reused scratch buffer (valid until the next read). */
  #read(position: number, length: number): Uint8Array {
    if (length > this.#scratch.length) {
      let size = this.#scratch.length;
      while (size < length) size *= 2;
      this.#scratch = new Uint8Array(size);
    }
    const into = this.#scratch.subarray(0, length);
    this.#readInto(position, into);
    return this.#scratch;
  }

  #readInto(position: number, into: Uint8Array): void {
    const file = this.#file;
    if (!file) throw new RangeError(`Segment ${this.path} is closed`);
    readFullySync(file, position, into);
  }

  /** Closes the file; reads fail afterwards. */
  close(): void {
    this.#file?.close();
    this.#file = undefined;
  }
}

/**
 * True when the file at `path` starts as a segment does (false when it is missing or another format).
 *
 * @example
 * ```ts
 * await isSegment("/var/lib/homed/vector/knowledge/snap-3.bin"); // true
 * ```
 */
export async function isSegment(path: string): Promise<boolean> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
  try {
    const head = await readAt(file, 0, MAGIC.length);
    return head.length === MAGIC.length && MAGIC.every((byte, i) => head[i] === byte);
  } finally {
    file.close();
  }
}
