/**
 * The journal's offsets as `TextMemory` keeps them (the index and its file are `journal_index.ts`): loaded at the first
 * lookup — opening the journal stays as cheap as its marks make it — and extended from the journal past what they
 * cover; appends add their lines while the offsets cover the journal's end; each sync appends the new records to the
 * file as one batch. Never trusted on their word: the file's last line is read back when it is loaded, every line a
 * lookup reads must hold an entry of the hash recorded for it, and on any mismatch the offsets are rebuilt from the
 * journal, which then answers. A rewrite of the journal (forgetting, setting a damaged one aside) removes the file
 * before it, so a crash in between leaves no offsets rather than another journal's.
 *
 * @module
 */

import { atomicWriteBytes } from "../../fs/atomic_write.ts";
import { idHash, INDEX_SUFFIX, JournalIndex, readLines } from "./journal_index.ts";
import type { MemoryEntry } from "./text_memory.ts";

/** Reads the journal's entries from byte `from` (a line's start) to its last whole line; returns where that ends. */
export type JournalScan = (
  from: number,
  visit: (entry: MemoryEntry, offset: number, length: number) => void,
) => Promise<{ validBytes: number }>;

/** What the offsets need of their journal. */
export interface OffsetsJournal {
  path: string;
  scan: JournalScan;
  /** The entry on a line (without its newline), or undefined. */
  parse: (line: string) => MemoryEntry | undefined;
  /** Bytes of whole lines the journal holds now. */
  bytes: () => number;
}

/** A cut of the offsets: what a save writes. */
export interface OffsetsCut {
  index: JournalIndex;
  count: number;
  end: number;
}

/** The offsets of one journal. */
export class JournalOffsets {
  #journal: OffsetsJournal;
  /** Loaded by a lookup; undefined before, and while a pass reads or extends it. */
  #index: JournalIndex | undefined;
  /** Records in the file, which ends right after them; undefined: rewrite it whole at the next save. */
  #saved: number | undefined;
  /** Loading or rebuilding, one at a time. */
  #work: Promise<unknown> = Promise.resolve();
  /** Counts rewrites of the journal: what a pass read across one is thrown away. */
  #generation = 0;

  /**
   * @example
   * ```ts
   * declare const journal: OffsetsJournal;
   * const offsets = new JournalOffsets(journal);
   * await offsets.read(new Set(["e1"])); // [{ eventId: "e1", … }, …]
   * ```
   */
  constructor(journal: OffsetsJournal) {
    this.#journal = journal;
  }

  /** An entry appended at `offset` (`length` bytes): recorded when the offsets cover the journal up to it. */
  appended(eventId: string, offset: number, length: number): void {
    if (this.#index?.end === offset) this.#index.add(idHash(eventId), offset, length);
  }

  /**
   * The entries of `eventIds` in journal order, read through the offsets (rebuilt once when a line read does not
   * match); undefined when freshly rebuilt offsets do not match either (the journal is being rewritten).
   */
  async read(eventIds: ReadonlySet<string>): Promise<MemoryEntry[] | undefined> {
    for (const rebuild of [false, true]) {
      const entries = await this.#readIndexed(await this.#indexed(rebuild), eventIds);
      if (entries) return entries;
    }
    return undefined;
  }

  async #readIndexed(index: JournalIndex, eventIds: ReadonlySet<string>): Promise<MemoryEntry[] | undefined> {
    const records = [...new Set([...eventIds].flatMap((id) => index.matches(idHash(id))))].sort((a, b) => a - b);
    const lines = await readLines(this.#journal.path, index, records).catch(() => undefined);
    if (!lines) return undefined;
    const entries: MemoryEntry[] = [];
    for (let i = 0; i < lines.length; i++) {
      const entry = this.#journal.parse(lines[i]!);
      if (!entry || idHash(entry.eventId) !== index.hash(records[i]!)) return undefined;
      // Another id of the same hash: read, and left.
      if (eventIds.has(entry.eventId)) entries.push(entry);
    }
    return entries;
  }

  /** The offsets covering the journal's whole lines: loaded, extended, or (`rebuild`) made anew from the journal. */
  #indexed(rebuild: boolean): Promise<JournalIndex> {
    const work = this.#work.then(() => this.#prepare(rebuild));
    this.#work = work.catch(() => {});
    return work;
  }

