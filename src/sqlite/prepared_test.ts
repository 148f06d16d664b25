import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { GraphStore } from "../memory/graph/graph_store.ts";
import { openMemoryDb } from "../memory/database.ts";
import { prepared } from "./prepared.ts";

/** Counts the statements `db` prepares from now on. */
function countPrepares(db: DatabaseSync): { count: number } {
  const counter = { count: 0 };
  const prepare = db.prepare.bind(db);
  db.prepare = (sql: string) => (counter.count++, prepare(sql));
  return counter;
}

Deno.test("prepared: one statement per database and SQL text, prepared once, reused after many calls", () => {
  const a = new DatabaseSync(":memory:");
  const b = new DatabaseSync(":memory:");
  try {
    const counter = countPrepares(a);
    for (let i = 0; i < 1_000; i++) assert.equal((prepared(a, "SELECT ? AS n").get(i) as { n: number }).n, i);
    assert.equal(counter.count, 1);
    assert.equal(prepared(a, "SELECT ? AS n"), prepared(a, "SELECT ? AS n"));
    assert.notEqual(prepared(a, "SELECT ? AS n"), prepared(a, "SELECT ? AS m"));
    assert.notEqual(prepared(a, "SELECT ? AS n"), prepared(b, "SELECT ? AS n"));
    assert.equal(counter.count, 2);
  } finally {
    a.close();
    b.close();
  }
});

Deno.test("a store asked for its counts over and over prepares each statement once (no native memory per call)", () => {
  const dir = Deno.makeTempDirSync({ dir: "/tmp", prefix: "homed-prepared-" });
  const db = openMemoryDb(`${dir}/memory.db`);
  try {
    const graph = new GraphStore(db);
    const counter = countPrepares(db);
    for (let i = 0; i < 500; i++) assert.deepEqual({ ...graph.counts() }, { entities: 0, facts: 0 });
    assert.equal(counter.count, 2);
  } finally {
    db.close();
    Deno.removeSync(dir, { recursive: true });
  }
});
