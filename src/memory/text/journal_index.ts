/**
 * The journal's offset index (`candidates.jsonl.offsets`): for every entry of the journal, in journal order, a 32-bit
 * hash of its event id and where its line lies (byte offset and length, the newline included). `TextMemory.lookup`
 * finds the asked event ids' lines through it and reads only those (recall's sources and the console's provenance:
 * a handful of lines, not the year's 33 MB).
 *
 * On disk the file is a sequence of batches, each appended whole after a sync of the journal: the magic `HJB1`, the
 * number of records before the batch and in it (u32 each), four zero bytes and the journal bytes the index covers
 * after the batch (f64, a line's end), then per record the hash (u32), the length (u32) and the offset (f64), and a
 * CRC-32 of the batch's bytes before it; little-endian. Reading stops at the first batch that is torn, fails its
 * checksum, does not follow the one before, goes backwards or covers more than the journal holds: what comes before
 * it is kept, and the rest of the journal is indexed again from there. Nothing in the file is
 * trusted on its word: the index's last line is read back at load, and every line a lookup reads must start after a
 * newline, end with one and hold an entry of the hash recorded for it — otherwise the index is rebuilt from the
 * journal (see `TextMemory`).
 *
 * In memory: three typed arrays by record and a chained hash table (≈ 26 bytes an entry, ≈ 2.6 MB for a year).
 *
 * @module
 */

import { crc32 } from "../../search/crc32.ts";

/** The index beside the journal at `<journal>` + this. */
export const INDEX_SUFFIX = ".offsets";

const MAGIC = 0x3142_4a48; // "HJB1"
const HEADER = 24;
const RECORD = 16;

/**
 * A 32-bit FNV-1a hash of an event id's UTF-16 code units: the index keeps hashes, not ids (a collision only makes a
 * lookup read a line it then drops).
 *
 * @example
 * ```ts
 * idHash("y001-1") === idHash("y001-1"); // true
 * ```
 */
