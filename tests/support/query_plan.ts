/**
 * What a piece of code asks SQLite, told without timing: every statement it executes, recorded
 * ({@link recordStatements}), and the lines of a statement's query plan that read a whole table
 * ({@link wholeTableScans}) — a cost that grows with everything the store ever kept, however fast it is on a test's
 * small store.
 *
 * @module
 */

import { type DatabaseSync, StatementSync } from "node:sqlite";

/**
 * The lines of `sql`'s query plan that read a whole table: a `SCAN` of a table (not of a table-valued function such
 * as `json_each`, of a statement's own VALUES or of one of its common table expressions), unless it walks an index in
 * the statement's order and stops at its `LIMIT`.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 *
 * const db = new DatabaseSync(":memory:");
 * db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)");
 * wholeTableScans(db, "SELECT id FROM t WHERE name = ?"); // ["SCAN t — in: SELECT id FROM t WHERE name = ?"]
 * wholeTableScans(db, "SELECT name FROM t WHERE id = ?"); // []
 * ```
 */
export function wholeTableScans(db: DatabaseSync, sql: string): string[] {
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((row) => row.detail);
  const sorted = plan.some((detail) => detail.startsWith("USE TEMP B-TREE FOR ORDER BY"));
  const stopsAtLimit = /\bLIMIT\b/i.test(sql) && !sorted;
  // A common table expression's rows are the statement's own, as many as it made (a recursive walk of an index).
  const expressions = new Set(
    [...sql.matchAll(/(?:\bWITH(?:\s+RECURSIVE)?|,)\s+(\w+)\s*(?:\([^)]*\))?\s+AS\s*\(/gi)].map((m) => m[1]!),
  );
  return plan.filter((detail) =>
    /^SCAN /.test(detail) && !/VIRTUAL TABLE|CONSTANT ROW|VALUES CLAUSE/.test(detail) &&
    !expressions.has(detail.split(" ")[1]!) &&
    !(stopsAtLimit && / USING (COVERING )?INDEX /.test(detail))
  ).map((detail) => `${detail} — in: ${sql.replace(/\s+/g, " ")}`);
}

/**
 * Runs `body` and returns the SQL of every statement executed meanwhile (by any database of `node:sqlite`).
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 *
 * const db = new DatabaseSync(":memory:");
 * await recordStatements(() => void db.prepare("SELECT 1").get()); // Set { "SELECT 1" }
 * ```
 */
export async function recordStatements(body: () => unknown): Promise<Set<string>> {
  const seen = new Set<string>();
  const statement = StatementSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const methods = ["all", "get", "run", "iterate"] as const;
  const originals = methods.map((name) => statement[name]!);
  methods.forEach((name, i) => {
    statement[name] = function (this: StatementSync, ...args: unknown[]) {
      seen.add(this.sourceSQL);
      return originals[i]!.apply(this, args);
    };
  });
  try {
    await body();
  } finally {
    methods.forEach((name, i) => (statement[name] = originals[i]!));
  }
  return seen;
}
