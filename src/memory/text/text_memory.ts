/**
 * TextMemory: the append-only JSONL journal of memory candidates (what was said, by whom, in which turn). The
 * after-turn hook writes each exchange here — no LLM call per turn; the distiller reads it later. One `write` per
 * line, so a kill leaves at most a torn last line, which the next open cuts off with a warning: it never blocks
 * start-up and never hides an acknowledged entry.
 *
 * Marks (`<journal>.marks`, written at each sync and at close): where every {@link MARK_EVERY}th entry starts, and how
 * far the journal was whole when they were written, with its last entry there. Opening reads only what was appended
 * after that (a year of a household is ≈ 100k lines, 33 MB: reading and parsing all of it at every start cost ≈ 1 s
 * and ≈ 50 MB of the daemon's resident memory that garbage collection never gave back), and a read from a cursor or
 * of the last few entries starts at the mark before them. Marks that do not match the journal (missing, damaged, the
 * journal shorter, or another entry where they say one ends) are ignored: the journal is then read whole, once.
 *
 * Offsets (`<journal>.offsets`, `journal_offsets.ts`): where each entry's line lies, by a hash of its event id, so
 * `lookup` reads only the lines asked for; loaded at the first lookup, saved at each sync, rebuilt from the journal
 * whenever a line read back does not match.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { atomicWriteBytes, atomicWriteText } from "../../fs/atomic_write.ts";
import type { DamagedFiles } from "../../fs/set_aside.ts";
import type { Trust } from "../../identity/trust.ts";
import { JournalOffsets, removeOffsets } from "./journal_offsets.ts";

/** One candidate, as the memory facade's `observe` takes it. */
export interface MemoryEntry {
  eventId: string;
  /** Milliseconds since the epoch. */
  time: number;
  role: "user" | "assistant";
  source: string;
  sender: string;
  text: string;
  /**
   * The trust of the turn's sender (both halves of an exchange carry it). Lines written before it was recorded have
   * none and count as the household's: a guest's recall never holds them.
   */
  trust?: Trust;
}

function isEntry(value: unknown): value is MemoryEntry {
  const entry = value as Record<string, unknown> | null;
  return !!entry && typeof entry === "object" && typeof entry.eventId === "string" &&
    typeof entry.time === "number" && (entry.role === "user" || entry.role === "assistant") &&
    typeof entry.source === "string" && typeof entry.sender === "string" && typeof entry.text === "string";
}

/** How much of the journal one read takes. */
const SCAN_CHUNK = 256 * 1024;

/** Entries between two marks. */
export const MARK_EVERY = 1024;

/** A position in the journal: the entry at `index` starts at byte `offset`. */
interface Mark {
  index: number;
  offset: number;
}

/** The marks file: marks, and the whole journal's end (`bytes`, `count` entries, the last one's event id) then. */
interface MarksFile {
  version: 1;
  every: number;
  marks: Array<[number, number]>;
  count: number;
  bytes: number;
  lastEventId: string | null;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

/** The journal. */
export class TextMemory {
  readonly path: string;
  #file: Deno.FsFile;
  #count: number;
  /** Bytes of whole lines: where the next entry starts. */
  #bytes: number;
  #marks: Mark[];
  #lastEventId: string | null;
  /** The marks as last written, to write them only when they changed. */
  #marksWritten = "";
  #encoder = new TextEncoder();
  /** Appends run one after another, in call order; close waits for them. */
  #tail: Promise<void> = Promise.resolve();
  /** Where each entry's line lies, for `lookup`. */
  #offsets: JournalOffsets;

