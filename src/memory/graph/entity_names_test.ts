// The graph's reads by name and by speaker through the alias table and the indexes of `entity_names.ts` answer exactly
// what the scans they replace answered (their SQL kept here as it was), on a varied graph and after every kind of
// write; the table follows writes made by hand (as an older homed's would be) too; and a full or read-only disk at
// open leaves the reads on the scans, with the same answers.

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { openMemoryDb } from "../database.ts";
import { factOf, normalize } from "./graph_rows.ts";
import { ensureGraphReadIndexes, hasEntityAliases } from "./entity_names.ts";
import { GraphReader } from "./graph_reader.ts";
import { factVisibleTo, GraphStore } from "./graph_store.ts";
import type { FactDraft } from "./fact.ts";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 9);
const LIN = { saidBy: "Lin", trust: "household" } as const;
const TOM_PRIVATE = {
  saidBy: "Tom",
  trust: "household",
  heard: [{ event: "p1", source: "qq:private:tom", sender: "Tom", trust: "household" }],
} as const;

/** `GraphReader.facts` as it read before the alias table: every entity's aliases parsed with json_each. */
function factsByScan(db: DatabaseSync, name: string) {
  const rows = db.prepare(
    `SELECT t.id, e.name AS subject, e.type AS subject_type, t.predicate, t.object, t.provenance, t.valid_from, t.valid_to,
       t.corrected_by, t.said_by, t.trust, t.heard
     FROM triples t JOIN entities e ON e.id = t.subject
     WHERE e.name = ?1 OR EXISTS (SELECT 1 FROM json_each(e.aliases) WHERE value = ?1)
     ORDER BY (t.valid_to IS NOT NULL), t.valid_from DESC, t.id DESC`,
  ).all(normalize(name)) as Array<Record<string, unknown>>;
  return rows.map(factOf);
}

/** `GraphReader.speakers` as it read before: every fact grouped by speaker. */
function speakersByScan(db: DatabaseSync) {
  const rows = db.prepare(
    `SELECT said_by, MAX(CASE trust WHEN 'owner' THEN 2 ELSE 1 END) AS rank FROM triples
     WHERE said_by != '' AND trust IN ('owner', 'household') GROUP BY said_by ORDER BY said_by`,
  ).all() as Array<{ said_by: string; rank: number }>;
  return rows.map((row) => ({ name: row.said_by, trust: row.rank === 2 ? "owner" : "household" }));
}

/** The alias table's rows, and what they must be: every entity's aliases as json_each reads them. */
function aliasRows(db: DatabaseSync) {
  const kept = db.prepare("SELECT alias, entity FROM entity_aliases ORDER BY alias, entity").all();
  const derived = db.prepare(
    `SELECT DISTINCT a.value AS alias, e.id AS entity FROM entities e, json_each(e.aliases) a ORDER BY alias, entity`,
  ).all();
  return { kept, derived };
}

/** What `entity_names.ts` makes, taken away: a file as it was before. */
const DROP_DERIVED = `DROP TABLE entity_aliases; DROP TRIGGER entity_aliases_insert; DROP TRIGGER entity_aliases_update;
  DROP TRIGGER entity_aliases_delete; DROP INDEX triples_subject; DROP INDEX triples_speakers;`;

/** A copy of `db` without the alias table and the new indexes: a reader over it takes the scans' way. */
function withoutDerived(db: DatabaseSync, path: string, n: number): DatabaseSync {
  const copyPath = join(path, `../copy${n}.db`);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  Deno.copyFileSync(path, copyPath);
  const copy = new DatabaseSync(copyPath);
  copy.exec(DROP_DERIVED);
  return copy;
}

let copies = 0;

