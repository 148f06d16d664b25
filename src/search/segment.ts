/**
 * A segment: an index's documents at its last compaction, in one file searched where it lies. What a search needs at
 * every step stays in memory — the sorted term dictionary (terms packed as UTF-8, their document frequencies and where
 * their postings are), the ids (packed, with a hash order for lookup), and per document its norm, whether it is
 * still live and where its terms and metadata are: ≈ 30 bytes a document and 20 a term. The postings, each
 * document's terms and the metadata stay in the file and are read when a query, a candidate or a deletion asks for
 * them (positioned reads; the operating system's page cache, not this process, holds what is read often).
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
 * @module
 */

import { crc32 } from "./crc32.ts";
import type { DocMeta } from "./inverted_index.ts";
import type { IndexPart, Postings } from "./ranking.ts";
import { FILTER_FIELD } from "./ranking.ts";
import { SnapshotError } from "./snapshot.ts";

/** The first bytes of a segment file. */
export const SEGMENT_MAGIC = [0x48, 0x56, 0x53, 0x33]; // "HVS3"
/** The header's size: magic, CRC, six counts, zeros. */
export const SEGMENT_HEADER_BYTES = 64;
const MAGIC = SEGMENT_MAGIC;
const HEADER_BYTES = SEGMENT_HEADER_BYTES;
const CHUNK = 1 << 20;
const TILDE = 0x7e;
const CARET = 0x5e;
const EQUALS = FILTER_FIELD.charCodeAt(0);

/** The counts in a segment's header. */
interface Counts {
  documents: number;
  terms: number;
  pairs: number;
  termBytes: number;
  idBytes: number;
  metaBytes: number;
}

/** Where each section starts (byte offsets), and where the file ends. */
interface Layout {
  termBytes: number;
  termStart: number;
  df: number;
  postStart: number;
  idBytes: number;
  idStart: number;
  idOrder: number;
  docStart: number;
  metaStart: number;
  norms: number;
  postings: number;
  docTerms: number;
  metas: number;
  end: number;
}

const pad = (bytes: number) => (bytes + 3) & ~3;

function layoutOf(c: Counts): Layout {
  let at = HEADER_BYTES;
  const next = (bytes: number) => {
    const start = at;
    at += pad(bytes);
    return start;
  };
  return {
    termBytes: next(c.termBytes),
    termStart: next(4 * (c.terms + 1)),
    df: next(4 * c.terms),
    postStart: next(4 * (c.terms + 1)),
    idBytes: next(c.idBytes),
    idStart: next(4 * (c.documents + 1)),
    idOrder: next(4 * c.documents),
    docStart: next(4 * (c.documents + 1)),
    metaStart: next(4 * (c.documents + 1)),
    norms: next(4 * c.documents),
    postings: next(8 * c.pairs),
    docTerms: next(8 * c.pairs),
    metas: next(c.metaBytes),
    get end() {
      return at;
    },
  };
}

/** FNV-1a over `bytes[from, to)`: the hash ids are filed by (the writer sorts by it). */
export function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

const idScratch = new Uint8Array(1024);

/**
 * The hash a segment files an id by (FNV-1a over its UTF-8 bytes): what {@link SegmentIndex.idDigest} sums, so a
 * caller can sum the same over the ids it holds elsewhere (memory.db's rows) and compare.
 *
 * @example
 * ```ts
 * idHash("doc-1"); // a 32-bit unsigned integer
 * ```
 */
export function idHash(id: string): number {
  const bytes = id.length * 3 <= idScratch.length ? idScratch : new Uint8Array(id.length * 3);
  return hashBytes(bytes, 0, encoder.encodeInto(id, bytes).written);
}

