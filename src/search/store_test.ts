import assert from "node:assert/strict";
import { join } from "node:path";
import { VectorStore } from "./store.ts";
import { ANALYZER } from "./tokenizer.ts";

async function tempDir(): Promise<string> {
  return await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-vector-" });
}

Deno.test("add, update, delete and search by id, with filters", async () => {
  const dir = await tempDir();
  const store = await VectorStore.open(dir);
  store.put("lamp", "客厅的灯每天 22:00 自动关闭", { topic: "smart_home" });
  store.put("ac", "The living room air conditioner is set to 24 degrees", { topic: "smart_home" });
  store.put("egg", "番茄炒蛋：先炒蛋，再炒番茄", { topic: "cooking" });
  assert.equal(store.size, 3);
  assert.equal(store.search("客厅灯几点关", { k: 1 })[0]!.id, "lamp");
  assert.equal(store.search("when does the lamp switch off", { k: 1 })[0]!.id, "lamp", "the lexicon joins 灯 and lamp");
  assert.equal(store.search("番茄", { k: 3, filter: { topic: "smart_home" } }).length, 0);
  assert.deepEqual(store.search("番茄", { k: 3, filter: (meta) => meta.topic === "cooking" }).map((h) => h.id), [
    "egg",
  ]);
  store.put("lamp", "卧室的台灯坏了", { topic: "smart_home" });
  assert.equal(store.size, 3);
  assert.equal(store.search("客厅 关闭", { k: 3 }).some((h) => h.id === "lamp"), false, "the old text is gone");
  assert.equal(store.search("卧室台灯", { k: 1 })[0]!.id, "lamp");
  assert.equal(store.delete("lamp"), true);
  assert.equal(store.delete("lamp"), false);
  assert.equal(store.search("卧室台灯", { k: 3 }).length, 0);
  assert.deepEqual(store.index.verify(), []);
  assert.deepEqual(store.search("", { k: 3 }), []);
  assert.deepEqual(store.search("nothing matches zzz", { k: 3 }), []);
  await store.close();
  assert.throws(() => store.put("x", "y"), /is closed/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("scores are cosine-like, in (0, 1], and idf follows inserts without a rebuild", async () => {
  const dir = await tempDir();
  const store = await VectorStore.open(dir, { scoring: { slope: 1, conceptWeight: 1, supersede: undefined } });
  store.put("a", "router password");
  const alone = store.search("router password", { k: 1 })[0]!;
  assert.ok(Math.abs(alone.score - 1) < 1e-6, `self-match scores 1, got ${alone.score}`);
  for (let i = 0; i < 50; i++) store.put(`p${i}`, `password number ${i}`);
  const hits = store.search("router password", { k: 3 });
  assert.equal(hits[0]!.id, "a");
  assert.ok(hits[1]!.score < 0.5 * hits[0]!.score, "a common term now counts less");
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a newer note on the same fact ranks above the older one", async () => {
  const dir = await tempDir();
  const store = await VectorStore.open(dir);
  store.put("old", "2024-03-01 记下：家里 WiFi 密码是 Home1234!", { time: Date.UTC(2024, 2, 1) });
  store.put("new", "2026-05-02 更新：家里 WiFi 密码已改为 Home9876!，之前的作废", { time: Date.UTC(2026, 4, 2) });
  store.put("other", "路由器放在书房，型号 AX3000", { time: Date.UTC(2025, 0, 1) });
  assert.deepEqual(store.search("WiFi 密码是多少", { k: 2 }).map((h) => h.id), ["new", "old"]);
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("everything survives reopening, before and after compaction", async () => {
  const dir = await tempDir();
  let store = await VectorStore.open(dir);
  for (let i = 0; i < 200; i++) store.put(`d${i}`, `note ${i} about the kitchen fridge ${i % 7}`, { n: i });
  store.delete("d5");
  const before = store.search("kitchen fridge 3", { k: 5 });
  await store.close();
  store = await VectorStore.open(dir);
  assert.equal(store.size, 199);
  assert.deepEqual(store.search("kitchen fridge 3", { k: 5 }), before);
  assert.deepEqual(store.report.recovered, []);
  await store.reindex();
  store.put("late", "written after compaction", {});
  await store.close();
  store = await VectorStore.open(dir);
  assert.equal(store.report.generation, 1);
  assert.equal(store.size, 200);
  assert.ok(store.has("late") && !store.has("d5"));
  assert.deepEqual(store.search("kitchen fridge 3", { k: 5 }).map((h) => h.id), before.map((h) => h.id));
  assert.deepEqual(store.index.verify(), []);
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a search reads only its posting lists from disk, after a compaction as after a reopen, and finds the same", async () => {
  const dir = await tempDir();
  let store = await VectorStore.open(dir);
  const room = (i: number) => (i % 3 ? "hall" : "car");
  for (let i = 0; i < 60; i++) {
    store.put(`n${i}`, `note ${i}: the umbrella is in the ${room(i)}`, { time: i, room: room(i) });
  }
  await store.compact();
  const query = "umbrella car";
  store.search(query, { k: 20 });
  // Written after the search: a newer version (its new metadata must win), a deletion, a new note.
  store.put("n3", "note 3: the umbrella is in the car again", { time: 100, room: "car", moved: true });
  store.delete("n6");
  store.put("n60", "note 60: the umbrella is in the car", { time: 60, room: "car" });
  await store.compact();
  const file = Deno.FsFile.prototype as { readSync(buffer: Uint8Array): number | null };
  const readSync = file.readSync;
  let reads = 0;
  file.readSync = function (this: Deno.FsFile, buffer: Uint8Array) {
    reads++;
    return readSync.call(this, buffer);
  };
  try {
    const found = store.search(query, { k: 20 });
    const readHere = reads;
    await store.close();
    store = await VectorStore.open(dir);
    reads = 0;
    assert.deepEqual(found, store.search(query, { k: 20 }), "the same hits, metadata and all");
    assert.ok(found.some((hit) => hit.id === "n3" && hit.meta.moved === true));
    // The query's posting lists (three reads here), and nothing a candidate holds (terms and metadata are in memory).
    assert.ok(readHere === reads && reads <= 3, `${readHere} reads after the compaction, ${reads} after a reopen`);
  } finally {
    file.readSync = readSync;
  }
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a torn last log record is cut off and reported", async () => {
  const dir = await tempDir();
  let store = await VectorStore.open(dir);
  store.put("a", "first note");
  store.put("b", "second note");
  await store.close();
  const wal = join(dir, "wal-0.log");
  const bytes = await Deno.readFile(wal);
  await Deno.writeFile(wal, bytes.subarray(0, bytes.length - 3));
  const messages: string[] = [];
  store = await VectorStore.open(dir, { onRecovery: (m) => messages.push(m) });
  assert.ok(store.has("a") && !store.has("b"));
  assert.match(messages[0]!, /wal-0\.log: cut a torn last record at byte \d+ \(never acknowledged\)/);
  store.put("c", "after recovery");
  await store.close();
  store = await VectorStore.open(dir);
  assert.deepEqual(store.report.recovered, []);
  assert.ok(store.has("c"));
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a corrupt snapshot is set aside and the store rebuilt from the previous generation", async () => {
  const dir = await tempDir();
  let store = await VectorStore.open(dir, { now: () => 7 });
  for (let i = 0; i < 20; i++) store.put(`d${i}`, `document ${i}`);
  await store.reindex(); // generation 1 (keeps generation 0 as the fallback)
  store.put("after", "written into wal-1");
  await store.close();
  const snapshot = join(dir, "snap-1.bin");
  const bytes = await Deno.readFile(snapshot);
  bytes[40] = bytes[40]! ^ 0xff;
  await Deno.writeFile(snapshot, bytes);
  store = await VectorStore.open(dir, { now: () => 7 });
  assert.equal(store.size, 21, "every document is back");
  assert.match(
    store.report.recovered[0]!,
    /snap-1\.bin is corrupt at byte \d+ \(checksum mismatch\); set aside as .*snap-1\.bin\.damaged-1970-01-01T00:00:00\.007Z/,
  );
  assert.ok((await Deno.stat(`${snapshot}.damaged-1970-01-01T00:00:00.007Z`)).isFile);
  assert.deepEqual(store.index.verify(), []);
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("corruption inside the log stops the replay there and keeps the bad file aside", async () => {
  const dir = await tempDir();
  let store = await VectorStore.open(dir, { now: () => 9 });
  store.put("a", "alpha");
  store.put("b", "bravo");
  store.put("c", "charlie");
  await store.close();
  const wal = join(dir, "wal-0.log");
  const bytes = await Deno.readFile(wal);
  const second = bytes.indexOf("bravo".charCodeAt(0), 30);
  bytes[second] = "X".charCodeAt(0);
  await Deno.writeFile(wal, bytes);
  store = await VectorStore.open(dir, { now: () => 9 });
  assert.ok(store.has("a"));
  assert.ok(!store.has("b"));
  assert.match(store.report.recovered[0]!, /wal-0\.log is corrupt at byte \d+ \(checksum mismatch\); set aside/);
  assert.ok((await Deno.stat(`${wal}.damaged-1970-01-01T00:00:00.009Z`)).isFile);
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compaction yields between slices and keeps writes made meanwhile, across a reopen", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-store-slices-" });
  let pauses = 0;
  let n = 0;
  const store: VectorStore = await VectorStore.open(dir, {
    // Each pause lets other work in: a write and a delete land in the middle of the compaction.
    pause: () => {
      pauses++;
      store.put(`late-${n++}`, `late note ${n} about the garden hose`, {});
      store.delete("doc-3");
      return new Promise((resolve) => setTimeout(resolve, 0));
    },
  });
  store.putMany(
    Array.from({ length: 5_000 }, (_, i) => ({ id: `doc-${i}`, text: `note ${i} on the living room lamp` })),
  );
  await store.compact();
  assert.ok(pauses >= 2, `paused ${pauses} times`);
  store.put("after", "written after the compaction", {});
  assert.equal(store.generation, 1);
  const expected = new Set(store.index.ids());
  assert.ok(expected.has("late-0") && !expected.has("doc-3") && expected.has("after"));
  await store.close();
  const reopened = await VectorStore.open(dir);
  assert.deepEqual(new Set(reopened.index.ids()), expected);
  assert.deepEqual(reopened.index.verify(), []);
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a store whose folder is deleted while running writes itself anew on sync", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-store-heal-" });
  const recovered: string[] = [];
  const store = await VectorStore.open(dir, { onRecovery: (message) => recovered.push(message) });
  store.put("a", "the kettle is in the kitchen", {});
  await Deno.remove(dir, { recursive: true });
  store.put("b", "acknowledged into a log nobody can see", {});
  await store.sync();
  assert.match(recovered[0]!, /wal-0\.log disappeared while homed ran; writing the store anew/);
  // A compaction (the memory job's reindex, when due) after the folder vanished again recreates it instead of
  // throwing NotFound.
  await Deno.remove(dir, { recursive: true });
  await store.compact();
  assert.ok(Deno.statSync(join(dir, `snap-${store.generation}.bin`)).isFile);
  await store.close();
  const reopened = await VectorStore.open(dir);
  assert.deepEqual(reopened.index.ids().sort(), ["a", "b"]);
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a store written by another analyzer opens empty, says so, and remembers the new one", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-store-analyzer-" });
  const old = await VectorStore.open(dir, { analyzer: "test-1" });
  old.put("a", "the kettle is in the kitchen", {});
  await old.close();
  assert.equal(await Deno.readTextFile(join(dir, "analyzer")), "test-1\n");

  const same = await VectorStore.open(dir, { analyzer: "test-1" });
  assert.deepEqual([same.size, same.report.recovered], [1, []]);
  await same.close();

  const recovered: string[] = [];
  const changed = await VectorStore.open(dir, { analyzer: "test-2", onRecovery: (m) => recovered.push(m) });
  assert.equal(changed.size, 0);
  assert.deepEqual(recovered, [
    "the analyzer changed from test-1 to test-2: the index was emptied and is rebuilt from its documents",
  ]);
  changed.put("b", "the spare key is under the blue flowerpot", {});
  await changed.close();
  const again = await VectorStore.open(dir, { analyzer: "test-2" });
  assert.deepEqual([again.index.ids(), again.report.recovered], [["b"], []]);
  await again.close();

  // A folder from before analyzers were named holds the first analyzer's terms.
  await Deno.remove(join(dir, "analyzer"));
  const legacy = await VectorStore.open(dir, { onRecovery: (m) => recovered.push(m) });
  assert.equal(legacy.size, 0);
  assert.match(recovered.at(-1)!, new RegExp(`from engine-1 to ${ANALYZER}`));
  await legacy.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a context field is found only by a search that asks for it, below the document's own words", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-store-context-" });
  const store = await VectorStore.open(dir);
  store.put("reply", "Top drawer of the hall desk, under the envelopes.", {}, "Has anyone seen the passport?");
  store.put("question", "Has anyone seen the passport?", {});
  assert.deepEqual(store.search("where is the passport").map((hit) => hit.id), ["question"], "own words only");
  const both = store.search("where is the passport", { contextWeight: 0.7 });
  assert.deepEqual(both.map((hit) => hit.id), ["question", "reply"], "the reply by its question's words, second");
  assert.ok(both[1]!.score < both[0]!.score);
  await store.close();
  const reopened = await VectorStore.open(dir);
  assert.deepEqual(reopened.search("passport", { contextWeight: 0.7 }).map((hit) => hit.id).sort(), [
    "question",
    "reply",
  ]);
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("context terms count in no norm: own-word scores are the same with or without anyone's context", async () => {
  const dirs = [
    await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-store-norm-" }),
    await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-store-norm-" }),
  ];
  const scores: number[][] = [];
  for (const [i, dir] of dirs.entries()) {
    const store = await VectorStore.open(dir);
    const long = i ? "Has anyone seen the passport, the tax folder, the torch or the bike pump this week?" : undefined;
    store.put("lamp", "the living room lamp is on a timer", {});
    store.put("key", "the spare key is under the blue flowerpot", {}, long);
    store.put("bins", "the bins go out on Tuesday night", {}, long);
    scores.push(["lamp", "key"].map((id) => store.search("spare key lamp").find((hit) => hit.id === id)!.score));
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
  assert.deepEqual(scores[1], scores[0]);
});

Deno.test("reindex compacts only once the log holds a record for every 16 documents", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-store-reindex-" });
  const store = await VectorStore.open(dir);
  for (let i = 0; i < 64; i++) store.put(`d${i}`, `note number ${i} about the kitchen`, {});
  await store.reindex();
  assert.equal(store.generation, 1, "64 records in the log: compacted");
  await store.reindex();
  assert.equal(store.generation, 1, "nothing new: nothing rewritten");
  store.put("d64", "one more note", {});
  await store.reindex();
  assert.equal(store.generation, 1, "1 record for 65 documents: left for a later run");
  for (let i = 65; i < 69; i++) store.put(`d${i}`, `note ${i}`, {});
  await store.reindex();
  assert.equal(store.generation, 2, "5 records for 69 documents: compacted");
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("reindex during a compaction waits for it, then compacts what was written meanwhile if that is enough", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-store-reindex-" });
  let writes = 0;
  const store: VectorStore = await VectorStore.open(dir, {
    pause: () => {
      // Writes arriving while the compaction runs: far more than one for every 16 documents.
      if (writes < 300) { for (let i = 0; i < 150; i++) store.put(`late-${writes++}`, `a late note ${writes}`, {}); }
      return new Promise((resolve) => setTimeout(resolve, 0));
    },
  });
  store.putMany(Array.from({ length: 3_000 }, (_, i) => ({ id: `d${i}`, text: `note ${i} on the living room lamp` })));
  const running = store.compact();
  await store.reindex();
  await running;
  assert.ok(writes > 0, "writes landed during the compaction");
  assert.equal(store.generation, 2, `the running compaction, then one for what it carried (${writes} writes)`);
  assert.equal(store.size, 3_000 + writes);
  await store.close();
  const reopened = await VectorStore.open(dir);
  assert.equal(reopened.size, 3_000 + writes);
  assert.deepEqual(reopened.index.verify(), []);
  await reopened.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("close on a disk that fails the last sync: the error is thrown, and the log is closed anyway", async () => {
  const dir = await Deno.makeTempDir();
  const store = await VectorStore.open(dir);
  store.put("lamp", "客厅的灯每天 22:00 自动关闭", { topic: "smart_home" });
  const sync = Deno.FsFile.prototype.syncDataSync;
  // What a read-only disk answers (ext4 after its journal aborted): the log must still be closed, so the disk can be
  // unmounted and repaired (the resource sanitizer fails this test on a file left open).
  Deno.FsFile.prototype.syncDataSync = () => {
    throw Object.assign(new Error("Read-only file system (os error 30)"), { code: "EROFS" });
  };
  try {
    await assert.rejects(() => store.close(), /Read-only file system/);
  } finally {
    Deno.FsFile.prototype.syncDataSync = sync;
  }
  await Deno.remove(dir, { recursive: true });
});