/** Every read by name and by speaker on `db` compared with the scans', for each name and alias and their variants. */
function assertSameAsScans(db: DatabaseSync, path: string, step: string): void {
  const graph = new GraphReader(db);
  const copy = withoutDerived(db, path, ++copies);
  const scanning = new GraphReader(copy);
  try {
    const { kept, derived } = aliasRows(db);
    assert.deepEqual(kept, derived, `${step}: the alias table holds every entity's aliases`);
    const names = (db.prepare("SELECT name, aliases FROM entities").all() as Array<{ name: string; aliases: string }>)
      .flatMap((row) => [row.name, ...JSON.parse(row.aliases) as string[]]);
    const probes = [...new Set(names)].flatMap((name) => [name, name.toLowerCase(), name.toUpperCase(), ` ${name}\n`]);
    for (const name of [...probes, "nobody", ""]) {
      const facts = graph.facts(name);
      assert.deepEqual(facts, factsByScan(db, name), `${step}: facts(${JSON.stringify(name)})`);
      assert.deepEqual(scanning.facts(name), facts, `${step}: facts(${JSON.stringify(name)}) without the table`);
      for (const viewer of [{ sender: "Lin", trust: "household" }, { sender: "Tom", trust: "household" }] as const) {
        assert.deepEqual(
          facts.filter((fact) => factVisibleTo(viewer, fact)),
          factsByScan(db, name).filter((fact) => factVisibleTo(viewer, fact)),
        );
      }
      assert.deepEqual(graph.neighbors(name, 40), scanning.neighbors(name, 40), `${step}: neighbors(${name})`);
      assert.deepEqual(graph.neighbors(name, 2), scanning.neighbors(name, 2), `${step}: neighbors(${name}, 2)`);
    }
    assert.deepEqual(graph.speakers(), speakersByScan(db), `${step}: speakers()`);
    assert.deepEqual(scanning.speakers(), speakersByScan(db), `${step}: speakers() without the index`);
  } finally {
    copy.close();
  }
}