  private constructor(path: string, file: Deno.FsFile, state: JournalState) {
    this.path = path;
    this.#file = file;
    this.#count = state.count;
    this.#bytes = state.bytes;
    this.#marks = state.marks;
    this.#lastEventId = state.lastEventId;
    this.#offsets = new JournalOffsets({
      path,
      scan: async (from, visit) =>
        await TextMemory.#scan(path, (entry, _, offset, length) => visit(entry, offset, length), {
          index: 0,
          offset: from,
        }),
      parse: parseEntry,
      bytes: () => this.#bytes,
    });
  }

  /**
   * Opens (or creates) the journal, cutting off a torn last line and skipping (with a warning) lines that are not
   * entries.
   *
   * @example
   * ```ts
   * import { join } from "node:path";
   * import { log } from "../../log/logging.ts";
   *
   * const dataDir = "/var/lib/homed"; // daemon.data_dir
   * const journal = await TextMemory.open(join(dataDir, "memory", "candidates.jsonl"), log("memory"));
   * journal.count; // entries written so far
   * ```
   */
  static async open(path: string, logger: Logger, damaged?: DamagedFiles): Promise<TextMemory> {
    // From the marks on: opening a journal of a year reads what came after its last sync, and keeps none of it.
    const known = await readMarks(`${path}${MARKS_SUFFIX}`, path);
    const from = known ? { index: known.count, offset: known.bytes } : { index: 0, offset: 0 };
    const state: JournalState = known ?? { count: 0, bytes: 0, marks: [], lastEventId: null };
    const { count, validBytes, torn, skipped } = await TextMemory.#scan(path, (entry, index, offset) => {
      if (index % MARK_EVERY === 0) state.marks.push({ index, offset });
      state.lastEventId = entry.eventId;
    }, from);
    state.count = count;
    state.bytes = validBytes;
    if (torn) {
      await Deno.truncate(path, validBytes);
      logger.warning("{path}: cut off a torn last line (a write was interrupted; it was never acknowledged)", { path });
    }
    if (skipped && damaged) {
      // Lines cut in half (or otherwise not entries) inside the journal: the file is set aside whole, and the journal
      // goes on with its intact lines — the same entries at the same indexes, so the distiller's cursor still holds.
      await TextMemory.#setAsideDamaged(path, from.offset, validBytes, skipped, damaged);
      logger.warning("{path}: {skipped} damaged lines; set the journal aside as {aside} and kept its whole lines", {
        path,
        skipped,
        aside: damaged.entries.at(-1)?.moved_to,
      });
      return await TextMemory.open(path, logger);
    }
    if (skipped) logger.warning("{path}: skipped {skipped} lines that are not memory entries", { path, skipped });
    const file = await Deno.open(path, { create: true, append: true });
    return new TextMemory(path, file, state);
  }

  /**
   * Sets the journal at `path` aside (through `damaged`, as `<path>.damaged-<ISO time>`) and writes in its place its
   * first `validBytes` with only the lines after `from` that are entries: the lines before `from` were read whole at
   * an earlier open.
   */
  static async #setAsideDamaged(
    path: string,
    from: number,
    validBytes: number,
    skipped: number,
    damaged: DamagedFiles,
  ): Promise<void> {
    const bytes = (await Deno.readFile(path)).subarray(0, validBytes);
    const lines = new TextDecoder().decode(bytes.subarray(from)).split("\n");
    const intact = lines.filter((line) => {
      try {
        return isEntry(JSON.parse(line));
      } catch {
        return false;
      }
    });
    const kept = concat(bytes.subarray(0, from), new TextEncoder().encode(intact.map((line) => `${line}\n`).join("")));
    await removeOffsets(path);
    await atomicWriteBytes(path, kept, {
      mode: 0o600,
      durable: true,
      beforeReplace: () => {
        damaged.setAside(path, `${skipped} lines are cut off or not memory entries`, {
          kept: {
            en: "the journal's whole lines (what was said in them is remembered; the damaged lines are only in the " +
              "file set aside)",
            zh: "对话日志里完整的行（其中说过的话都还记得；损坏的行只留在移走的文件里）",
          },
        });
        return true;
      },
    });
  }

  /**
   * Reads the journal in chunks, handing each entry (with its index among the entries) to `visit`, which may return
   * `false` to stop. Only whole lines count: everything after the last newline was never completed (`torn`).
   */
  static async #scan(
    path: string,
    visit: (entry: MemoryEntry, index: number, offset: number, length: number) => boolean | void,
    from: Mark = { index: 0, offset: 0 },
  ): Promise<{ count: number; validBytes: number; torn: boolean; skipped: number }> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return { count: 0, validBytes: 0, torn: false, skipped: 0 };
      throw error;
    }
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(SCAN_CHUNK);
    let pending: Uint8Array = new Uint8Array(0);
    let count = from.index, skipped = 0, validBytes = from.offset, stopped = false;
    try {
      if (from.offset) {
        // A mark must be a line's start; if the journal was changed under it, read it whole instead.
        await file.seek(from.offset - 1, Deno.SeekMode.Start);
        const before = new Uint8Array(1);
        if ((await file.read(before)) !== 1 || before[0] !== 0x0a) {
          await file.seek(0, Deno.SeekMode.Start);
          count = 0;
          validBytes = 0;
        }
      }
      for (let read = await file.read(buffer); read !== null && !stopped; read = await file.read(buffer)) {
        const chunk = pending.length ? concat(pending, buffer.subarray(0, read)) : buffer.subarray(0, read);
        let start = 0;
        for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
          const line = decoder.decode(chunk.subarray(start, newline));
          const offset = validBytes;
          validBytes += newline + 1 - start;
          start = newline + 1;
          if (line === "") continue;
          let parsed: unknown;
          try {
            parsed = JSON.parse(line);
          } catch {
            skipped++;
            continue;
          }
          if (!isEntry(parsed)) {
            skipped++;
            continue;
          }
          if (visit(parsed, count++, offset, validBytes - offset) === false) {
            stopped = true;
            break;
          }
        }
        pending = chunk.slice(start);
      }
    } finally {
      file.close();
    }
    return { count, validBytes, torn: !stopped && pending.length > 0, skipped };
  }

  /** Entries written so far (this process and before). */
  get count(): number {
    return this.#count;
  }

  /**
   * Appends one entry; when this returns, it is in the file (one write call). When the write fails part way (a full
   * disk), what it wrote is cut off again, so the journal never holds a torn line the next entry would follow.
   *
   * @example
   * ```ts
   * declare const journal: TextMemory;
   * await journal.append({ eventId: "e1", time: Date.now(), role: "user", source: "http", sender: "owner", text: "hi" });
   * ```
   */
  append(entry: MemoryEntry): Promise<void> {
    const line = this.#encoder.encode(`${JSON.stringify(entry)}\n`);
    const write = this.#tail.then(async () => {
      let written = 0;
      try {
        while (written < line.length) written += await this.#file.write(line.subarray(written));
      } catch (error) {
        // Cutting a file shorter takes no space: it works on a full disk.
        if (written > 0) await this.#file.truncate(this.#bytes).catch(() => {});
        throw error;
      }
      if (this.#count % MARK_EVERY === 0) this.#marks.push({ index: this.#count, offset: this.#bytes });
      this.#offsets.appended(entry.eventId, this.#bytes, line.length);
      this.#count++;
      this.#bytes += line.length;
      this.#lastEventId = entry.eventId;
    });
    this.#tail = write.catch(() => {});
    return write;
  }

  /** Every entry, oldest first. */
  async entries(): Promise<MemoryEntry[]> {
    return await this.from(0);
  }

  /** The entries from index `start` on (the distiller's cursor), oldest first; the ones before are read, not kept. */
  async from(start: number): Promise<MemoryEntry[]> {
    const entries: MemoryEntry[] = [];
    await TextMemory.#scan(this.path, (entry, index) => {
      if (index >= start) entries.push(entry);
    }, this.#markBefore(start));
    return entries;
  }

  /** The last `count` entries, oldest first, keeping no more than that while reading. */
  async last(count: number): Promise<MemoryEntry[]> {
    const ring: MemoryEntry[] = [];
    await TextMemory.#scan(this.path, (entry) => {
      ring.push(entry);
      if (ring.length > count) ring.shift();
    }, this.#markBefore(this.#count - count));
    return ring;
  }

  /** The last mark at or before entry `index` (the journal's start when there is none). */
  #markBefore(index: number): Mark {
    let found: Mark = { index: 0, offset: 0 };
    for (const mark of this.#marks) {
      if (mark.index > index) break;
      found = mark;
    }
    return found;
  }

  /**
   * The entries of the input events `eventIds` (both halves of an exchange share one), oldest first, after the
   * appends in progress; only their lines are read, found through the offsets (rebuilt from the journal when they do
   * not match it).
   *
   * @example
   * ```ts
   * declare const journal: TextMemory;
   * await journal.lookup(new Set(["e1"]));
   * // Map { "e1" => [{ eventId: "e1", role: "user", sender: "owner", text: "hi", … }, { role: "assistant", … }] }
   * ```
   */
  async lookup(eventIds: ReadonlySet<string>): Promise<Map<string, MemoryEntry[]>> {
    const found = new Map<string, MemoryEntry[]>();
    if (!eventIds.size) return found;
    // Not queued behind: appends never wait for a reader (their lines are added to the offsets when they end).
    await this.#tail;
    const entries = await this.#offsets.read(eventIds);
    if (entries) {
      for (const entry of entries) found.set(entry.eventId, [...(found.get(entry.eventId) ?? []), entry]);
      return found;
    }
    // Offsets freshly rebuilt did not match either: the journal is being rewritten. One read of the whole file.
    await TextMemory.#scan(this.path, (entry) => {
      if (eventIds.has(entry.eventId)) found.set(entry.eventId, [...(found.get(entry.eventId) ?? []), entry]);
    });
    return found;
  }

  /**
   * Rewrites the journal without the entries of `eventIds` (atomically: a crash leaves the old or the new file);
   * returns the indexes (in the old order) of the entries removed.
   */
  forget(eventIds: ReadonlySet<string>): Promise<number[]> {
    const work = this.#tail.then(async () => {
      const entries = await this.entries();
      const removed: number[] = [];
      const kept = entries.filter((entry, index) => {
        if (!eventIds.has(entry.eventId)) return true;
        removed.push(index);
        return false;
      });
      if (!removed.length) return removed;
      await this.#file.syncData();
      this.#file.close();
      const lines = kept.map((entry) => `${JSON.stringify(entry)}\n`);
      await this.#offsets.dropForRewrite();
      // Forgetting is told to a person: the rewritten journal's name is fsync'd too (issue 38).
      await atomicWriteText(this.path, lines.join(""), { mode: 0o600, durable: true });
      this.#file = await Deno.open(this.path, { append: true });
      this.#count = kept.length;
      this.#marks = [];
      this.#bytes = 0;
      const lengths = lines.map((line, n) => {
        if (n % MARK_EVERY === 0) this.#marks.push({ index: n, offset: this.#bytes });
        const length = this.#encoder.encode(line).length;
        this.#bytes += length;
        return length;
      });
      this.#lastEventId = kept.at(-1)?.eventId ?? null;
      this.#offsets.rewritten(kept.map((entry) => entry.eventId), lengths);
      await this.#writeMarks();
      await this.#offsets.save(this.#offsets.cut());
      return removed;
    });
    this.#tail = work.then(() => {}, () => {});
    return work;
  }

  /** Flushes to the disk (fsync), after the appends in progress, then writes the marks and the new offsets. */
  async sync(): Promise<void> {
    await this.#tail;
    // Taken before the fsync: the offsets saved never cover a line the fsync did not.
    const cut = this.#offsets.cut();
    await this.#file.syncData();
    await this.#writeMarks();
    await this.#offsets.save(cut);
  }

  /** Waits for the appends in progress, syncs, writes the marks and the offsets, and closes. */
  async close(): Promise<void> {
    await this.#tail;
    const cut = this.#offsets.cut();
    await this.#file.syncData().catch(() => {});
    await this.#writeMarks().catch(() => {});
    await this.#offsets.save(cut);
    this.#file.close();
  }

  /** Writes the marks of what is on disk now (after a sync: the journal holds at least that much). */
  async #writeMarks(): Promise<void> {
    const marks: MarksFile = {
      version: 1,
      every: MARK_EVERY,
      marks: this.#marks.map((mark) => [mark.index, mark.offset]),
      count: this.#count,
      bytes: this.#bytes,
      lastEventId: this.#lastEventId,
    };
    const text = JSON.stringify(marks);
    if (text === this.#marksWritten) return;
    await atomicWriteText(`${this.path}${MARKS_SUFFIX}`, text, { mode: 0o600 });
    this.#marksWritten = text;
  }
}

