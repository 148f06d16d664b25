/**
 * Prepared statements kept per database. Each `DatabaseSync.prepare` allocates a native statement whose memory Deno
 * does not give back when the JS object is collected: a status call that prepared seven statements grew the daemon by
 * ≈ 1 KB each time (36,000 `GET /api/status`: 108 → 216 MB resident, JS heap flat). Statements with a fixed SQL text
 * are prepared once and reused instead.
 *
 * @module
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";

const cache = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/**
 * `db.prepare(sql)`, prepared once per database and reused. Only for SQL texts from a fixed set — never one built
 * from data (lists go in as one JSON parameter read with `json_each`), or the cache would grow without bound.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 *
 * const db = new DatabaseSync(":memory:");
 * prepared(db, "SELECT 1 AS one").get(); // { one: 1 }
 * prepared(db, "SELECT 1 AS one") === prepared(db, "SELECT 1 AS one"); // true
 * db.close();
 * ```
 */
export function prepared(db: DatabaseSync, sql: string): StatementSync {
  let statements = cache.get(db);
  if (!statements) cache.set(db, statements = new Map());
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, statement = db.prepare(sql));
  return statement;
}
