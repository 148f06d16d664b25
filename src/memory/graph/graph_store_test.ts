import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { openMemoryDb, SCHEMA_VERSION } from "../database.ts";
import type { Trust } from "../../identity/trust.ts";
import { GraphStore, type Refusal } from "./graph_store.ts";
import { SynonymIndex } from "./synonyms.ts";

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
  assert.equal(at("Living-Room Lamps", "bedroom", T0 + 2 * DAY, "e5"), "confirmed", "the index kept in the file");
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

Deno.test("a correction closes the fact and holds the new value in one transaction, kept across a restart", async () => {
  const { dir, path } = await tempDb();
  let db = openMemoryDb(path);
  const changed: number[][] = [];
  let graph = new GraphStore(db, { onChange: (ids) => changed.push([...ids]) });
  const record = (predicate: string, object: string, single: boolean, id: string) =>
    graph.record({ subject: { name: "Leo", type: "pet" }, predicate, object, time: T0, provenance: [id], single });
  record("location", "garden", true, "e1");
  record("likes", "tuna", false, "e2");
  record("likes", "salmon", false, "e3");
  const [garden] = graph.facts("Leo").filter((fact) => fact.object === "garden");
  changed.length = 0;
  const corrected = graph.correct(garden!.id, " the  kitchen ", "owner", T0 + DAY)!;
  assert.deepEqual(corrected.superseded, { ...garden, validTo: T0 + DAY });
  assert.deepEqual(corrected.fact, {
    id: corrected.fact.id,
    subject: "Leo",
    subjectType: "pet",
    predicate: "location",
    object: "the kitchen",
    provenance: ["corrected by owner"],
    validFrom: T0 + DAY,
    validTo: null,
    correctedBy: "owner",
    saidBy: "owner",
    trust: "owner",
    heard: [],
  });
  assert.deepEqual(changed, [graph.entityIds()], "the entity index is told");
  assert.deepEqual(graph.index(5), [{ name: "Leo", type: "pet", mentions: 3 }], "a correction is not a mention");

  // A many-valued predicate: correcting "tuna" to the "salmon" that already holds adds no duplicate.
  const tuna = graph.facts("Leo").find((fact) => fact.object === "tuna")!;
  const salmon = graph.correct(tuna.id, "Salmon", "alice", T0 + 2 * DAY)!.fact;
  assert.deepEqual([salmon.object, salmon.provenance, salmon.correctedBy], [
    "salmon",
    ["e3", "corrected by alice"],
    "alice",
  ]);
  assert.throws(() => graph.correct(tuna.id, "cod", "owner", T0 + 3 * DAY), /^FactConflict: Fact \d+ no longer holds/);
  assert.throws(
    () => graph.correct(salmon.id, "salmon ", "owner", T0),
    /^FactConflict: Fact \d+ already says "salmon"/,
  );
  assert.throws(() => graph.correct(salmon.id, "  ", "owner", T0), /^RangeError: A fact needs a non-empty object$/);
  assert.equal(graph.correct(9999, "x", "owner", T0), undefined);
  db.close();

  db = openMemoryDb(path);
  graph = new GraphStore(db);
  assert.deepEqual(
    graph.facts("Leo").map((fact) => [fact.predicate, fact.object, fact.validTo === null, fact.correctedBy ?? null]),
    [
      ["location", "the kitchen", true, "owner"],
      ["likes", "salmon", true, "alice"],
      ["likes", "tuna", false, null],
      ["location", "garden", false, null],
    ],
  );
  // Forgetting the messages leaves the correction: its provenance is who corrected it.
  graph.forget(new Set(["e1", "e2", "e3"]));
  assert.deepEqual(graph.facts("Leo").map((fact) => fact.object), ["the kitchen", "salmon"]);
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("deleting a fact by id; entities listed and searched by name and alias; neighbours one step, at most the limit", async () => {
  const { dir, path } = await tempDb();
  const db = openMemoryDb(path);
  const graph = new GraphStore(db);
  const fact = (name: string, type: string, predicate: string, object: string, time = T0) =>
    graph.record({ subject: { name, type }, predicate, object, time, provenance: ["e1"], single: false });
  fact("客厅灯", "device", "位于", "客厅");
  fact("客厅的灯", "device", "颜色", "暖白", T0 + DAY); // an alias of 客厅灯
  fact("客厅", "room", "floor", "1");
  fact("Anna", "person", "likes", "客厅的灯"); // names the lamp by its alias
  fact("Anna", "person", "sister", "Bea");
  fact("Bea", "person", "likes", "Anna");
  fact("50%_off", "thing", "is", "a sale");

  assert.deepEqual(graph.entities("", 2).map((e) => [e.name, e.mentions, e.facts]), [["客厅灯", 2, 2], [
    "Anna",
    2,
    2,
  ]], "most mentioned, then last seen");
  assert.deepEqual(graph.entities("客厅", 10).map((e) => e.name), ["客厅", "客厅灯"], "exact name first");
  assert.deepEqual(graph.entities("的灯", 10).map((e) => e.name), ["客厅灯"], "found by an alias");
  assert.deepEqual(graph.entities("anna", 10).map((e) => e.name), ["Anna"], "case-insensitive");
  assert.deepEqual(graph.entities("0%_", 10).map((e) => e.name), ["50%_off"], "% and _ are literal");
  assert.deepEqual(graph.entities("0%x", 10), []);

  assert.deepEqual(graph.neighbors("客厅的灯", 40), {
    center: "客厅灯",
    nodes: [
      { name: "客厅灯", type: "device", mentions: 2 },
      { name: "Anna", type: "person", mentions: 2 },
      { name: "客厅", type: "room", mentions: 1 },
    ],
    edges: [
      { from: "客厅灯", to: "客厅", predicate: "位于", holds: true },
      { from: "Anna", to: "客厅灯", predicate: "likes", holds: true },
    ],
  });
  assert.deepEqual(graph.neighbors("Anna", 2), {
    center: "Anna",
    nodes: [{ name: "Anna", type: "person", mentions: 2 }, { name: "客厅灯", type: "device", mentions: 2 }],
    edges: [{ from: "Anna", to: "客厅灯", predicate: "likes", holds: true }],
  });
  assert.equal(graph.neighbors("nobody", 40), undefined);

  const [floor] = graph.facts("客厅");
  assert.equal(graph.delete(floor!.id), true);
  assert.equal(graph.delete(floor!.id), false);
  assert.deepEqual(graph.entities("客厅", 10).map((e) => e.name), ["客厅灯"], "an entity without facts goes too");
  assert.deepEqual(graph.neighbors("客厅灯", 40)!.nodes.map((node) => node.name), ["客厅灯", "Anna"]);
  // The synonym index forgot it as well: the name is a new entity again, not an alias of a deleted row.
  fact("客厅", "room", "floor", "2");
  assert.deepEqual(graph.facts("客厅").map((f) => f.object), ["2"]);
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a guest's claim never replaces a household member's or the owner's fact; nothing of it is recorded", async () => {
  const { dir, path } = await tempDb();
  let db = openMemoryDb(path);
  const refused: Refusal[] = [];
  const changed: number[][] = [];
  let graph = new GraphStore(db, {
    onRefuse: (refusal) => refused.push(refusal),
    onChange: (ids) => changed.push([...ids]),
  });
  const key = { name: "spare key", type: "thing" };
  const say = (object: string, id: string, saidBy: string, trust: Trust, single = true, time = T0) =>
    graph.record({ subject: key, predicate: "location", object, time, provenance: [id], single, saidBy, trust });
  assert.equal(say("under the flowerpot", "e1", "owner", "owner"), "added");
  changed.length = 0;
  const before = { counts: graph.counts(), index: graph.index(5), facts: graph.facts("spare key") };

  assert.equal(say("in the car", "e2", "visitor", "guest"), "refused");
  assert.equal(
    graph.record({
      subject: { name: "spare keys", type: "thing" }, // another name of the key: still refused, and not filed
      predicate: "location",
      object: "in the car",
      time: T0,
      provenance: ["e3"],
      single: true,
      saidBy: "visitor",
      trust: "guest",
    }),
    "refused",
  );
  assert.deepEqual(
    { counts: graph.counts(), index: graph.index(5), facts: graph.facts("spare key") },
    before,
    "no row, no mention",
  );
  assert.deepEqual(graph.facts("spare keys"), [], "no alias filed");
  assert.deepEqual(changed, [], "nothing changed, nothing to re-index");
  assert.deepEqual(
    refused.map(({ draft, held }) => [draft.object, draft.saidBy, held.object, held.saidBy, held.trust]),
    [
      ["in the car", "visitor", "under the flowerpot", "owner", "owner"],
      ["in the car", "visitor", "under the flowerpot", "owner", "owner"],
    ],
  );

  // The same value from a guest confirms; the fact stays the owner's.
  assert.equal(say("under the flowerpot", "e4", "visitor", "guest"), "confirmed");
  assert.deepEqual(graph.facts("spare key").map((f) => [f.object, f.provenance, f.saidBy, f.trust]), [
    ["under the flowerpot", ["e1", "e4"], "owner", "owner"],
  ]);
  // A many-valued fact closes nothing: a guest's is recorded.
  assert.equal(say("in the hall", "e5", "visitor", "guest", false), "added");
  // A household member replaces the owner's value (the rule is about guests only).
  assert.equal(say("in the drawer", "e6", "alice", "household", true, T0 + DAY), "replaced");
  assert.deepEqual(
    graph.facts("spare key").map((f) => [f.object, f.validTo === null, f.saidBy, f.trust]),
    [
      ["in the drawer", true, "alice", "household"],
      ["in the hall", false, "visitor", "guest"],
      ["under the flowerpot", false, "owner", "owner"],
    ],
  );

  // A guest's fact is replaced by another guest's; confirmed by the household, it is theirs and no guest replaces it.
  const leo = (object: string, id: string, saidBy: string, trust: Trust) =>
    graph.record({
      subject: { name: "Leo", type: "pet" },
      predicate: "location",
      object,
      time: T0,
      provenance: [id],
      single: true,
      saidBy,
      trust,
    });
  assert.equal(leo("garden", "e7", "visitor", "guest"), "added");
  assert.equal(leo("kitchen", "e8", "stranger", "guest"), "replaced");
  assert.equal(leo("kitchen", "e9", "alice", "household"), "confirmed");
  assert.equal(leo("roof", "e10", "visitor", "guest"), "refused");
  db.close();

  // Kept across a restart; a draft without trust (the configuration) is the household's.
  db = openMemoryDb(path);
  graph = new GraphStore(db);
  assert.deepEqual(graph.facts("Leo").map((f) => [f.object, f.validTo === null, f.saidBy, f.trust]), [
    ["kitchen", true, "alice", "household"],
    ["garden", false, "visitor", "guest"],
  ]);
  graph.record({
    subject: { name: "lamp", type: "device" },
    predicate: "area",
    object: "hall",
    time: T0,
    provenance: ["home-assistant"],
    single: true,
  });
  assert.deepEqual(graph.facts("lamp").map((f) => [f.saidBy, f.trust]), [["", "household"]]);
  assert.equal(
    graph.record({
      subject: { name: "lamp", type: "device" },
      predicate: "area",
      object: "garage",
      time: T0,
      provenance: ["e11"],
      single: true,
      saidBy: "visitor",
      trust: "guest",
    }),
    "refused",
  );
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a schema-7 database gains who said each fact (unknown) and its trust (the household's); a guest cannot replace its facts", async () => {
  const { dir, path } = await tempDb();
  // A schema-7 database: what schema 8 added dropped again, one fact written as homed wrote it then.
  const old = openMemoryDb(path);
  // (The speakers' index, made at every open, names those columns: a schema-7 file has none.)
  old.exec(
    "DROP INDEX triples_speakers; ALTER TABLE triples DROP COLUMN said_by; ALTER TABLE triples DROP COLUMN trust;",
  );
  old.exec("UPDATE meta SET value = '7' WHERE key = 'schema'");
  old.exec(
    "INSERT INTO entities (id, name, type, mentions, first_seen, last_seen) VALUES (1, '客厅灯', 'device', 1, 1, 1)",
  );
  old.exec(
    `INSERT INTO triples (subject, predicate, object, provenance, valid_from, valid_to) VALUES (1, '位于', '客厅', '["e1"]', 1, NULL)`,
  );
  old.close();
  const db = openMemoryDb(path);
  assert.equal(
    (db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string }).value,
    String(SCHEMA_VERSION),
  );
  const graph = new GraphStore(db);
  assert.deepEqual(graph.facts("客厅灯").map((f) => [f.object, f.provenance, f.saidBy, f.trust]), [
    ["客厅", ["e1"], "", "household"],
  ]);
  const lamp = { subject: { name: "客厅灯", type: "device" }, predicate: "位于", time: 2, single: true };
  assert.equal(
    graph.record({ ...lamp, object: "车库", provenance: ["e2"], saidBy: "visitor", trust: "guest" }),
    "refused",
  );
  assert.equal(
    graph.record({ ...lamp, object: "卧室", provenance: ["e3"], saidBy: "alice", trust: "household" }),
    "replaced",
  );
  assert.deepEqual(graph.facts("客厅灯").map((f) => [f.object, f.validTo === null, f.saidBy, f.trust]), [
    ["卧室", true, "alice", "household"],
    ["客厅", false, "", "household"],
  ]);
  db.close();
  await Deno.remove(dir, { recursive: true });
});

/** Rows of the synonym index (memory.db schema 9). */
function synonymRows(db: DatabaseSync): { keys: number; buckets: number } {
  return {
    ...db.prepare(
      "SELECT (SELECT COUNT(*) FROM synonym_keys) AS keys, (SELECT COUNT(*) FROM synonym_buckets) AS buckets",
    ).get() as { keys: number; buckets: number },
  };
}

Deno.test("a schema-8 database gains the synonym index of its entities and aliases when opened: aliases and typos are found at once", async () => {
  const { dir, path } = await tempDb();
  // A schema-8 database: the synonym tables dropped again, entities written as homed wrote them then.
  const old = openMemoryDb(path);
  old.exec("DROP TABLE synonym_keys; DROP TABLE synonym_buckets; UPDATE meta SET value = '8' WHERE key = 'schema'");
  old.exec(
    `INSERT INTO entities (id, name, type, aliases, mentions, first_seen, last_seen) VALUES
       (1, 'thermostat', 'device', '["hallway heater"]', 2, 1, 1),
       (2, '客厅灯', 'device', '["客厅的大灯"]', 2, 1, 1),
       (3, 'Leo', 'pet', '[]', 1, 1, 1)`,
  );
  old.exec(
    `INSERT INTO triples (subject, predicate, object, provenance, valid_from, valid_to) VALUES
       (1, 'location', 'hallway', '["e1"]', 1, NULL), (2, '位于', '客厅', '["e2"]', 1, NULL),
       (3, 'likes', 'tuna', '["e3"]', 1, NULL)`,
  );
  old.close();
  const db = openMemoryDb(path);
  assert.equal(
    (db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string }).value,
    String(SCHEMA_VERSION),
  );
  assert.deepEqual(synonymRows(db), { keys: 5, buckets: 16 }, "five keys; eight buckets each for the two Latin ones");
  const index = new SynonymIndex(db);
  assert.equal(index.probe("the Hallway Heaters", "device"), 1, "an alias, by its key");
  assert.equal(index.probe("hallway haeter", "device"), 1, "a typo of an alias");
  assert.equal(index.probe("thermsotat", "device"), 1, "a typo of a name");
  assert.equal(index.probe("客厅大灯", "device"), 2);
  assert.equal(index.probe("leo", "pet"), 3);
  assert.equal(index.probe("thermsotat", "thing"), undefined, "blocked by type");
  const merges: string[] = [];
  const graph = new GraphStore(db, { onMerge: (m) => merges.push(`${m.alias}→${m.entity}`) });
  assert.equal(
    graph.record({
      subject: { name: "thermostatt", type: "device" },
      predicate: "location",
      object: "hallway",
      time: 2,
      provenance: ["e4"],
      single: true,
    }),
    "confirmed",
  );
  assert.deepEqual(merges, ["thermostatt→thermostat"]);
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a rolled-back graph write leaves no synonym rows behind; forgetting an entity takes its names out", async () => {
  const { dir, path } = await tempDb();
  const db = openMemoryDb(path);
  const graph = new GraphStore(db);
  const draft = (name: string, object: string, id: string) => ({
    subject: { name, type: "device" },
    predicate: "state",
    object,
    time: T0,
    provenance: [id],
    single: true,
  });
  assert.throws(
    () => graph.recordBatch([draft("garage door opener", "open", "e1"), draft("porch light", "", "e1")]),
    /^RangeError: A fact needs a non-empty object$/,
  );
  assert.deepEqual(synonymRows(db), { keys: 0, buckets: 0 }, "the new entity's name went with its row");
  assert.equal(graph.record(draft("garage door opener", "open", "e2")), "added");
  assert.deepEqual(synonymRows(db), { keys: 1, buckets: 8 });
  assert.throws(
    () => graph.recordBatch([draft("garage door openre", "closed", "e3"), draft("porch light", "", "e3")]),
    /^RangeError: A fact needs a non-empty object$/,
  );
  assert.deepEqual(synonymRows(db), { keys: 1, buckets: 8 }, "the alias filed in the failed write is not kept");
  assert.deepEqual(graph.entities("", 5).map((e) => e.name), ["garage door opener"]);
  assert.equal(graph.record(draft("garage door openre", "closed", "e4")), "replaced", "still another name of it");
  assert.deepEqual(synonymRows(db), { keys: 2, buckets: 9 }, "seven of the typo's eight buckets are the name's");
  graph.forget(new Set(["e2", "e4"]));
  assert.deepEqual(graph.counts(), { entities: 0, facts: 0 });
  assert.deepEqual(synonymRows(db), { keys: 0, buckets: 0 }, "forget deletes the names of the entities it deletes");
  graph.record(draft("porch light", "on", "e5"));
  graph.delete(graph.facts("porch light")[0]!.id);
  assert.deepEqual(synonymRows(db), { keys: 0, buckets: 0 }, "so does deleting an entity's last fact");
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a GraphStore opened on a memory.db runs no SQL until asked; the names already stored merge from the file", async () => {
  const { dir, path } = await tempDb();
  let db = openMemoryDb(path);
  new GraphStore(db).recordBatch(Array.from({ length: 500 }, (_, i) => ({
    subject: { name: `storage box ${i}`, type: "thing" },
    predicate: "location",
    object: "attic",
    time: T0,
    provenance: [`e${i}`],
    single: true,
  })));
  db.close();
  db = openMemoryDb(path);
  const statements: string[] = [];
  // The database as the graph sees it, every statement it prepares or runs written down.
  const watched = new Proxy(db, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === "prepare" || property === "exec") {
        return (sql: string) => {
          statements.push(sql);
          return value.call(target, sql);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const merges: string[] = [];
  const graph = new GraphStore(watched, { onMerge: (m) => merges.push(`${m.alias}→${m.entity}`) });
  assert.deepEqual(statements, [], "construction reads no entity (nor anything else)");
  assert.equal(
    graph.record({
      subject: { name: "stroage box 7", type: "thing" },
      predicate: "location",
      object: "attic",
      time: T0 + DAY,
      provenance: ["e500"],
      single: true,
    }),
    "confirmed",
  );
  assert.deepEqual(merges, ["stroage box 7→storage box 7"]);
  assert.equal(statements.filter((sql) => /FROM entities(?! WHERE)/.test(sql)).length, 0, "no scan of the entities");
  db.close();
  await Deno.remove(dir, { recursive: true });
});
