/**
 * When a SQLite file is damaged (issue 38): the errors that say so ("database disk image is malformed", "file is not
 * a database"), a check run before a store opens its file (`PRAGMA quick_check`, so damage deep in the file is found
 * at start rather than by a later query), and the rule the data dir's stores hand to `DamagedFiles.open`
 * (`src/fs/set_aside.ts`) to move such a file aside — with its `-wal` and `-shm` — and start on a new, empty one.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";

/** SQLite's result codes for a damaged file: `SQLITE_CORRUPT` and `SQLITE_NOTADB`. */
const DAMAGE_CODES = new Set([11, 26]);
/** SQLite's messages for the same, for errors that carry no code. */
const DAMAGE_MESSAGE = /database disk image is malformed|file is not a database/;

/** The file failed {@link checkIntact}: its message is what SQLite's check found. */
export class DamagedDatabase extends Error {
  /**
   * @example
   * ```ts
   * throw new DamagedDatabase("/var/lib/homed/usage.db", "database disk image is malformed (Page 12: …)");
   * ```
   */
  constructor(readonly path: string, why: string) {
    super(`${path}: ${why}`);
    this.name = "DamagedDatabase";
  }
}

/**
 * Why `error` means a damaged database file ("database disk image is malformed", "file is not a database", or what
 * {@link checkIntact} found), or undefined for any other error.
 *
 * @example
 * ```ts
 * databaseDamage(new Error("file is not a database")); // "file is not a database"
 * databaseDamage(new Error("database is locked")); // undefined
 * ```
 */
export function databaseDamage(error: unknown): string | undefined {
  if (error instanceof DamagedDatabase) return error.message.slice(error.path.length + 2);
  if (!(error instanceof Error)) return undefined;
  const code = (error as { errcode?: unknown }).errcode;
  const primary = typeof code === "number" ? code & 0xff : undefined;
  if (DAMAGE_MESSAGE.test(error.message) || (primary !== undefined && DAMAGE_CODES.has(primary))) {
    return error.message;
  }
  return undefined;
}

/**
 * Throws a {@link DamagedDatabase} when SQLite's `PRAGMA quick_check` finds `path` damaged (or SQLite's own error
 * when it cannot read it as a database at all); a missing file is fine (the store makes a new one). ≈ 80 ms for a
 * 100 MB file whose pages are cached.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 *
 * checkIntact(join(Deno.makeTempDirSync(), "schedules.db")); // a missing file passes
 * ```
 */
export function checkIntact(path: string): void {
  try {
    if (Deno.statSync(path).size === 0) return;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  const db = new DatabaseSync(path);
  try {
    const rows = db.prepare("PRAGMA quick_check").all() as Array<{ quick_check?: string }>;
    const found = rows.map((row) => row.quick_check ?? "").filter((line) => line !== "ok");
    if (found.length) {
      throw new DamagedDatabase(path, `database disk image is malformed (${found.slice(0, 3).join("; ")})`);
    }
  } finally {
    db.close();
  }
}

/**
 * `open`, run after {@link checkIntact} on the same path: what a store hands `DamagedFiles.open`.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 * import { join } from "node:path";
 *
 * const open = checkedOpen((path) => new DatabaseSync(path));
 * open(join(Deno.makeTempDirSync(), "usage.db")).close();
 * ```
 */
export function checkedOpen<T>(open: (path: string) => T): (path: string) => T {
  return (path) => {
    checkIntact(path);
    return open(path);
  };
}

/**
 * The rule a SQLite store hands `DamagedFiles.open` (`src/fs/set_aside.ts`): damage as {@link databaseDamage} tells
 * it, the `-wal` and `-shm` go along, and the store starts on a new, empty database.
 *
 * @example
 * ```ts
 * SQLITE_DAMAGE.damage(new Error("database disk image is malformed")); // "database disk image is malformed"
 * ```
 */
export const SQLITE_DAMAGE = {
  damage: databaseDamage,
  companions: ["-wal", "-shm"],
  kept: { en: "a new, empty database", zh: "一个新的空数据库" },
} as const;
