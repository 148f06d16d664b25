/**
 * Where homed's SQLite durability policy lives (issue 38: what homed acknowledged to a person is on disk before the
 * reply says so). Every store runs in WAL mode. A store whose rows a person was told about — `schedules.db` — commits
 * with `synchronous = FULL` (each commit fsyncs the WAL before it returns); a store that is mostly derived or chat
 * history — `memory.db`, `usage.db` — keeps `NORMAL` (a power cut can drop its last commits, never tear the file) and
 * runs only its acknowledged writes (a correction, a forgetting) through {@link durably}, which commits them with
 * FULL. `DESIGN.md` ("What a power cut can lose") lists each file's window.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { prepared } from "./prepared.ts";

/**
 * How a store's commits reach the disk: `acknowledged` — every commit is fsync'd before it returns (people are told
 * of its rows); `derived` — fsync'd at checkpoints only (rows that can be rebuilt, or whose last seconds may go).
 */
export type Durability = "acknowledged" | "derived";

/** SQLite's `synchronous` levels, as `PRAGMA synchronous` reads them back. */
const LEVELS = ["OFF", "NORMAL", "FULL", "EXTRA"] as const;
const SYNCHRONOUS: Record<Durability, "FULL" | "NORMAL"> = { acknowledged: "FULL", derived: "NORMAL" };

/**
 * Puts `db` in WAL mode with the `synchronous` level of `durability` (FULL for `acknowledged`, NORMAL for
 * `derived`). Call once, right after opening.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 * import { join } from "node:path";
 *
 * const db = new DatabaseSync(join(Deno.makeTempDirSync(), "schedules.db"));
 * useWal(db, "acknowledged");
 * synchronousLevel(db); // "FULL"
 * db.close();
 * ```
 */
export function useWal(db: DatabaseSync, durability: Durability): void {
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`PRAGMA synchronous = ${SYNCHRONOUS[durability]}`);
}

/**
 * The `synchronous` level `db` commits with now.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 *
 * const db = new DatabaseSync(":memory:");
 * synchronousLevel(db); // "FULL" (SQLite's default)
 * db.close();
 * ```
 */
export function synchronousLevel(db: DatabaseSync): (typeof LEVELS)[number] {
  // Asked before every acknowledged write: a statement prepared each time would leak its native memory (prepared.ts).
  const row = prepared(db, "PRAGMA synchronous").get() as { synchronous?: number } | undefined;
  const level = LEVELS[row?.synchronous ?? -1];
  if (!level) throw new RangeError(`PRAGMA synchronous read back ${row?.synchronous}; expected 0 to 3`);
  return level;
}

/**
 * Runs `work` — writes a person will be told of — with `synchronous = FULL`, so every transaction it commits is
 * fsync'd (with the WAL frames before it) by the time this returns; the connection's level is put back afterwards,
 * also when `work` throws. Nested calls run inside the outer one. Throws a `TypeError` inside an open transaction,
 * where SQLite cannot change the level: call it around the transaction, not in it.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 * import { join } from "node:path";
 *
 * const db = new DatabaseSync(join(Deno.makeTempDirSync(), "memory.db"));
 * useWal(db, "derived");
 * db.exec("CREATE TABLE facts (object TEXT)");
 * durably(db, () => db.prepare("INSERT INTO facts VALUES (?)").run("in the kitchen drawer")); // on disk now
 * synchronousLevel(db); // "NORMAL" again
 * db.close();
 * ```
 */
export function durably<T>(db: DatabaseSync, work: () => T): T {
  const before = synchronousLevel(db);
  if (before === "FULL" || before === "EXTRA") return work();
  if (db.isTransaction) {
    throw new TypeError(
      "durably() was called inside an open transaction, where SQLite cannot change PRAGMA synchronous; " +
        "call it around the transaction",
    );
  }
  db.exec("PRAGMA synchronous = FULL");
  try {
    return work();
  } finally {
    db.exec(`PRAGMA synchronous = ${before}`);
  }
}
