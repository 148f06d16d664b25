import assert from "node:assert/strict";
import { join } from "node:path";
import { VectorStore } from "../search/store.ts";
import { openMemoryDb } from "./database.ts";
import { indexMatchesRows } from "./index_digest.ts";

Deno.test("an index matches its rows by count and id digest, across its segment and its newer documents", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-digest-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  db.exec("CREATE TABLE rows (id TEXT PRIMARY KEY)");
  const store = await VectorStore.open(join(dir, "index"));
  const add = (id: string) => {
    db.prepare("INSERT INTO rows (id) VALUES (?)").run(id);
    store.put(id, `note ${id} about the garden`, { time: 1 });
  };
  for (let i = 0; i < 50; i++) add(`doc-${i}`);
  assert.equal(indexMatchesRows(db, "id", "rows", store), true);
  await store.compact();
  add("doc-50"); // in memory, beside the segment
  store.delete("doc-7");
  db.prepare("DELETE FROM rows WHERE id = ?").run("doc-7");
  assert.equal(indexMatchesRows(db, "id", "rows", store), true, "a segment with a deletion and a newer document");
  db.prepare("INSERT INTO rows (id) VALUES (?)").run("doc-51"); // committed, its index write lost
  assert.equal(indexMatchesRows(db, "id", "rows", store), false, "a row the index lacks");
  store.put("stray", "a document no row is kept for", { time: 2 });
  assert.deepEqual(store.idDigest().count, 51, "the counts agree again");
  assert.equal(indexMatchesRows(db, "id", "rows", store), false, "equal counts, other ids");
  db.exec("DELETE FROM rows");
  assert.equal(indexMatchesRows(db, "id", "rows", store), false);
  await store.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});
