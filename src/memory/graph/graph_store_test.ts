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

Deno.test("another name of a known entity is filed as its alias: facts join, the index survives a restart and forget", async () => {
  const { dir, path } = await tempDb();
  const merges: string[] = [];
  let db = openMemoryDb(path);
  let graph = new GraphStore(db, { onMerge: (m) => merges.push(`${m.alias}→${m.entity}`) });
  const at = (name: string, object: string, time: number, id: string) =>
    graph.record({
      subject: { name, type: "device" },
      predicate: "位于",
      object,
      time,
      provenance: [id],
      single: true,
    });
  assert.equal(at("客厅灯", "客厅", T0, "e1"), "added");
  assert.equal(at("客厅的灯", "客厅的", T0 + DAY, "e2"), "confirmed", "same entity, same value spelled differently");
  assert.equal(at("卧室灯", "卧室", T0 + DAY, "e3"), "added", "a different lamp is not merged");
  assert.deepEqual(merges, ["客厅的灯→客厅灯"]);
  assert.deepEqual(graph.counts(), { entities: 2, facts: 2 });
  db.close();

  db = openMemoryDb(path);
  graph = new GraphStore(db, { onMerge: (m) => merges.push(`${m.alias}→${m.entity}`) });
  assert.equal(at("the living room lamp", "bedroom", T0 + 2 * DAY, "e4"), "added");
  assert.equal(at("Living-Room Lamps", "bedroom", T0 + 2 * DAY, "e5"), "confirmed", "index rebuilt from the rows");
  assert.equal(at("客厅灯", "卧室", T0 + 3 * DAY, "e6"), "replaced");
  assert.deepEqual(graph.facts("客厅的灯").map((f) => [f.subject, f.object, f.validTo === null]), [
    ["客厅灯", "卧室", true],
    ["客厅灯", "客厅", false],
  ], "facts are found under an alias too");

  graph.forget(new Set(["e1", "e2", "e6"]));
  assert.equal(graph.facts("客厅灯").length, 0);
  assert.equal(at("客厅的灯", "书房", T0 + 4 * DAY, "e7"), "added");
  assert.equal(
    graph.facts("客厅的灯")[0]?.subject,
    "客厅的灯",
    "a forgotten entity is not resurrected as a merge target",
  );
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a rolled-back batch leaves no name in the synonym index that could point at a reused row id", async () => {
  const { dir, path } = await tempDb();
  const db = openMemoryDb(path);
  const graph = new GraphStore(db);
  const draft = (name: string, object: string) => ({
    subject: { name, type: "device" },
    predicate: "状态",
    object,
    time: T0,
    provenance: ["e1"],
    single: true,
  });
  assert.throws(() => graph.recordBatch([draft("加湿器", "开"), draft("风扇", "")]), /non-empty object/);
  assert.deepEqual(graph.counts(), { entities: 0, facts: 0 }, "nothing of the batch landed");
  graph.record(draft("空气净化器", "开")); // takes the row id the rolled-back 加湿器 had
  assert.equal(graph.record(draft("加湿器", "关")), "added", "加湿器 is its own entity, not an alias of the reused id");
  assert.deepEqual(graph.counts(), { entities: 2, facts: 2 });
  db.close();
  await Deno.remove(dir, { recursive: true });
});
