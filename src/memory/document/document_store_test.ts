import assert from "node:assert/strict";
import { join } from "node:path";
import { systemClock } from "../../clock.ts";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { openMemoryDb, readMeta } from "../database.ts";
import { VectorStore } from "../../search/store.ts";
import { termsOf } from "../../search/relevance.ts";
import { COLD_AFTER_MS, coldness, DocumentStore, SESSION_WEIGHT } from "./document_store.ts";

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

Deno.test("a person named in the query prefers that person's turns (each line carries its speaker's name)", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  const index = await VectorStore.open(join(dir, "documents-index"));
  const documents = DocumentStore.over(db, index, systemClock);
  const say = (speaker: string, text: string, time: number, session: string) =>
    documents.add({ lines: [{ speaker, text }], time, provenance: [`e${time}`], session }).id;
  const ben = say("Ben", "I booked the dentist for the kids", 1, "s1");
  const anna = say("Anna", "I booked the dentist for the kids", 2, "s2");
  // Same words: without a name the newer one comes first (supersession); naming Ben turns it round, since each
  // line carries its speaker's name.
  assert.deepEqual(documents.search("who booked the dentist", 2, false).map((hit) => hit.document.id), [anna, ben]);
  assert.deepEqual(
    documents.search("what did Ben say about the dentist", 2, false).map((hit) => hit.document.id),
    [ben, anna],
  );
  // "Benjamin" is not Ben: names match as whole words.
  assert.equal(documents.search("Benjamin dentist", 1, false)[0]!.document.id, anna);

  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("documents indexed before sessions were index metadata are indexed again once", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-" });
  let db = openMemoryDb(join(dir, "memory.db"));
  let index = await VectorStore.open(join(dir, "documents-index"));
  let documents = DocumentStore.over(db, index, systemClock);
  documents.reconcile();
  const kept = documents.add({
    lines: [{ speaker: "Anna", text: "Spare key under the mat" }],
    time: 5,
    provenance: ["e5"],
  });
  // As an older homed left it: bare metadata, and no note that it was upgraded.
  index.put(kept.id, "Anna: Spare key under the mat", { time: 5 });
  db.prepare("DELETE FROM meta WHERE key = 'document_index_meta'").run();
  await index.close();
  db.close();

  db = openMemoryDb(join(dir, "memory.db"));
  index = await VectorStore.open(join(dir, "documents-index"));
  documents = DocumentStore.over(db, index, systemClock);
  assert.equal(documents.reconcile(), 1);
  assert.deepEqual(index.index.get(kept.id)!.meta, { time: 5, session: "e5" });
  assert.equal(documents.reconcile(), 0, "only once");
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a document's score gains a share of the best other hit of its conversation", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-" });
  // The same three documents twice; only whether the question and the answer share a conversation differs.
  const search = async (name: string, answerSession: string) => {
    const db = openMemoryDb(join(dir, `${name}.db`));
    const index = await VectorStore.open(join(dir, name));
    const documents = DocumentStore.over(db, index, systemClock);
    const say = (speaker: string, text: string, time: number, session: string) =>
      documents.add({ lines: [{ speaker, text }], time, provenance: [`e${time}`], session }).id;
    // Not alike enough (cosine < 0.2) for the newer to supersede the older.
    say("Mia", "bike pump garage shelf paint tins window ladder drill box hammer nails", 1, "s1");
    say("Leo", "bike pump hallway cupboard coats umbrellas boots scarf hats gloves socks", 2, "s2");
    say("Leo", "has anyone seen the bike pump", 3, answerSession);
    const hits = documents.search("bike pump", 3, false);
    const byText = (start: string) => hits.find((hit) => hit.document.text.startsWith(start))!;
    const result = {
      mia: byText("Mia: bike").score,
      answer: byText("Leo: bike").score,
      question: byText("Leo: has").score,
    };
    await index.close();
    db.close();
    return result;
  };
  const apart = await search("apart", "s3");
  const together = await search("together", "s2");
  assert.equal(together.mia, apart.mia, "a document alone in its conversation keeps its score");
  assert.ok(
    Math.abs(together.answer - (apart.answer + SESSION_WEIGHT * apart.question)) < 1e-6,
    `the answer gains ${SESSION_WEIGHT} × the question's score: ${apart.answer} → ${together.answer}`,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("coldness is the idle time as a share of cold_after: 0 just accessed, 1 at the threshold", () => {
  const now = Date.UTC(2026, 10, 4);
  assert.equal(coldness({ lastAccessed: now }, now), 0);
  assert.equal(coldness({ lastAccessed: now - COLD_AFTER_MS / 4 }, now), 0.25);
  assert.equal(coldness({ lastAccessed: now - 6 * 3_600_000 }, now, 3 * 3_600_000), 2);
  assert.equal(coldness({ lastAccessed: now + 60_000 }, now), 0, "a clock set back is not negative");
});

Deno.test("after a clean close equal counts are trusted; unequal counts or an unclean close check every id", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  const index = await VectorStore.open(join(dir, "documents-index"));
  const documents = DocumentStore.over(db, index, systemClock);
  documents.reconcile();
  const bins = documents.add({
    lines: [{ speaker: "owner", text: "The bins go out on Tuesday" }],
    time: 1,
    provenance: ["e1"],
  });
  documents.add({ lines: [{ speaker: "owner", text: "Lily is allergic to peanuts" }], time: 2, provenance: ["e2"] });
  index.delete(bins.id); // a lost index write: the counts differ
  assert.equal(documents.reconcile({ closedCleanly: true }), 1, "counts differ: checked and mended");
  index.delete(bins.id);
  index.put("stray", "a document memory.db does not hold", { time: 3 }); // counts equal, ids not
  assert.equal(
    documents.reconcile({ closedCleanly: true }),
    0,
    "after a clean close equal counts are taken as they are",
  );
  assert.equal(documents.reconcile({ closedCleanly: false }), 1, "without a clean close every id is checked");
  assert.deepEqual(documents.search("bins tuesday", 3, false).map((hit) => hit.document.id), [bins.id]);
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a search reads its hits' rows in one statement: the same documents as one by one, in the index's order", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-rows-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  const index = await VectorStore.open(join(dir, "documents-index"));
  const documents = DocumentStore.over(db, index, systemClock);
  for (let i = 0; i < 40; i++) {
    documents.add({
      lines: [{ speaker: i % 2 ? "Anna" : "Ben", text: `The umbrella ${i} is in the ${i % 3 ? "hall" : "car"}` }],
      time: i,
      provenance: [`e${i}`],
      ...(i % 4 === 0 ? { context: { text: "Where is the umbrella?", eventId: `q${i}` } } : {}),
    });
  }
  // A row missing while the index holds its document (deleted behind the index's back) is left out, not an error.
  const gone = index.search("where is the umbrella in the car", { k: 1, pool: 40, contextWeight: 0.7 })[0]!.id;
  db.prepare("DELETE FROM documents WHERE id = ?").run(gone);
  const hits = documents.search("where is the umbrella in the car", 30, false);
  assert.equal(hits.length, 29);
  assert.ok(!hits.some((hit) => hit.document.id === gone));
  for (const hit of hits) assert.deepEqual(hit.document, documents.get(hit.document.id));
  assert.deepEqual(
    hits.map((hit) => hit.document.id),
    index.search("where is the umbrella in the car", { k: 30, pool: 40, contextWeight: 0.7 }).map((hit) => hit.id)
      .filter((id) => hits.some((hit) => hit.document.id === id)),
    "in the order ranked",
  );
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("touch counts one hit per document shown (twice when shown twice), written by flushHits in one statement", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-touch-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  const index = await VectorStore.open(join(dir, "documents-index"));
  const clock = new FakeClock({ start: 1_000 });
  const documents = DocumentStore.over(db, index, clock);
  const [a, b] = ["bins on Tuesday", "glass on Friday"].map((text, i) =>
    documents.add({ lines: [{ speaker: "owner", text }], time: i, provenance: [`e${i}`] })
  );
  const table = (id: string) =>
    db.prepare("SELECT hits, last_accessed AS lastAccessed FROM documents WHERE id = ?").get(id) as {
      hits: number;
      lastAccessed: number;
    };
  clock.advance(1_000);
  documents.touch([a!, b!]);
  assert.deepEqual([documents.get(a!.id)!.hits, documents.get(b!.id)!.hits], [1, 1]);
  assert.deepEqual([documents.get(a!.id)!.lastAccessed, documents.get(b!.id)!.lastAccessed], [2_000, 2_000]);
  assert.equal(a!.hits, 1, "the objects shown are updated too");
  assert.deepEqual({ ...table(a!.id) }, { hits: 0, lastAccessed: 1_000 }, "nothing written per recall");
  clock.advance(1_000);
  const shown = documents.get(a!.id)!;
  documents.touch([shown, shown]);
  assert.equal(documents.get(a!.id)!.hits, 3);
  assert.equal(shown.hits, 3);
  assert.equal(documents.get(b!.id)!.hits, 1, "only what was shown");
  assert.deepEqual(documents.list().map((document) => document.hits), [3, 1], "an export counts them too");
  // Written in one statement, then nothing is left to write.
  assert.equal(documents.flushHits(), 2);
  assert.deepEqual({ ...table(a!.id) }, { hits: 3, lastAccessed: 3_000 });
  assert.deepEqual({ ...table(b!.id) }, { hits: 1, lastAccessed: 2_000 });
  assert.equal(documents.flushHits(), 0);
  assert.deepEqual([documents.get(a!.id)!.hits, documents.get(b!.id)!.hits], [3, 1], "counted once");
  // A disk that refuses the write: the hits stay counted, and the next flush writes them.
  clock.advance(1_000);
  documents.touch([documents.get(b!.id)!]);
  db.exec("PRAGMA query_only = ON");
  assert.throws(() => documents.flushHits(), /readonly|read-only|query_only/i);
  db.exec("PRAGMA query_only = OFF");
  assert.equal(documents.get(b!.id)!.hits, 2);
  assert.equal(documents.flushHits(), 1);
  assert.deepEqual({ ...table(b!.id) }, { hits: 2, lastAccessed: 4_000 });
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("archiving counts the hits not written yet: a document shown lately stays live", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-archive-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  const index = await VectorStore.open(join(dir, "documents-index"));
  const clock = new FakeClock({ start: 1_000 });
  const documents = DocumentStore.over(db, index, clock);
  const [shown, idle] = ["bins on Tuesday", "glass on Friday"].map((text, i) =>
    documents.add({ lines: [{ speaker: "owner", text }], time: i, provenance: [`e${i}`] })
  );
  clock.advance(100 * 3_600_000);
  documents.touch([shown!]);
  assert.equal(documents.archiveCold(clock.now() - 72 * 3_600_000, 2), 1, "only the idle one");
  const archived = db.prepare("SELECT id FROM documents WHERE archived = 1").all().map((row) => row.id);
  assert.deepEqual(archived, [idle!.id]);
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a hit says whether the query's words are in its context field, as the tokenizer would find them", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-matched-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  const index = await VectorStore.open(join(dir, "documents-index"));
  const documents = DocumentStore.over(db, index, systemClock);
  const contexts = ["Where is the passport?", "What's for dinner tonight?", "护照放在哪里了？", ""];
  for (let i = 0; i < 40; i++) {
    const context = contexts[i % contexts.length]!;
    documents.add({
      lines: [{ speaker: "Ben", text: i % 2 ? `Top drawer ${i}.` : `The passport ${i} is in the drawer` }],
      time: i,
      provenance: [`e${i}`],
      ...(context ? { context: { text: context, eventId: `q${i}` } } : {}),
    });
  }
  for (const query of ["where is the passport", "护照在哪", "drawer", "dinner passport"]) {
    const hits = documents.search(query, 30, false);
    assert.ok(hits.length > 0, query);
    const asked = new Set(termsOf(query).keys());
    for (const hit of hits) {
      const context = hit.document.context?.text ?? "";
      const shares = [...termsOf(context).keys()].some((term) => asked.has(term));
      assert.equal(hit.contextMatched, shares, `${query}: ${hit.document.text} after "${context}"`);
    }
  }
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the rows of documents found lately are read once, handed out as copies, and kept in step", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-recent-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  const index = await VectorStore.open(join(dir, "documents-index"));
  const clock = new FakeClock({ start: 1_000 });
  const documents = DocumentStore.over(db, index, clock);
  const bins = documents.add({
    lines: [{ speaker: "owner", text: "The bins go out on Tuesday" }],
    time: 1,
    provenance: ["e1"],
    context: { text: "When do the bins go out?", eventId: "q1" },
  });
  documents.add({ lines: [{ speaker: "owner", text: "Glass goes out on Friday" }], time: 2, provenance: ["e2"] });
  const first = documents.search("bins tuesday", 5, false)[0]!.document;
  assert.deepEqual(first, documents.get(bins.id));
  // Changed behind the store's back (every write of a row is the store's): a second search reads no row again.
  db.prepare("UPDATE documents SET text = 'changed' WHERE id = ?").run(bins.id);
  const again = documents.search("bins tuesday", 5, false)[0]!.document;
  assert.equal(again.text, "owner: The bins go out on Tuesday", "read once");
  // Copies: what a caller changes is not what the next search hands out.
  again.provenance.push("mine");
  again.context!.text = "mine";
  assert.notEqual(again, first);
  const third = documents.search("bins tuesday", 5, false)[0]!.document;
  assert.deepEqual([third.provenance, third.context], [["e1"], { text: "When do the bins go out?", eventId: "q1" }]);
  // Counting a hit counts it on the row kept too, as on the table.
  clock.advance(1_000);
  documents.search("bins tuesday", 5, true);
  documents.touch([third, third]);
  const counted = documents.search("bins tuesday", 5, false)[0]!.document;
  assert.deepEqual([counted.hits, counted.lastAccessed], [3, 2_000]);
  assert.deepEqual([documents.get(bins.id)!.hits, documents.get(bins.id)!.lastAccessed], [3, 2_000]);
  // A forgetting drops them: the next search reads the table.
  documents.forget(new Set(["e2"]));
  assert.equal(documents.search("bins tuesday", 5, false)[0]!.document.text, "changed");
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("namesASpeaker knows every speaker of a document's lines: kept in memory.db, past a forgetting, read once from an older store", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-documents-speakers-" });
  const db = openMemoryDb(join(dir, "memory.db"));
  const index = await VectorStore.open(join(dir, "documents-index"));
  const clock = new FakeClock({ start: 1_000 });
  let documents = DocumentStore.over(db, index, clock);
  assert.equal(documents.namesASpeaker("When did Wei take the bins out?"), false, "an empty store has no speakers");
  documents.add({ lines: [{ speaker: "Wei", text: "The bins go out on Tuesday" }], time: 1, provenance: ["e1"] });
  // A line break inside a line makes a line of its own, as recall reads the text.
  documents.add({
    lines: [{ speaker: "butler", text: "Noted.\nMel: and glass on Friday" }],
    time: 2,
    provenance: ["e2"],
  });
  documents.add({ lines: [{ speaker: "奶奶", text: "药在抽屉里" }], time: 3, provenance: ["e3"] });
  const names = (store: DocumentStore) =>
    ["When did Wei take the bins out?", "What did mel say?", "奶奶的药在哪里？", "When do the bins go out?", "奶"].map(
      (query) => store.namesASpeaker(query),
    );
  assert.deepEqual(names(documents), [true, true, true, false, false]);
  // Forgotten, the names stay (more names only widen recall's pool), and a reopened store reads them from memory.db.
  documents.forget(new Set(["e1"]));
  documents = DocumentStore.over(db, index, clock);
  assert.deepEqual(names(documents), [true, true, true, false, false]);
  // A store kept before they were recorded reads them from its documents once, and records them.
  db.prepare("DELETE FROM meta WHERE key = 'document_speakers'").run();
  documents = DocumentStore.over(db, index, clock);
  assert.deepEqual(names(documents), [false, true, true, false, false], "Wei's document was forgotten");
  assert.deepEqual(JSON.parse(readMeta(db, "document_speakers")!).sort(), ["butler", "mel", "奶奶"]);
  await index.close();
  db.close();
  await Deno.remove(dir, { recursive: true });
});
