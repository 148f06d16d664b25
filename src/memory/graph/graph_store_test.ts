import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { openMemoryDb, SCHEMA_VERSION } from "../database.ts";
import { GraphStore } from "./graph_store.ts";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1);

async function tempDb() {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-graph-" });
  return { dir, path: join(dir, "memory.db") };
}

Deno.test("a new value of a single-valued fact closes the old one; history and provenance stay", async () => {
  const { dir, path } = await tempDb();
  const db = openMemoryDb(path);
  const graph = new GraphStore(db);
  const lamp = { name: "客厅灯", type: "device" };
  assert.equal(
    graph.record({ subject: lamp, predicate: "位于", object: "客厅", time: T0, provenance: ["e1"], single: true }),
    "added",
  );
  assert.equal(
    graph.record({
      subject: lamp,
      predicate: "位于",
      object: "客厅",
      time: T0 + DAY,
      provenance: ["e2"],
      single: true,
    }),
    "confirmed",
  );
  assert.equal(
    graph.record({
      subject: lamp,
      predicate: "位于",
      object: "卧室",
      time: T0 + 2 * DAY,
      provenance: ["e3"],
      single: true,
    }),
    "replaced",
  );
  assert.equal(
    graph.record({
      subject: lamp,
      predicate: "颜色",
      object: "暖白",
      time: T0 + 2 * DAY,
      provenance: ["e3"],
      single: false,
    }),
    "added",
  );
  const facts = graph.facts("客厅灯");
  assert.deepEqual(facts.map((f) => [f.predicate, f.object, f.validTo === null, f.provenance]), [
    ["颜色", "暖白", true, ["e3"]],
    ["位于", "卧室", true, ["e3"]],
    ["位于", "客厅", false, ["e1", "e2"]],
  ]);
  assert.equal(facts[2]!.validTo, T0 + 2 * DAY, "closed when the new value was said");
  assert.deepEqual(graph.index(10), [{ name: "客厅灯", type: "device", mentions: 4 }]);
  assert.deepEqual(graph.counts(), { entities: 1, facts: 2 });
  assert.throws(
    () =>
      graph.record({
        subject: { name: " ", type: "device" },
        predicate: "p",
        object: "o",
        time: T0,
        provenance: [],
        single: false,
      }),
    /^RangeError: A fact needs a non-empty subject\.name$/,
  );
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a documents-only database is migrated forward, keeping its rows; a newer schema is refused untouched", async () => {
  const { dir, path } = await tempDb();
  const old = new DatabaseSync(path);
  old.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  old.exec("INSERT INTO meta VALUES ('documents_schema', '1')");
  old.exec(
    `CREATE TABLE documents (id TEXT PRIMARY KEY, text TEXT NOT NULL, summary TEXT NOT NULL, created INTEGER NOT NULL,
    last_accessed INTEGER NOT NULL, hits INTEGER NOT NULL DEFAULT 0, provenance TEXT NOT NULL)`,
  );
  old.exec(`INSERT INTO documents VALUES ('d1', 'owner: hi', 'owner: hi', 1, 1, 0, '["e1"]')`);
  old.close();
  const db = openMemoryDb(path);
  assert.equal(
    (db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string }).value,
    String(SCHEMA_VERSION),
  );
  assert.equal((db.prepare("SELECT COUNT(*) AS n FROM documents").get() as { n: number }).n, 1);
  assert.deepEqual(new GraphStore(db).counts(), { entities: 0, facts: 0 });
  db.prepare("UPDATE meta SET value = '99' WHERE key = 'schema'").run();
  db.close();
  assert.throws(() => openMemoryDb(path), new RegExp(`has memory schema 99; this homed knows up to ${SCHEMA_VERSION}`));
  await Deno.remove(dir, { recursive: true });
});
