import assert from "node:assert/strict";
import { join } from "node:path";
import { openMemoryDb } from "../database.ts";
import { VectorStore } from "../../search/store.ts";
import { EntityIndex } from "./entity_index.ts";
import { GraphStore } from "./graph_store.ts";

const T0 = Date.UTC(2026, 10, 1);

Deno.test("the entity index follows every committed write and is rebuilt for entities it lost", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-entity-index-" });
  const open = async () => {
    const db = openMemoryDb(join(dir, "memory.db"));
    const graph = new GraphStore(db, { onChange: (ids) => entities.refresh(ids) });
    const store = await VectorStore.open(join(dir, "graph-index"));
    const entities = new EntityIndex(graph, store);
    return { db, graph, store, entities, reconciled: entities.reconcile() };
  };
  let { db, graph, store, entities } = await open();
  const fact = (name: string, type: string, predicate: string, object: string, id: string, time = T0) =>
    graph.record({ subject: { name, type }, predicate, object, time, provenance: [id], single: true });
  fact("客厅灯", "device", "位于", "客厅", "e1");
  fact("spare key", "thing", "kept in", "the blue flowerpot", "e2");
  fact("Lily", "person", "allergic to", "peanuts", "e3");

  assert.deepEqual(entities.search("where is the spare key", 3).map((h) => h.fact.object), ["the blue flowerpot"]);
  fact("客厅的灯", "device", "位于", "卧室", "e4", T0 + 1);
  assert.deepEqual(
    entities.search("客厅的灯在哪", 3).map((h) => [h.fact.subject, h.fact.object]),
    [["客厅灯", "卧室"]],
    "the index holds the alias and only the fact that holds now",
  );
  assert.deepEqual(entities.search("peanuts", 3).map((h) => h.fact.subject), ["Lily"], "facts' words find the entity");

  graph.forget(new Set(["e3"]));
  assert.deepEqual(entities.search("peanuts Lily", 3), [], "a forgotten entity leaves the index");
  assert.equal(store.has("e3"), false);
  await store.close();
  db.close();

  await Deno.remove(join(dir, "graph-index"), { recursive: true }); // lost, as after a crash before its write
  let reconciled: number;
  ({ db, graph, store, entities, reconciled } = await open());
  assert.equal(reconciled, 2);
  assert.deepEqual(entities.search("spare key", 3).map((h) => h.fact.object), ["the blue flowerpot"]);
  await store.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the entity index's cached facts are what the graph holds after every kind of write", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-entity-cache-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  const graph = new GraphStore(db, { onChange: (ids) => entities.refresh(ids) });
  const store = await VectorStore.open(join(dir, "graph-index"));
  const entities = new EntityIndex(graph, store);
  const queries = [
    "where is the spare key",
    "Lily",
    "Lily allergic peanuts",
    "客厅灯在哪",
    "Wei tea",
    "key lamp Lily Wei",
  ];
  // A new index over the same graph and store has read nothing: its answer is the graph's, uncached — for every
  // reader (the origins of a kept fact are read when a household member's search first asks for them).
  const viewers = [
    undefined,
    { sender: "Wei", trust: "owner" as const },
    { sender: "Lily", trust: "household" as const },
    { sender: "Tom", trust: "household" as const },
    { sender: "visitor", trust: "guest" as const },
  ];
  const same = (why: string) => {
    for (const query of queries) {
      for (const k of [1, 3, 10]) {
        for (const viewer of viewers) {
          assert.deepEqual(
            entities.search(query, k, viewer),
            new EntityIndex(graph, store).search(query, k, viewer),
            `${why}: ${query} for ${viewer?.sender}`,
          );
        }
      }
    }
  };
  const record = (name: string, type: string, predicate: string, object: string, event: string, single = true) =>
    graph.record({
      subject: { name, type },
      predicate,
      object,
      time: T0 + Number(event.slice(1)),
      provenance: [event],
      single,
    });
  record("spare key", "thing", "kept in", "the blue flowerpot", "e1");
  record("Lily", "person", "allergic to", "peanuts", "e2", false);
  record("客厅灯", "device", "位于", "客厅", "e3");
  record("Wei", "person", "takes tea", "with milk", "e4");
  // Heard in Lily's private chat only: hers to read, and the owner's.
  graph.record({
    subject: { name: "Lily", type: "person" },
    predicate: "birthday",
    object: "May 3",
    time: T0 + 4,
    provenance: ["e4b"],
    single: true,
    heard: [{ event: "e4b", source: "qq:private:lily", sender: "Lily", trust: "household" }],
  });
  same("filled");
  const birthday = (viewer: (typeof viewers)[number]) =>
    entities.search("Lily birthday", 3, viewer).some(({ fact }) => fact.object === "May 3");
  assert.deepEqual(viewers.map(birthday), [true, true, true, false, false]);

  record("spare key", "thing", "kept in", "the blue flowerpot", "e5"); // confirmed: provenance grows
  same("confirmed");
  graph.recordBatch([
    {
      subject: { name: "spare key", type: "thing" },
      predicate: "kept in",
      object: "the garage drawer",
      time: T0 + 6,
      provenance: ["e6"],
      single: true,
    },
    {
      subject: { name: "Lily", type: "person" },
      predicate: "allergic to",
      object: "shellfish",
      time: T0 + 6,
      provenance: ["e6"],
      single: false,
      saidBy: "visitor",
      trust: "guest",
    },
  ]);
  same("replaced, added by a guest");
  const tea = entities.search("Wei tea", 3)[0]!.fact;
  tea.provenance.push("changed by a caller"); // what a caller does with its copy is not cached
  same("a caller changed its copy");
  graph.correct(tea.id, "without sugar", "Wei", T0 + 7, "household");
  same("corrected");
  const lamp = entities.search("客厅灯在哪", 1)[0]!.fact;
  graph.delete(lamp.id);
  same("deleted");
  graph.forget(new Set(["e2"]));
  same("forgotten");
  await store.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});
