/**
 * Every speaker of a document's lines ("Name: …", lower case) since a document store began, kept in memory.db's
 * `meta`: recall asks whether a question names one before it reads the rows of the documents it found. Forgetting
 * leaves a name in, so it holds at least the speakers of the documents kept; a name is written before the document
 * that brings it (a household has a handful).
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { prepared } from "../../sqlite/prepared.ts";
import { readMeta, writeMeta } from "../database.ts";
import { lineSpeakers, saysAny } from "../recall/speakers.ts";

/** The `meta` key of the names. */
const SPEAKERS_META = "document_speakers";

/** The speakers of a store's documents. */
export class SpeakerNames {
  #db: DatabaseSync;
  #names: Set<string>;

  /**
   * The names kept in `db`; read from its documents once for a store kept before they were (≈ 0.2 s a year).
   *
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   *
   * const names = new SpeakerNames(openMemoryDb("/var/lib/homed/memory/memory.db"));
   * names.saidIn("When did Wei take the bins out?"); // true when a document has a line of Wei's
   * ```
   */
  constructor(db: DatabaseSync) {
    this.#db = db;
    const kept = readMeta(db, SPEAKERS_META);
    this.#names = kept === undefined ? this.#readAll() : new Set(JSON.parse(kept) as string[]);
  }

  #readAll(): Set<string> {
    const names = new Set<string>();
    for (const row of prepared(this.#db, "SELECT text FROM documents").iterate() as Iterable<{ text: string }>) {
      for (const speaker of lineSpeakers(row.text)) names.add(speaker);
    }
    writeMeta(this.#db, SPEAKERS_META, JSON.stringify([...names]));
    return names;
  }

  /** Keeps the speakers of `text`'s lines; call it before the document holding the text is written. */
  add(text: string): void {
    const fresh = lineSpeakers(text).filter((speaker) => !this.#names.has(speaker));
    if (!fresh.length) return;
    for (const speaker of fresh) this.#names.add(speaker);
    writeMeta(this.#db, SPEAKERS_META, JSON.stringify([...this.#names]));
  }

  /** Whether `query` says one of the names, as `namedSpeakers` tells a name. */
  saidIn(query: string): boolean {
    return saysAny(query, this.#names);
  }
}