/** Compares `a[aFrom, aTo)` with `b[bFrom, bTo)` byte by byte: the order terms are sorted in. */
export function compareBytes(
  a: Uint8Array,
  aFrom: number,
  aTo: number,
  b: Uint8Array,
  bFrom: number,
  bTo: number,
): number {
  const length = Math.min(aTo - aFrom, bTo - bFrom);
  for (let i = 0; i < length; i++) {
    const d = a[aFrom + i]! - b[bFrom + i]!;
    if (d) return d;
  }
  return aTo - aFrom - (bTo - bFrom);
}

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
  #alive: Uint8Array;
  #live: number;
  #normSum = 0;
  #scratch = new Uint8Array(4096);
  #rangeScratch = new Uint8Array(0);
  #key = new Uint8Array(256);
  #accumulator: Float32Array;
  #touched: Int32Array;

  private constructor(path: string, file: Deno.FsFile, counts: Counts, sections: Sections) {
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
    this.#alive = new Uint8Array(counts.documents).fill(1);
    this.#live = counts.documents;
    for (const norm of this.#norms) this.#normSum += norm;
    this.#accumulator = new Float32Array(counts.documents);
    this.#touched = new Int32Array(counts.documents);
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
      return new Segment(path, file, counts, sections);
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
      this.#accumulator,
      this.#touched,
      this.#scratch,
      this.#rangeScratch,
    ].reduce((sum, array) => sum + array.byteLength, 0);
  }

  aliveFlags(): Uint8Array {
    return this.#alive;
  }

  norms(): Float32Array {
    return this.#norms;
  }

  scratch(): { accumulator: Float32Array; touched: Int32Array } {
    return { accumulator: this.#accumulator, touched: this.#touched };
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
    return decoder.decode(this.#idBytes.subarray(this.#idStart[slot]!, this.#idStart[slot + 1]!));
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

  meta(slot: number): DocMeta {
    const from = this.#metaStart[slot]!, to = this.#metaStart[slot + 1]!;
    const bytes = this.#read(this.#layout.metas + from, to - from);
    return JSON.parse(decoder.decode(bytes.subarray(0, to - from))) as DocMeta;
  }

  docTerms(slot: number): { termIds: Int32Array; weights: Float32Array } {
    const from = this.#docStart[slot]!, count = this.#docStart[slot + 1]! - from;
    const bytes = this.#readFresh(this.#layout.docTerms + 8 * from, 8 * count);
    return {
      termIds: new Int32Array(bytes.buffer, 0, count),
      weights: new Float32Array(bytes.buffer, 4 * count, count),
    };
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
   * The document terms of slots `[from, to)` in one read into a reused buffer: `terms(slot)` gives views of a slot's
   * term ids and weights, valid until the next range is read.
   */
  docTermsOfRange(from: number, to: number): (slot: number) => { termIds: Int32Array; weights: Float32Array } {
    const first = this.#docStart[from]!;
    const bytes = this.#readRange(this.#layout.docTerms + 8 * first, 8 * (this.#docStart[to]! - first));
    return (slot) => {
      const start = this.#docStart[slot]!, count = this.#docStart[slot + 1]! - start;
      const at = bytes.byteOffset + 8 * (start - first);
      return {
        termIds: new Int32Array(bytes.buffer, at, count),
        weights: new Float32Array(bytes.buffer, at + 4 * count, count),
      };
    };
  }

  /**
   * The metadata bytes of slots `[from, to)` in one read into the same reused buffer as {@link docTermsOfRange};
   * slot `s`'s are at `[offset(s), offset(s + 1))`.
   */
  metasOfRange(from: number, to: number): { bytes: Uint8Array; offset: (slot: number) => number } {
    const first = this.#metaStart[from]!;
    const bytes = this.#readRange(this.#layout.metas + first, this.#metaStart[to]! - first);
    return { bytes, offset: (slot) => this.#metaStart[slot]! - first };
  }

  /** Ranges of slots whose document terms are about `bytes` each (at least one slot), for reading in slices. */
  *slices(bytes: number, of: "terms" | "metas" = "terms"): Generator<[number, number]> {
    const size = of === "terms"
      ? (slot: number) => 8 * (this.#docStart[slot + 1]! - this.#docStart[slot]!)
      : (slot: number) => this.#metaStart[slot + 1]! - this.#metaStart[slot]!;
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

  #readFresh(position: number, length: number): Uint8Array {
    const into = new Uint8Array(length);
    this.#readInto(position, into);
    return into;
  }

  #readInto(position: number, into: Uint8Array): void {
    const file = this.#file;
    if (!file) throw new RangeError(`Segment ${this.path} is closed`);
    file.seekSync(position, Deno.SeekMode.Start);
    let done = 0;
    while (done < into.length) {
      const read = file.readSync(into.subarray(done));
      if (read === null || read === 0) {
        throw new SnapshotError(position + done, `the file ended ${into.length - done} bytes early`);
      }
      done += read;
    }
  }

  /** Closes the file; reads fail afterwards. */
  close(): void {
    this.#file?.close();
    this.#file = undefined;
  }
}

/** The sections kept in memory. */
interface Sections {
  termBytes: Uint8Array;
  termStart: Uint32Array;
  df: Int32Array;
  postStart: Uint32Array;
  idBytes: Uint8Array;
  idStart: Uint32Array;
  idOrder: Uint32Array;
  idHash: Uint32Array;
  docStart: Uint32Array;
  metaStart: Uint32Array;
  norms: Float32Array;
}

async function readAt(file: Deno.FsFile, position: number, length: number, buffer?: Uint8Array): Promise<Uint8Array> {
  const into = buffer ? buffer.subarray(0, length) : new Uint8Array(length);
  await file.seek(position, Deno.SeekMode.Start);
  let done = 0;
  while (done < length) {
    const read = await file.read(into.subarray(done));
    if (read === null || read === 0) break;
    done += read;
  }
  return done === length ? into : into.subarray(0, done);
}

/** Reads and checks the resident sections. */
async function readSections(
  file: Deno.FsFile,
  c: Counts,
  layout: Layout,
  pause: () => Promise<void>,
): Promise<Sections> {
  // The checks below walk every term and id: they yield every 16k of them (a compaction opens what it wrote).
  const due = (i: number) => (i & 16383) === 16383;
  const u32 = async (at: number, count: number) => new Uint32Array((await readAt(file, at, 4 * count)).buffer);
  const termBytes = await readAt(file, layout.termBytes, c.termBytes);
  const termStart = await u32(layout.termStart, c.terms + 1);
  const df = new Int32Array((await readAt(file, layout.df, 4 * c.terms)).buffer);
  const postStart = await u32(layout.postStart, c.terms + 1);
  const idBytes = await readAt(file, layout.idBytes, c.idBytes);
  const idStart = await u32(layout.idStart, c.documents + 1);
  const idOrder = await u32(layout.idOrder, c.documents);
  const docStart = await u32(layout.docStart, c.documents + 1);
  const metaStart = await u32(layout.metaStart, c.documents + 1);
  const norms = new Float32Array((await readAt(file, layout.norms, 4 * c.documents)).buffer);
  const rising = async (array: Uint32Array, last: number, what: string, at: number) => {
    if (array[0] !== 0 || array[array.length - 1] !== last) {
      throw new SnapshotError(at, `the ${what} do not run from 0 to ${last}`);
    }
    for (let i = 1; i < array.length; i++) {
      if (array[i]! < array[i - 1]!) throw new SnapshotError(at + 4 * i, `the ${what} go down at ${i}`);
      if (due(i)) await pause();
    }
  };
  await rising(termStart, c.termBytes, "term starts", layout.termStart);
  await rising(postStart, c.pairs, "posting starts", layout.postStart);
  await rising(idStart, c.idBytes, "id starts", layout.idStart);
  await rising(docStart, c.pairs, "document starts", layout.docStart);
  await rising(metaStart, c.metaBytes, "metadata starts", layout.metaStart);
  for (let t = 0; t < c.terms; t++) {
    if (due(t)) await pause();
    if (postStart[t + 1]! - postStart[t]! !== df[t]) {
      throw new SnapshotError(
        layout.df + 4 * t,
        `term ${t} has ${postStart[t + 1]! - postStart[t]!} postings, df ${df[t]}`,
      );
    }
    if (
      t > 0 &&
      compareBytes(termBytes, termStart[t - 1]!, termStart[t]!, termBytes, termStart[t]!, termStart[t + 1]!) >= 0
    ) {
      throw new SnapshotError(layout.termBytes + termStart[t]!, `the terms are not in order at ${t}`);
    }
  }
  const idHash = new Uint32Array(c.documents);
  for (let slot = 0; slot < c.documents; slot++) {
    idHash[slot] = hashBytes(idBytes, idStart[slot]!, idStart[slot + 1]!);
    if (due(slot)) await pause();
  }
  const seen = new Uint8Array(c.documents);
  const same = (a: number, b: number) =>
    compareBytes(idBytes, idStart[a]!, idStart[a + 1]!, idBytes, idStart[b]!, idStart[b + 1]!) === 0;
  for (let i = 0, runStart = 0; i < c.documents; i++) {
    if (due(i)) await pause();
    const slot = idOrder[i]!;
    if (slot >= c.documents || seen[slot]) {
      throw new SnapshotError(layout.idOrder + 4 * i, `the id order is not a permutation`);
    }
    seen[slot] = 1;
    if (i > 0 && idHash[idOrder[i - 1]!]! > idHash[slot]!) {
      throw new SnapshotError(layout.idOrder + 4 * i, `the id order is not sorted`);
    }
    if (i > 0 && idHash[idOrder[i - 1]!] !== idHash[slot]) runStart = i;
    // Ids of one hash (a run, rarely longer than one) are compared with each other.
    for (let j = runStart; j < i; j++) {
      if (same(idOrder[j]!, slot)) {
        const id = decoder.decode(idBytes.subarray(idStart[slot]!, idStart[slot + 1]!));
        throw new SnapshotError(layout.idBytes + idStart[slot]!, `the segment holds the id "${id}" twice`);
      }
    }
  }
  return { termBytes, termStart, df, postStart, idBytes, idStart, idOrder, idHash, docStart, metaStart, norms };
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
