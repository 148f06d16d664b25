/**
 * Hits on documents counted since they were last written, by document id: how many, and when the last was. Writing
 * them with each recall was an UPDATE and a commit a question (≈ 60 µs of a year's recall of 0.6); they only decide
 * when a document goes cold (days), so a crash losing a heartbeat's worth of them changes nothing a household sees.
 * Every read of a row adds them ({@linkcode PendingHits.addTo}).
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { prepared } from "../../sqlite/prepared.ts";

/** The hits a document store counted and has not written yet. */
export class PendingHits {
  #db: DatabaseSync;
  #counts = new Map<string, { hits: number; lastAccessed: number }>();

  /**
   * Counts for the `documents` table of `db`.
   *
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   *
   * const hits = new PendingHits(openMemoryDb("/var/lib/homed/memory/memory.db"));
   * hits.count("d1", Date.now());
   * hits.flush(); // 1: one document's row written
   * ```
   */
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Counts one hit on document `id`, accessed at `now`. */
  count(id: string, now: number): void {
    const counted = this.#counts.get(id);
    if (counted) {
      counted.hits++;
      counted.lastAccessed = now;
    } else this.#counts.set(id, { hits: 1, lastAccessed: now });
  }

  /** `document`, as read from the table, with the hits counted on it since they were last written. */
  addTo<T extends { id: string; hits: number; lastAccessed: number }>(document: T): T {
    const pending = this.#counts.get(document.id);
    if (pending) {
      document.hits += pending.hits;
      document.lastAccessed = Math.max(document.lastAccessed, pending.lastAccessed);
    }
    return document;
  }

  /**
   * Writes the hits counted since the last call, in one statement; returns how many documents they were on. When the
   * disk refuses, they stay counted for the next call (and the error is thrown).
   */
  flush(): number {
    const pending = this.#counts;
    if (!pending.size) return 0;
    const counts = [...pending].map(([id, { hits, lastAccessed }]) => [id, hits, lastAccessed]);
    prepared(
      this.#db,
      `UPDATE documents SET hits = hits + counted.value ->> 1,
         last_accessed = MAX(last_accessed, counted.value ->> 2)
       FROM json_each(?) AS counted WHERE documents.id = counted.value ->> 0`,
    ).run(JSON.stringify(counts));
    pending.clear();
    return counts.length;
  }
}