Deno.test("reads by name and by speaker answer what the scans answered, through merges, corrections and forgetting", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-graph-names-" });
  const path = join(dir, "memory.db");
  const db = openMemoryDb(path);
  const graph = new GraphStore(db);
  let event = 0;
  const say = (subject: [string, string], predicate: string, object: string, day: number, single = true, who = {}) =>
    graph.record({
      subject: { name: subject[0], type: subject[1] },
      predicate,
      object,
      time: T0 + day * DAY,
      provenance: [`e${++event}`],
      single,
      ...who,
    } as FactDraft);
  try {
    assert.ok(hasEntityAliases(db));
    say(["sewing kit 49", "thing"], "is in", "the kitchen", 0, true, LIN);
    say(["Sewing Kit 49", "thing"], "is in", "the garage", 1, true, { saidBy: "owner", trust: "owner" });
    say(["sweing kit 49", "thing"], "colour", "red", 2, true, LIN);
    say(["客厅灯", "device"], "位于", "客厅", 0, true, LIN);
    say(["客厅的灯", "device"], "位于", "卧室", 3, true, TOM_PRIVATE);
    say(["Leo", "pet"], "likes", "alice", 1, false, LIN);
    say(["Leo", "person"], "lives in", "Shanghai", 1, true, { saidBy: "visitor", trust: "guest" });
    say(["bob", "person"], "brother of", "alice", 2, false, TOM_PRIVATE);
    say(["alice", "person"], "allergic to", "peanuts", 2, false, LIN);
    say(["Alice", "person"], "birthday", "3月4日", 4, true, { saidBy: "奶奶", trust: "household" });
    say(["alice", "person"], "owns", "Sewing Kit 49", 5, false);
    say(["alice", "person"], "walks", "Leo", 5, false, LIN);
    say(["spare key", "thing"], "is under", "the blue flowerpot", 5, true, { saidBy: "owner", trust: "owner" });
    assert.ok((db.prepare("SELECT COUNT(*) AS n FROM entity_aliases").get() as { n: number }).n >= 3, "merged names");
    assertSameAsScans(db, path, "recorded");

    const [lamp] = graph.facts("客厅灯").filter((fact) => fact.validTo === null);
    graph.correct(lamp!.id, "书房", "owner", T0 + 6 * DAY);
    graph.correct(graph.facts("spare key")[0]!.id, "the doormat", "Lin", T0 + 6 * DAY, "household");
    assertSameAsScans(db, path, "corrected");

    // The first two events forgotten: the kit's first location goes, the entity stays with its aliases.
    graph.forget(new Set(["e1", "e3"]));
    assertSameAsScans(db, path, "forgotten");
    // Every fact of the kit deleted: the entity and its aliases go; a name once its alias is a new entity.
    for (const fact of graph.facts("sewing kit 49")) graph.delete(fact.id);
    assert.deepEqual(graph.facts("Sewing Kit 49"), []);
    say(["sweing kit 49", "thing"], "is in", "the attic", 7, true, LIN);
    assertSameAsScans(db, path, "deleted");

    // Rows written by hand, as an older homed (no alias table of its own) or a repair would: the triggers follow.
    say(["brolly", "thing"], "is in", "the hall", 8, true, LIN);
    say(["alice", "person"], "has", "brolly", 8, false, LIN);
    db.exec(`INSERT INTO entities (name, type, aliases, mentions, first_seen, last_seen)
             VALUES ('umbrella', 'thing', '["brolly","Umbrella"]', 1, 0, 0)`);
    const umbrella = Number((db.prepare("SELECT id FROM entities WHERE name = 'umbrella'").get() as { id: number }).id);
    db.prepare(
      "INSERT INTO triples (subject, predicate, object, provenance, valid_from) VALUES (?, 'is in', 'hall', '[]', 0)",
    )
      .run(umbrella);
    // A value naming two entities (a name, and another's alias): the edge goes to the first stored, as before.
    assert.deepEqual(
      graph.neighbors("alice", 40)!.edges.filter((edge) => edge.predicate === "has"),
      [{ from: "alice", to: "brolly", predicate: "has", holds: true }],
    );
    assertSameAsScans(db, path, "two entities of one name");
    db.exec(`UPDATE entities SET aliases = '["parasol"]' WHERE name = 'umbrella'`);
    db.exec(`UPDATE entities SET aliases = 'not json' WHERE name = 'bob'`);
    db.exec(`UPDATE entities SET aliases = '[]' WHERE name = 'bob'`);
    db.exec(`UPDATE triples SET said_by = 'owner', trust = 'owner' WHERE subject = ${umbrella}`);
    assertSameAsScans(db, path, "by hand");
    assert.equal(graph.facts("parasol").length, 1);
    assert.deepEqual(graph.facts("brolly").map((fact) => fact.subject), ["brolly"], "no longer the umbrella's alias");
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file from before the alias table gets it at open, filled from the entities' aliases", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-graph-names-" });
  const path = join(dir, "memory.db");
  try {
    const db = openMemoryDb(path);
    const graph = new GraphStore(db);
    for (const [n, name] of ["camping lantern 105", "Camping Lantern 105", "campnig lantern 105"].entries()) {
      graph.record({
        subject: { name, type: "thing" },
        predicate: "is in",
        object: `room ${n}`,
        time: T0 + n,
        provenance: [`e${n}`],
        single: true,
        ...LIN,
      });
    }
    // As the file was before: no table, no triggers, no indexes.
    db.exec(DROP_DERIVED);
    db.close();

    const reopened = openMemoryDb(path);
    try {
      assert.ok(hasEntityAliases(reopened));
      const indexes = reopened.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'triples_s%'")
        .all().map((row) => row.name);
      assert.deepEqual(indexes.sort(), ["triples_speakers", "triples_subject"]);
      assertSameAsScans(reopened, path, "reopened");
      assert.equal(new GraphReader(reopened).facts("campnig lantern 105").length, 3);
    } finally {
      reopened.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a full or a read-only disk at open: memory opens without the table and the indexes, and reads as before", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-graph-names-" });
  const path = join(dir, "memory.db");
  try {
    const db = openMemoryDb(path);
    const graph = new GraphStore(db);
    graph.record({
      subject: { name: "first aid kit 128", type: "thing" },
      predicate: "is in",
      object: "the bathroom",
      time: T0,
      provenance: ["e1"],
      single: true,
      ...LIN,
    });
    graph.record({
      subject: { name: "First Aid Kit 128", type: "thing" },
      predicate: "is in",
      object: "the car",
      time: T0 + DAY,
      provenance: ["e2"],
      single: true,
      ...LIN,
    });
    db.exec(DROP_DERIVED);
    // Full: the pages the drop freed taken up, then not one page more.
    db.exec("CREATE TABLE junk (b BLOB)");
    const free = () => (db.prepare("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count;
    while (free() > 0) db.exec("INSERT INTO junk VALUES (zeroblob(512))");
    const pages = (db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count;
    db.exec(`PRAGMA max_page_count = ${pages}`);
    ensureGraphReadIndexes(db);
    assert.equal(hasEntityAliases(db), false, "nothing made on a full disk");
    assert.equal(db.isTransaction, false, "no transaction left open");
    assert.equal(db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'triples_subject'").get(), undefined);
    const full = new GraphReader(db);
    assert.deepEqual(full.facts("First Aid Kit 128"), factsByScan(db, "First Aid Kit 128"));
    assert.equal(full.facts("First Aid Kit 128").length, 2);
    assert.deepEqual(full.speakers(), [{ name: "Lin", trust: "household" }]);
    db.close();

    // Read-only: the same.
    const readOnly = new DatabaseSync(path, { readOnly: true });
    try {
      ensureGraphReadIndexes(readOnly);
      assert.equal(hasEntityAliases(readOnly), false);
      assert.equal(new GraphReader(readOnly).facts("first aid kit 128").length, 2);
    } finally {
      readOnly.close();
    }

    // And space again: the next open makes them.
    const later = openMemoryDb(path);
    try {
      assert.ok(hasEntityAliases(later));
      assert.equal(new GraphReader(later).facts("First Aid Kit 128").length, 2);
    } finally {
      later.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
