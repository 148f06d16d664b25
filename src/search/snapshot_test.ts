import assert from "node:assert/strict";
import { join } from "node:path";
import { InvertedIndex } from "./inverted_index.ts";
import { frameAll } from "./record_file.ts";
import { decodeSnapshot, encodeSnapshot, SnapshotError } from "./snapshot.ts";
import { VectorStore } from "./store.ts";
import { HOUSEHOLD, termFrequencies } from "./tokenizer.ts";

const analyze = (text: string) => termFrequencies(text, { lexicon: HOUSEHOLD });

function sampleIndex(): InvertedIndex {
  const index = new InvertedIndex();
  index.put("lamp", analyze("客厅的灯每天 22:00 自动关闭"), { time: 1, topic: "smart_home" });
  index.put("bins", analyze("The bins go out on Tuesday"), { time: 2 });
  index.put("gone", analyze("a note that is deleted before the snapshot"), { time: 3 });
  const withContext = analyze("Tuesday, every week");
  withContext.set("^bins", 1);
  index.put("reply", withContext, { time: 4 });
  index.delete("gone");
  return index;
}

Deno.test("a binary snapshot round-trips: same ids, metadata, scores and invariants, without deleted documents", () => {
  const index = sampleIndex();
  const copy = InvertedIndex.fromSnapshot(decodeSnapshot(encodeSnapshot(index.snapshot())));
  assert.deepEqual(copy.verify(), []);
  assert.deepEqual(copy.ids().sort(), ["bins", "lamp", "reply"]);
  assert.equal(copy.has("gone"), false);
  assert.deepEqual(copy.get("lamp"), index.get("lamp"));
  for (const query of ["客厅灯几点关", "when do the bins go out", "every week"]) {
    const expected = index.search(analyze(query), { k: 3 });
    const actual = copy.search(analyze(query), { k: 3 });
    assert.deepEqual(actual.map((hit) => hit.id), expected.map((hit) => hit.id), query);
    actual.forEach((hit, i) => assert.ok(Math.abs(hit.score - expected[i]!.score) < 1e-6, query));
  }
  // The context term counts in no norm, loaded or built.
  assert.deepEqual(copy.search(new Map([["^bins", 1]]), { k: 1 }).map((hit) => hit.id), ["reply"]);
  copy.put("new", analyze("a document added after loading"), {});
  copy.delete("bins");
  assert.deepEqual(copy.verify(), []);
  assert.equal(copy.size, 3);
});

Deno.test("a damaged binary snapshot is refused, naming where and what", () => {
  const bytes = encodeSnapshot(sampleIndex().snapshot());
  const flipped = bytes.slice();
  flipped[20] = flipped[20]! ^ 0x01;
  assert.throws(() => decodeSnapshot(flipped), (error: unknown) => {
    assert.ok(error instanceof SnapshotError);
    assert.equal(error.message, "corrupt at byte 4 (checksum mismatch)");
    return true;
  });
  assert.throws(() => decodeSnapshot(bytes.subarray(0, 3)), /corrupt at byte 0 \(not a binary snapshot\)/);
  // Whole and checksummed, but its parts disagree (written by a faulty encoder): still refused.
  const snapshot = sampleIndex().snapshot();
  const lying = encodeSnapshot({ ...snapshot, lengths: new Int32Array([1, 1, 1]) });
  assert.throws(() => decodeSnapshot(lying), /the term counts add up to 3, not \d+/);
  const unknownTerm = encodeSnapshot({ ...snapshot, termIds: snapshot.termIds.map(() => 999) });
  assert.throws(() => decodeSnapshot(unknownTerm), /term id 999 is unknown/);
  const twice = encodeSnapshot({ ...snapshot, ids: ["lamp", "lamp", "reply"] });
  assert.throws(() => InvertedIndex.fromSnapshot(decodeSnapshot(twice)), /holds the id "lamp" twice/);
});

Deno.test("a store written with the older record-format snapshot still opens, converted in place to a segment", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-snapshot-" });
  const index = sampleIndex();
  const records = index.ids().map((id) => ({ op: "put", id, t: [...index.get(id)!.terms], m: index.get(id)!.meta }));
  await Deno.writeFile(join(dir, "snap-1.bin"), frameAll([...records, { op: "end", count: records.length }]));
  await Deno.writeFile(join(dir, "wal-1.log"), new Uint8Array());
  await Deno.writeTextFile(join(dir, "analyzer"), "engine-3\n");
  let store = await VectorStore.open(dir, { analyzer: "engine-3", analyze });
  assert.deepEqual(store.report.recovered, []);
  assert.equal(store.size, 3);
  assert.equal(store.generation, 1, "the same documents in the same generation");
  assert.equal(new TextDecoder().decode((await Deno.readFile(join(dir, "snap-1.bin"))).subarray(0, 4)), "HVS3");
  assert.equal(store.search("when do the bins go out", { k: 1 })[0]!.id, "bins");
  await store.close();
  store = await VectorStore.open(dir, { analyzer: "engine-3", analyze });
  assert.equal(store.generation, 1);
  assert.deepEqual(store.index.ids().sort(), ["bins", "lamp", "reply"]);
  assert.equal(store.search("客厅灯几点关", { k: 1 })[0]!.id, "lamp");
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a store written with the binary HVS2 snapshot is converted in place and scores the same", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-snapshot-" });
  const index = sampleIndex();
  await Deno.writeFile(join(dir, "snap-4.bin"), encodeSnapshot(index.snapshot()));
  await Deno.writeFile(join(dir, "wal-4.log"), frameAll([{ op: "del", id: "reply" }]));
  await Deno.writeTextFile(join(dir, "analyzer"), "engine-3\n");
  const store = await VectorStore.open(dir, { analyzer: "engine-3", analyze });
  assert.equal(store.generation, 4);
  assert.equal(new TextDecoder().decode((await Deno.readFile(join(dir, "snap-4.bin"))).subarray(0, 4)), "HVS3");
  assert.deepEqual(store.index.ids().sort(), ["bins", "lamp"]);
  assert.equal(store.index.segment?.documents, 3, "the snapshot's three documents, the log's deletion on top");
  index.delete("reply");
  const query = "客厅灯几点关";
  assert.deepEqual(store.search(query, { k: 3 }), index.search(analyze(query), { k: 3 }));
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("an HVS2 snapshot converted for a store with filter keys gets its filter terms", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-snapshot-" });
  const index = new InvertedIndex();
  index.put("own", analyze("my umbrella is in the hall"), { time: 1 });
  index.put("visitor", analyze("my umbrella is in the car"), { time: 2, guest: "visitor" });
  await Deno.writeFile(join(dir, "snap-2.bin"), encodeSnapshot(index.snapshot()));
  await Deno.writeTextFile(join(dir, "analyzer"), "engine-3\n");
  const store = await VectorStore.open(dir, { analyzer: "engine-3", analyze, filterKeys: ["guest"] });
  const found = store.search("where is my umbrella", { filter: { guest: "visitor" } });
  assert.deepEqual(found.map((hit) => hit.id), ["visitor"]);
  assert.deepEqual(store.search("where is my umbrella", { k: 5 }).map((hit) => hit.id).sort(), ["own", "visitor"]);
  assert.deepEqual(store.index.get("visitor")!.terms, analyze("my umbrella is in the car"));
  assert.deepEqual(store.index.verify(), []);
  await store.close();
  await Deno.remove(dir, { recursive: true });
});
