import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_SCORING, InvertedIndex } from "./inverted_index.ts";
import { Segment } from "./segment.ts";
import { SegmentIndex } from "./segment_index.ts";
import { writeSegment } from "./segment_writer.ts";
import { crc32 } from "./crc32.ts";
import { SnapshotError } from "./snapshot.ts";
import { VectorStore } from "./store.ts";
import { HOUSEHOLD, termFrequencies } from "./tokenizer.ts";

const analyze = (text: string) => termFrequencies(text, { lexicon: HOUSEHOLD });
const noPause = () => Promise.resolve();

/** A small deterministic generator (no Math.random in tests). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const WORDS = [
  "lamp",
  "kitchen",
  "garden",
  "hose",
  "key",
  "flowerpot",
  "bins",
  "tuesday",
  "客厅",
  "卧室灯",
  "雨伞",
  "钥匙",
  "password",
  "router",
  "grandma",
  "medicine",
  "blue",
  "shelf",
  "study",
  "album",
];

function sentence(random: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]!).join(" ");
}

async function tempDir(): Promise<string> {
  return await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-segment-" });
}

Deno.test("an index split into a segment and newer documents ranks exactly as one index holding them all", async () => {
  const dir = await tempDir();
  const random = lcg(7);
  const whole = new InvertedIndex(DEFAULT_SCORING);
  const first = new InvertedIndex(DEFAULT_SCORING);
  for (let i = 0; i < 400; i++) {
    const terms = analyze(sentence(random, 3 + Math.floor(random() * 8)));
    if (i % 7 === 0) terms.set("^lamp", 1);
    const meta = { time: i, session: `s${i % 13}` };
    whole.put(`d${i}`, terms, meta);
    first.put(`d${i}`, terms, meta);
  }
  const path = join(dir, "snap-1.bin");
  await writeSegment(path, { delta: first.snapshot() }, noPause);
  const split = new SegmentIndex(DEFAULT_SCORING, await Segment.open(path));
  // After the segment: replacements of its documents, deletions in both parts, new documents.
  for (let i = 0; i < 200; i++) {
    const id = `d${Math.floor(random() * 600)}`;
    if (random() < 0.25) {
      assert.equal(split.delete(id), whole.delete(id), `delete ${id}`);
      continue;
    }
    const terms = analyze(sentence(random, 2 + Math.floor(random() * 6)));
    whole.put(id, terms, { time: 1000 + i });
    split.put(id, terms, { time: 1000 + i });
  }
  assert.deepEqual(split.verify(), []);
  assert.equal(split.size, whole.size);
  assert.deepEqual(new Set(split.ids()), new Set(whole.ids()));
  assert.ok(split.recentSize > 0 && split.segment!.live < split.segment!.documents, "both parts are in play");
  for (let q = 0; q < 60; q++) {
    const query = analyze(sentence(random, 1 + Math.floor(random() * 4)));
    if (q % 3 === 0) query.set("^lamp", Math.exp(0.7 - 1));
    const options = { k: 10, pool: 20 };
    const expected = whole.search(query, options);
    const actual = split.search(query, options);
    assert.deepEqual(
      actual.map((hit) => [hit.id, hit.score]),
      expected.map((hit) => [hit.id, hit.score]),
      `query ${[...query.keys()].join(" ")}`,
    );
  }
  for (const id of ["d3", "d399", "d550"]) assert.deepEqual(split.get(id), whole.get(id), id);
  split.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("merging a segment with newer documents keeps every live one, drops the deleted and unused terms", async () => {
  const dir = await tempDir();
  const index = new InvertedIndex();
  index.put("lamp", analyze("the living room lamp turns off at ten"), { time: 1 });
  index.put("hose", analyze("the garden hose is in the shed"), { time: 2 });
  index.put("gone", analyze("a zebra note that is deleted"), { time: 3 });
  await writeSegment(join(dir, "snap-1.bin"), { delta: index.snapshot() }, noPause);
  const layered = new SegmentIndex(undefined, await Segment.open(join(dir, "snap-1.bin")));
  layered.delete("gone");
  layered.put("lamp", analyze("the living room lamp turns off at eleven now"), { time: 4 });
  layered.put("key", analyze("the spare key is under the blue flowerpot"), { time: 5 });
  const written = await writeSegment(join(dir, "snap-2.bin"), layered.cut(), noPause);
  assert.deepEqual({ documents: written.documents }, { documents: 3 });
  const merged = new SegmentIndex(undefined, await Segment.open(join(dir, "snap-2.bin")));
  assert.deepEqual(merged.ids(), ["hose", "lamp", "key"], "the segment's live documents first, then the newer");
  assert.equal(merged.recentSize, 0);
  assert.equal(merged.segment!.termId("zebra"), -1, "a term only the deleted document used is gone");
  assert.deepEqual(merged.get("lamp")!.meta, { time: 4 });
  assert.deepEqual(merged.verify(), []);
  const query = analyze("when does the lamp turn off");
  assert.deepEqual(merged.search(query, { k: 3 }), layered.search(query, { k: 3 }));
  layered.close();
  merged.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a damaged segment is refused with the byte and what is wrong", async () => {
  const dir = await tempDir();
  const index = new InvertedIndex();
  index.put("a", analyze("the spare key is under the blue flowerpot"), { time: 1 });
  index.put("b", analyze("bins go out on tuesday"), { time: 2 });
  const path = join(dir, "snap-1.bin");
  await writeSegment(path, { delta: index.snapshot() }, noPause);
  const good = await Deno.readFile(path);
  const refused = async (bytes: Uint8Array, pattern: RegExp) => {
    await Deno.writeFile(path, bytes);
    await assert.rejects(() => Segment.open(path), (error: unknown) => {
      assert.ok(error instanceof SnapshotError, String(error));
      assert.match(error.message, pattern);
      return true;
    });
  };
  const flipped = good.slice();
  flipped[good.length - 3] = flipped[good.length - 3]! ^ 0xff;
  await refused(flipped, /^corrupt at byte 4 \(checksum mismatch\)$/);
  await refused(
    good.subarray(0, good.length - 8),
    new RegExp(`the header's counts make ${good.length} bytes, the file has ${good.length - 8}`),
  );
  await refused(good.subarray(0, 10), /^corrupt at byte 0 \(not a segment\)$/);
  // Metadata that is not JSON under a checksum that holds (a writer's fault): refused the same way, naming where the
  // metadata starts.
  const text = new TextDecoder().decode(good);
  const at = text.lastIndexOf('{"time":2}');
  const broken = good.slice();
  broken[at + '{"time":2'.length] = "]".charCodeAt(0);
  new DataView(broken.buffer).setUint32(4, crc32(broken.subarray(8)), true);
  await refused(broken, /^corrupt at byte \d+ \(metadata that is not JSON: .+\)$/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a filter on a store's filter key reads its posting list; other filters read metadata", async () => {
  const dir = await tempDir();
  const store = await VectorStore.open(dir, { filterKeys: ["guest"] });
  store.put("own", "my umbrella is in the hall", { time: 1 });
  store.put("visitor", "my umbrella is in the car", { time: 2, guest: "visitor" });
  store.put("other", "my umbrella is red", { time: 3, guest: "someone" });
  const ids = (hits: Array<{ id: string }>) => hits.map((hit) => hit.id).sort();
  const check = () => {
    assert.deepEqual(ids(store.search("where is my umbrella", { filter: { guest: "visitor" } })), ["visitor"]);
    assert.deepEqual(ids(store.search("where is my umbrella", { filter: { guest: "nobody" } })), []);
    assert.deepEqual(ids(store.search("where is my umbrella", { filter: { time: 3 } })), ["other"]);
    assert.deepEqual(ids(store.search("where is my umbrella", { filter: (meta) => !meta.guest })), ["own"]);
    assert.deepEqual(store.index.get("visitor")!.terms, analyze("my umbrella is in the car"), "no filter term shown");
  };
  check();
  await store.compact();
  assert.equal(store.index.recentSize, 0);
  check();
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a segment keeps its dictionary, ids, per-document figures, terms and metadata in memory, its postings on disk", async () => {
  const dir = await tempDir();
  const random = lcg(11);
  const index = new InvertedIndex();
  for (let i = 0; i < 5_000; i++) {
    index.put(`doc-${i}`, analyze(`${sentence(random, 12)} item${i % 1500}`), {
      time: i,
      session: `session-${i % 200}`,
    });
  }
  const path = join(dir, "snap-1.bin");
  await writeSegment(path, { delta: index.snapshot() }, noPause);
  const segment = await Segment.open(path);
  const resident = segment.residentBytes;
  let pairs = 0;
  for (let slot = 0; slot < segment.documents; slot++) pairs += segment.termCount(slot);
  // The document terms are read in (5 bytes a pair: the id, and the weight as a code), and the metadata in columns;
  // besides the terms < 80 bytes a document, where the postings alone would be 8 bytes a pair.
  assert.ok(resident >= 5 * pairs, `${resident} resident, the document terms alone are ${5 * pairs}`);
  assert.ok(
    (resident - 5 * pairs) / 5_000 < 80,
    `${(resident - 5 * pairs) / 5_000} bytes a document besides its terms`,
  );
  assert.ok((8 * pairs) / 5_000 > 80, "the postings would not fit in 80");
  assert.deepEqual(segment.meta(4321), { time: 4321, session: "session-121" });
  assert.equal(segment.slotOf("doc-4321"), 4321);
  assert.equal(segment.slotOf("doc-5000"), -1);
  // A document's terms as they were put (weights 1 + ln tf).
  const { termIds, weights } = segment.docTerms(4321);
  assert.deepEqual(
    new Map([...termIds].map((termId, i) => [segment.termText(termId), Math.round(Math.exp(weights[i]! - 1))])),
    index.get("doc-4321")!.terms,
  );
  segment.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a segment's metadata follows its documents when a compaction renumbers their slots", async () => {
  const dir = await tempDir();
  const store = await VectorStore.open(dir, { pause: noPause });
  const random = lcg(3903);
  const texts = new Map<string, string>();
  const put = (id: string, version: number) => {
    texts.set(id, `${sentence(random, 6)} umbrella`);
    store.put(id, texts.get(id)!, { version, of: id });
  };
  for (let d = 0; d < 300; d++) put(`d${d}`, 1);
  await store.compact();
  const segment = store.index.segment!;
  const first = store.search("umbrella", { k: 300 });
  assert.equal(first.length, 300);
  // New objects each time: what a caller changes is not what the next search reads.
  segment.meta(7).of = "changed";
  assert.equal(segment.meta(7).of, segment.id(7));
  // Some documents deleted, some written anew: their slots move at the next compaction.
  for (let d = 0; d < 300; d += 3) store.delete(`d${d}`);
  for (let d = 1; d < 300; d += 3) put(`d${d}`, 2);
  const check = () => {
    const hits = store.search("umbrella", { k: 300 });
    assert.equal(hits.length, 200);
    for (const hit of hits) {
      assert.equal(hit.meta.of, hit.id, `${hit.id}'s own metadata`);
      assert.equal(hit.meta.version, Number(hit.id.slice(1)) % 3 === 1 ? 2 : 1);
      assert.deepEqual(store.index.get(hit.id)!.terms, analyze(texts.get(hit.id)!), `${hit.id}'s own terms`);
    }
  };
  check();
  await store.compact();
  assert.notEqual(store.index.segment, segment);
  check();
  await store.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a segment finds its long lists' maxima when it opens, the same as on a term's first search", async () => {
  const dir = await tempDir();
  const index = new InvertedIndex(DEFAULT_SCORING);
  const random = lcg(404);
  for (let d = 0; d < 2_000; d++) index.put(`d${d}`, analyze(sentence(random, 8)), {});
  const path = join(dir, "seg-1.bin");
  await writeSegment(path, { delta: index.snapshot() }, noPause);
  const segment = await Segment.open(path, noPause);
  const lamp = segment.termId("lamp");
  assert.ok(segment.df(lamp) >= 256, "a long list");
  const found = segment.maxima(lamp)!;
  // Computed anew from the postings, as a first search did before.
  const { slots, weights, to } = segment.postings(lamp);
  const least = new Map<number, number>();
  for (let i = 0; i < to; i++) {
    const norm = segment.norms()[slots[i]!]!;
    if (!(norm >= least.get(weights[i]!)!)) least.set(weights[i]!, norm);
  }
  const pairs = [...least].sort((a, b) => a[0] - b[0]);
  assert.ok(pairs.length <= 4, "few weights (tf 1 to 3)");
  assert.deepEqual(found.weights, pairs.map(([w]) => w));
  assert.deepEqual(found.norms, pairs.map(([, norm]) => norm));
  segment.close();
  await Deno.remove(dir, { recursive: true });
});