  async #prepare(rebuild: boolean): Promise<JournalIndex> {
    for (let attempt = 0;; attempt++) {
      const generation = this.#generation;
      // Detached while it is read and extended: appends meanwhile are found by the scan, or by the next pass.
      let index = rebuild ? undefined : this.#index;
      this.#index = undefined;
      if (!index && !rebuild) index = await this.#readFile();
      if (!index) {
        index = new JournalIndex();
        this.#saved = undefined;
      }
      const covered = index;
      if (covered.end < this.#journal.bytes()) {
        const { validBytes } = await this.#journal.scan(covered.end, (entry, offset, length) => {
          if (offset >= covered.end) covered.add(idHash(entry.eventId), offset, length);
        });
        covered.end = Math.max(covered.end, validBytes);
      }
      if (generation !== this.#generation) {
        // The journal was rewritten under this pass: what it read may be the old one's. Not kept; tried again, and
        // after a few rewrites in a row handed back as it is (a lookup checks every line it reads).
        if (attempt >= 3) return covered;
        rebuild = false; // detached above: what is there now was made by the rewrite
        continue;
      }
      this.#index = covered;
      if (covered.end >= this.#journal.bytes() || attempt >= 2) return covered;
      rebuild = false;
    }
  }

  /** The file's offsets, when its last line is this journal's; undefined when it is missing or another journal's. */
  async #readFile(): Promise<JournalIndex | undefined> {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(`${this.#journal.path}${INDEX_SUFFIX}`);
    } catch {
      return undefined;
    }
    const { index, whole } = JournalIndex.decode(bytes, this.#journal.bytes());
    const last = index.count - 1;
    if (last >= 0) {
      const lines = await readLines(this.#journal.path, index, [last]).catch(() => undefined);
      const entry = lines && this.#journal.parse(lines[0]!);
      if (!entry || idHash(entry.eventId) !== index.hash(last)) return undefined;
    }
    // The scan goes on from the index's end: it must be a line's end.
    const lineEnd = last >= 0 ? index.offset(last) + index.length(last) : 0;
    if (index.end !== lineEnd && !(await newlineBefore(this.#journal.path, index.end))) return undefined;
    this.#saved = whole ? index.count : undefined;
    return index;
  }

  /** Before the journal is rewritten: the offsets are dropped, and their file removed. */
  async dropForRewrite(): Promise<void> {
    this.#generation++;
    this.#index = undefined;
    this.#saved = undefined;
    await removeOffsets(this.#journal.path);
  }

  /** After the journal was rewritten with the lines of `eventIds` (`lengths` bytes each, from its start). */
  rewritten(eventIds: readonly string[], lengths: readonly number[]): void {
    const index = new JournalIndex();
    let offset = 0;
    eventIds.forEach((id, n) => {
      index.add(idHash(id), offset, lengths[n]!);
      offset += lengths[n]!;
    });
    this.#generation++;
    this.#index = index;
    this.#saved = undefined;
  }

  /** What to save: taken before the journal's fsync, so the file never covers a line the fsync did not. */
  cut(): OffsetsCut | undefined {
    const index = this.#index;
    return index && { index, count: index.count, end: index.end };
  }

  /**
   * Appends the records of `cut` not in the file yet as one batch, or rewrites the file whole. A disk that cannot take
   * them fails nothing else: the file is rewritten whole at the next save (it is read up to its first bad batch).
   */
  async save(cut: OffsetsCut | undefined): Promise<void> {
    // Offsets replaced since the cut (a rebuild, a forget) are saved with the next cut.
    if (!cut || cut.index !== this.#index) return;
    const path = `${this.#journal.path}${INDEX_SUFFIX}`;
    const saved = this.#saved;
    try {
      if (saved === undefined) {
        await atomicWriteBytes(path, cut.index.encode(0, cut.count, cut.end), { mode: 0o600 });
      } else if (cut.count > saved) {
        await appendBatch(path, cut.index.encode(saved, cut.count, cut.end));
      } else return;
      this.#saved = cut.count;
    } catch {
      this.#saved = undefined;
    }
  }
}

/** Appends `batch` to the file at `path`; a write that fails part way is cut off again, as the journal's. */
async function appendBatch(path: string, batch: Uint8Array): Promise<void> {
  const file = await Deno.open(path, { append: true, create: true, mode: 0o600 });
  try {
    const size = (await file.stat()).size;
    let written = 0;
    try {
      while (written < batch.length) written += await file.write(batch.subarray(written));
    } catch (error) {
      if (written > 0) await file.truncate(size).catch(() => {});
      throw error;
    }
  } finally {
    file.close();
  }
}

/** Whether byte `offset` − 1 of the file at `path` is a newline (or `offset` is its start). */
async function newlineBefore(path: string, offset: number): Promise<boolean> {
  if (offset === 0) return true;
  const file = await Deno.open(path, { read: true }).catch(() => undefined);
  if (!file) return false;
  try {
    await file.seek(offset - 1, Deno.SeekMode.Start);
    const byte = new Uint8Array(1);
    return (await file.read(byte)) === 1 && byte[0] === 0x0a;
  } finally {
    file.close();
  }
}

/**
 * Removes the offsets file of the journal at `journalPath` (none is fine): before the journal is rewritten.
 *
 * @example
 * ```ts
 * await removeOffsets("/var/lib/homed/memory/candidates.jsonl");
 * ```
 */
export async function removeOffsets(journalPath: string): Promise<void> {
  await Deno.remove(`${journalPath}${INDEX_SUFFIX}`).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
}
