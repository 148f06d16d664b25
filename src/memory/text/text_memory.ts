/**
 * TextMemory: the append-only JSONL journal of memory candidates (what was said, by whom, in which turn). The
 * after-turn hook writes each exchange here — no LLM call per turn; the distiller reads it later. One `write` per
 * line, so a kill leaves at most a torn last line, which the next open cuts off with a warning: it never blocks
 * start-up and never hides an acknowledged entry.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { atomicWriteText } from "../../fs/atomic_write.ts";
import type { Trust } from "../../identity/trust.ts";

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
  #encoder = new TextEncoder();
  /** Appends run one after another, in call order; close waits for them. */
  #tail: Promise<void> = Promise.resolve();

  private constructor(path: string, file: Deno.FsFile, count: number) {
    this.path = path;
    this.#file = file;
    this.#count = count;
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
  static async open(path: string, logger: Logger): Promise<TextMemory> {
    // Counted as it streams by: opening a journal of a year keeps none of it in memory.
    const { count, validBytes, torn, skipped } = await TextMemory.#scan(path, () => {});
    if (torn) {
      await Deno.truncate(path, validBytes);
      logger.warning("{path}: cut off a torn last line (a write was interrupted; it was never acknowledged)", { path });
    }
    if (skipped) logger.warning("{path}: skipped {skipped} lines that are not memory entries", { path, skipped });
    const file = await Deno.open(path, { create: true, append: true });
    return new TextMemory(path, file, count);
  }

  /**
   * Reads the journal in chunks, handing each entry (with its index among the entries) to `visit`, which may return
   * `false` to stop. Only whole lines count: everything after the last newline was never completed (`torn`).
   */
  static async #scan(
    path: string,
    visit: (entry: MemoryEntry, index: number) => boolean | void,
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
    let count = 0, skipped = 0, validBytes = 0, stopped = false;
    try {
      for (let read = await file.read(buffer); read !== null && !stopped; read = await file.read(buffer)) {
        const chunk = pending.length ? concat(pending, buffer.subarray(0, read)) : buffer.subarray(0, read);
        let start = 0;
        for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
          const line = decoder.decode(chunk.subarray(start, newline));
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
          if (visit(parsed, count++) === false) {
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
   * Appends one entry; when this returns, it is in the file (one write call).
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
      while (written < line.length) written += await this.#file.write(line.subarray(written));
      this.#count++;
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
    });
    return entries;
  }

  /** The last `count` entries, oldest first, keeping no more than that while reading. */
  async last(count: number): Promise<MemoryEntry[]> {
    const ring: MemoryEntry[] = [];
    await TextMemory.#scan(this.path, (entry) => {
      ring.push(entry);
      if (ring.length > count) ring.shift();
    });
    return ring;
  }

  /**
   * The entries of the input events `eventIds` (both halves of an exchange share one), oldest first, after the
   * appends in progress; one read of the file, keeping only those.
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
    // Not queued behind: appends never wait for a reader; a line being written is cut off by the scan as torn.
    await this.#tail;
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
      await atomicWriteText(this.path, kept.map((entry) => `${JSON.stringify(entry)}\n`).join(""), { mode: 0o600 });
      this.#file = await Deno.open(this.path, { append: true });
      this.#count = kept.length;
      return removed;
    });
    this.#tail = work.then(() => {}, () => {});
    return work;
  }

  /** Flushes to the disk (fsync), after the appends in progress. */
  async sync(): Promise<void> {
    await this.#tail;
    await this.#file.syncData();
  }

  /** Waits for the appends in progress, syncs and closes. */
  async close(): Promise<void> {
    await this.#tail;
    await this.#file.syncData().catch(() => {});
    this.#file.close();
  }
}
