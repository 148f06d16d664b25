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