export function idHash(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** Records of the journal's lines, in journal order, with a hash table over their event ids' hashes. */
export class JournalIndex {
  /** Records held. */
  count = 0;
  /** The journal bytes covered: every entry before this byte has its record (a line's end). */
  end = 0;
  #hash = new Uint32Array(256);
  #offset = new Float64Array(256);
  #length = new Uint32Array(256);
  /** The next record in the same bucket, or -1. */
  #next = new Int32Array(256);
  /** Each bucket's last record, or -1; power-of-two size, at least the record count. */
  #head = new Int32Array(256).fill(-1);

  /**
   * Adds the record of the line at `offset` (`length` bytes, its newline included) of the entry whose event id hashes
   * to `hash`; the index then covers the journal up to that line's end.
   *
   * @example
   * ```ts
   * const index = new JournalIndex();
   * index.add(idHash("e1"), 0, 120);
   * index.matches(idHash("e1")); // [0]
   * ```
   */
  add(hash: number, offset: number, length: number): void {
    const at = this.count;
    if (at === this.#hash.length) this.#grow();
    this.#hash[at] = hash;
    this.#offset[at] = offset;
    this.#length[at] = length;
    const bucket = hash & (this.#head.length - 1);
    this.#next[at] = this.#head[bucket]!;
    this.#head[bucket] = at;
    this.count++;
    this.end = offset + length;
  }

  #grow(): void {
    const size = this.#hash.length * 2;
    const copy = <T extends Uint32Array | Float64Array | Int32Array>(old: T, fresh: T) => (fresh.set(old), fresh);
    this.#hash = copy(this.#hash, new Uint32Array(size));
    this.#offset = copy(this.#offset, new Float64Array(size));
    this.#length = copy(this.#length, new Uint32Array(size));
    this.#next = new Int32Array(size);
    // The table doubles with the records (a load factor of at most one): rechained in record order.
    this.#head = new Int32Array(size).fill(-1);
    for (let at = 0; at < this.count; at++) {
      const bucket = this.#hash[at]! & (size - 1);
      this.#next[at] = this.#head[bucket]!;
      this.#head[bucket] = at;
    }
  }

  /** The records whose hash is `hash`, in journal order. */
  matches(hash: number): number[] {
    const found: number[] = [];
    for (let at = this.#head[hash & (this.#head.length - 1)]!; at !== -1; at = this.#next[at]!) {
      if (this.#hash[at] === hash) found.push(at);
    }
    return found.reverse();
  }

  hash(record: number): number {
    return this.#hash[record]!;
  }

  offset(record: number): number {
    return this.#offset[record]!;
  }

  length(record: number): number {
    return this.#length[record]!;
  }

  /** Records `[from, to)` as one batch of the file, saying the index covers `end` bytes after it. */
  encode(from: number, to: number, end: number): Uint8Array {
    const bytes = new Uint8Array(HEADER + RECORD * (to - from) + 4);
    const view = new DataView(bytes.buffer);
    view.setUint32(0, MAGIC, true);
    view.setUint32(4, from, true);
    view.setUint32(8, to - from, true);
    view.setFloat64(16, end, true);
    for (let record = from, at = HEADER; record < to; record++, at += RECORD) {
      view.setUint32(at, this.#hash[record]!, true);
      view.setUint32(at + 4, this.#length[record]!, true);
      view.setFloat64(at + 8, this.#offset[record]!, true);
    }
    view.setUint32(bytes.length - 4, crc32(bytes.subarray(0, bytes.length - 4)), true);
    return bytes;
  }

  /**
   * The index in `bytes` (a whole index file), read up to the first batch that is torn, damaged, out of order or
   * beyond `journalBytes`; `whole` is false when such a batch (or anything after it) was left out.
   *
   * @example
   * ```ts
   * const index = new JournalIndex();
   * index.add(idHash("e1"), 0, 120);
   * JournalIndex.decode(index.encode(0, 1, 120), 120).index.count; // 1
   * ```
   */
  static decode(bytes: Uint8Array, journalBytes: number): { index: JournalIndex; whole: boolean } {
    const index = new JournalIndex();
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = 0;
    while (at < bytes.length) {
      if (bytes.length - at < HEADER + 4 || view.getUint32(at, true) !== MAGIC) break;
      const count = view.getUint32(at + 8, true), end = view.getFloat64(at + 16, true);
      const size = HEADER + RECORD * count + 4;
      if (bytes.length - at < size) break;
      if (crc32(bytes.subarray(at, at + size - 4)) !== view.getUint32(at + size - 4, true)) break;
      // A batch written after the file was lost (or one left of another file) does not follow the records before.
      if (view.getUint32(at + 4, true) !== index.count) break;
      if (!Number.isSafeInteger(end) || end < index.end || end > journalBytes) break;
      const before = { count: index.count, end: index.end };
      let inOrder = true;
      for (let r = at + HEADER; r < at + size - 4; r += RECORD) {
        const offset = view.getFloat64(r + 8, true), length = view.getUint32(r + 4, true);
        if (!Number.isSafeInteger(offset) || offset < index.end || length === 0 || offset + length > end) {
          inOrder = false;
          break;
        }
        index.add(view.getUint32(r, true), offset, length);
      }
      if (!inOrder) {
        // The batch is dropped whole: the records it added are forgotten again.
        index.#truncate(before.count, before.end);
        break;
      }
      index.end = end;
      at += size;
    }
    return { index, whole: at === bytes.length };
  }

  /** Keeps only the first `count` records, covering `end` bytes. */
  #truncate(count: number, end: number): void {
    for (let record = this.count - 1; record >= count; record--) {
      // Records are unchained newest first: each is its bucket's head when its turn comes.
      this.#head[this.#hash[record]! & (this.#head.length - 1)] = this.#next[record]!;
    }
    this.count = count;
    this.end = end;
  }
}

/**
 * The lines of `records` (ascending) read from the journal at `path`, without their newlines, adjacent lines in one
 * read; undefined when one of them is not framed as a line there (the file shorter, no newline before or at its end):
 * the index does not match the journal.
 *
 * @example
 * ```ts
 * declare const index: JournalIndex;
 * await readLines("/var/lib/homed/memory/candidates.jsonl", index, index.matches(idHash("e1")));
 * ```
 */
export async function readLines(
  path: string,
  index: JournalIndex,
  records: readonly number[],
): Promise<string[] | undefined> {
  const lines: string[] = [];
  if (!records.length) return lines;
  const decoder = new TextDecoder();
  const file = await Deno.open(path, { read: true });
  try {
    for (let first = 0; first < records.length;) {
      let last = first;
      while (
        last + 1 < records.length &&
        index.offset(records[last + 1]!) === index.offset(records[last]!) + index.length(records[last]!)
      ) last++;
      const start = index.offset(records[first]!);
      // One byte before the first line: it must be a newline (or the journal's start).
      const from = Math.max(0, start - 1);
      const bytes = new Uint8Array(index.offset(records[last]!) + index.length(records[last]!) - from);
      await file.seek(from, Deno.SeekMode.Start);
      for (let done = 0; done < bytes.length;) {
        const read = await file.read(bytes.subarray(done));
        if (read === null) return undefined;
        done += read;
      }
      if (start > 0 && bytes[0] !== 0x0a) return undefined;
      for (let r = first; r <= last; r++) {
        const at = index.offset(records[r]!) - from, length = index.length(records[r]!);
        if (bytes[at + length - 1] !== 0x0a) return undefined;
        lines.push(decoder.decode(bytes.subarray(at, at + length - 1)));
      }
      first = last + 1;
    }
  } finally {
    file.close();
  }
  return lines;
}