/** The marks file beside the journal. */
const MARKS_SUFFIX = ".marks";

/** The entry on a journal line, or undefined. */
function parseEntry(line: string): MemoryEntry | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    return isEntry(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** What opening knows of the journal. */
interface JournalState {
  count: number;
  bytes: number;
  marks: Mark[];
  lastEventId: string | null;
}

/**
 * The marks of `journal`, when they match it: its size is at least what they say was whole, a line ends there, and the
 * line before that end is the entry they name; undefined otherwise (the journal is then read whole).
 */
async function readMarks(marksPath: string, journal: string): Promise<JournalState | undefined> {
  let stored: Partial<MarksFile>;
  try {
    stored = JSON.parse(await Deno.readTextFile(marksPath)) as Partial<MarksFile>;
  } catch {
    return undefined;
  }
  const whole = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
  const { marks, count, bytes, lastEventId } = stored;
  if (
    stored.version !== 1 || stored.every !== MARK_EVERY || !Array.isArray(marks) || !whole(count) || !whole(bytes) ||
    !(lastEventId === null || typeof lastEventId === "string") || (count === 0) !== (lastEventId === null) ||
    !marks.every((mark, i) =>
      Array.isArray(mark) && mark.length === 2 && mark[0] === i * MARK_EVERY && whole(mark[1]) && mark[1] <= bytes &&
      (i === 0 ? mark[1] === 0 : mark[1] > (marks[i - 1] as [number, number])[1])
    )
  ) return undefined;
  if (count === 0) return { count: 0, bytes: 0, marks: [], lastEventId: null };
  let file: Deno.FsFile;
  try {
    file = await Deno.open(journal, { read: true });
  } catch {
    return undefined;
  }
  try {
    if ((await file.stat()).size < bytes) return undefined;
    // The last line before `bytes` must be the entry the marks name, ending exactly there.
    const window = Math.min(bytes, 64 * 1024);
    await file.seek(bytes - window, Deno.SeekMode.Start);
    const tail = new Uint8Array(window);
    for (let done = 0; done < window;) {
      const read = await file.read(tail.subarray(done));
      if (read === null) return undefined;
      done += read;
    }
    if (tail[window - 1] !== 0x0a) return undefined;
    const lineStart = tail.lastIndexOf(0x0a, window - 2) + 1;
    if (lineStart === 0 && window < bytes) return undefined;
    let last: unknown;
    try {
      last = JSON.parse(new TextDecoder().decode(tail.subarray(lineStart, window - 1)));
    } catch {
      return undefined;
    }
    if (!isEntry(last) || last.eventId !== lastEventId) return undefined;
  } finally {
    file.close();
  }
  return { count, bytes, marks: marks.map(([index, offset]) => ({ index, offset })), lastEventId };
}
