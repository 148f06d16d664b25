/**
 * Whether an index holds exactly the ids of the rows it is kept for, told without reading the ids one by one: the
 * rows' count and the sum of their ids' hashes, computed inside SQLite by a function registered on the connection,
 * against the index's own {@link VectorStore.idDigest}. Reading a year's 100k ids into JavaScript to look each up cost
 * ≈ 20 MB of resident memory that stayed; this costs none of the heap. Sums of 32-bit hashes agree by chance for
 * different sets only about once in 4 billion.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { idHash } from "../search/segment.ts";
import type { VectorStore } from "../search/store.ts";

const FUNCTION = "homed_id_hash";
const registered = new WeakSet<DatabaseSync>();

/**
 * True when `store` holds exactly the ids `idSql` (an SQL expression over `fromSql`'s rows) gives.
 *
 * @example
 * ```ts
 * import { openMemoryDb } from "./database.ts";
 * import { VectorStore } from "../search/store.ts";
 *
 * const db = openMemoryDb("/var/lib/homed/memory/memory.db");
 * const index = await VectorStore.open("/var/lib/homed/memory/documents-index");
 * indexMatchesRows(db, "id", "documents", index); // true after a clean run
 * ```
 */
export function indexMatchesRows(db: DatabaseSync, idSql: string, fromSql: string, store: VectorStore): boolean {
  if (!registered.has(db)) {
    db.function(FUNCTION, { deterministic: true }, (id) => idHash(String(id)));
    registered.add(db);
  }
  const row = db.prepare(`SELECT COUNT(*) AS n, COALESCE(SUM(${FUNCTION}(${idSql})), 0) AS s FROM ${fromSql}`)
    .get() as {
      n: number;
      s: number;
    };
  const { count, hashSum } = store.idDigest();
  return row.n === count && row.s === hashSum;
}
