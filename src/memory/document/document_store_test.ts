import assert from "node:assert/strict";
import { join } from "node:path";
import { systemClock } from "../../clock.ts";
import { openMemoryDb } from "../database.ts";
import { VectorStore } from "../vector/store.ts";
import { DocumentStore } from "./document_store.ts";

Deno.test("documents the index lost (killed before its write, or set aside) are indexed again at open", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-" });
  const open = async () => {
    const db = openMemoryDb(join(dir, "memory.db"));
    const index = await VectorStore.open(join(dir, "documents-index"));
    return { db, index, documents: DocumentStore.over(db, index, systemClock) };
  };
  let { db, index, documents } = await open();
  assert.equal(documents.reconcile(), 0, "nothing to do on a new store");
  const bins = documents.add({
    lines: [{ speaker: "owner", text: "The bins go out on Tuesday night" }],
    time: 1,
    provenance: ["e1"],
  });
  documents.add({ lines: [{ speaker: "owner", text: "Lily is allergic to peanuts" }], time: 2, provenance: ["e2"] });
  index.delete(bins.id); // as if the process died between the row's commit and the index write
  assert.deepEqual(documents.search("bins tuesday", 3, false).map((hit) => hit.document.id), []);
  await index.close();
  db.close();

  ({ db, index, documents } = await open());
  assert.equal(documents.reconcile(), 1);
  assert.deepEqual(documents.search("bins tuesday", 3, false).map((hit) => hit.document.id), [bins.id]);
  await index.close();
  await Deno.remove(join(dir, "documents-index"), { recursive: true });
  db.close();

  ({ db, index, documents } = await open());
  assert.equal(documents.reconcile(), 2, "a lost index is rebuilt from the rows");
  assert.equal(documents.search("peanuts", 3, false)[0]?.document.text, "owner: Lily is allergic to peanuts");
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a document's context field survives a lost index and leaves with the utterance it came from", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-context-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  let index = await VectorStore.open(join(dir, "documents-index"));
  let documents = DocumentStore.over(db, index, systemClock);
  const reply = documents.add({
    lines: [{ speaker: "Ben", text: "Top drawer of the hall desk." }],
    time: 2,
    provenance: ["r1"],
    context: { text: "Has anyone seen the passport?", eventId: "q1" },
  });
  const found = () => documents.search("where is the passport", 3, false).map((hit) => hit.document.id);
  assert.deepEqual(found(), [reply.id]);
  await index.close();
  await Deno.remove(join(dir, "documents-index"), { recursive: true });
  index = await VectorStore.open(join(dir, "documents-index"));
  documents = DocumentStore.over(db, index, systemClock);
  assert.equal(documents.reconcile(), 1);
  assert.deepEqual(found(), [reply.id], "rebuilt with its context field");

  assert.equal(documents.forget(new Set(["q1"])), 0, "the reply itself stays");
  assert.deepEqual(found(), [], "but the forgotten question's words no longer find it");
  assert.deepEqual(documents.search("hall desk", 3, false).map((hit) => hit.document.id), [reply.id]);
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});
