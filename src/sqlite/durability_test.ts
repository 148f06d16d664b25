import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { durably, synchronousLevel, useWal } from "./durability.ts";

function open(durability: "acknowledged" | "derived"): DatabaseSync {
  const db = new DatabaseSync(join(Deno.makeTempDirSync({ dir: "/tmp", prefix: "homed-durability-" }), "t.db"));
  useWal(db, durability);
  db.exec("CREATE TABLE t (x)");
  return db;
}

Deno.test("useWal: WAL, FULL for acknowledged stores, NORMAL for derived ones", () => {
  for (const [durability, level] of [["acknowledged", "FULL"], ["derived", "NORMAL"]] as const) {
    const db = open(durability);
    assert.equal((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
    assert.equal(synchronousLevel(db), level);
    db.close();
  }
});

Deno.test("durably commits with FULL and puts the level back, also when the work throws; nested calls are fine", () => {
  const db = open("derived");
  const seen = durably(db, () => {
    db.prepare("INSERT INTO t VALUES (1)").run();
    return durably(db, () => synchronousLevel(db));
  });
  assert.equal(seen, "FULL");
  assert.equal(synchronousLevel(db), "NORMAL");
  assert.throws(() =>
    durably(db, () => {
      throw new Error("boom");
    }), /boom/);
  assert.equal(synchronousLevel(db), "NORMAL");
  assert.equal((db.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n, 1);
  db.close();
});

Deno.test("durably inside an open transaction is refused, naming why", () => {
  const db = open("derived");
  db.exec("BEGIN");
  assert.throws(() => durably(db, () => 1), /inside an open transaction.*PRAGMA synchronous/);
  db.exec("ROLLBACK");
  db.close();
});

Deno.test("durably prepares its level check once per database, not once per write (a prepared statement's native memory is not given back)", () => {
  const db = open("derived");
  let prepares = 0;
  const prepare = db.prepare.bind(db);
  db.prepare = (sql: string) => (prepares++, prepare(sql));
  for (let i = 0; i < 50; i++) durably(db, () => db.exec("INSERT INTO t VALUES (1)"));
  assert.equal(prepares, 1);
  db.close();
});
