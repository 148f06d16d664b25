import assert from "node:assert/strict";
import { join } from "node:path";
import type { DocMeta } from "./inverted_index.ts";
import { MAX_META_KEYS, MetaColumns, type MetaSource } from "./meta_columns.ts";
import { InvertedIndex } from "./inverted_index.ts";
import { Segment } from "./segment.ts";
import { writeSegment } from "./segment_writer.ts";

const noPause = () => Promise.resolve();
const encoder = new TextEncoder();

/** Metadata as a segment's file holds it: one JSON text a slot, read in slices of at most `sliceSlots`. */
function sourceOf(metas: readonly unknown[], sliceSlots = 3): MetaSource {
  const texts = metas.map((meta) => encoder.encode(JSON.stringify(meta)));
  return {
    documents: metas.length,
    *metaSlices() {
      for (let from = 0; from < metas.length; from += sliceSlots) {
        yield [from, Math.min(metas.length, from + sliceSlots)] as [number, number];
      }
    },
    metasOfRange(from, to) {
      const starts = [0];
      for (let slot = from; slot < to; slot++) starts.push(starts.at(-1)! + texts[slot]!.length);
      const bytes = new Uint8Array(starts.at(-1)!);
      for (let slot = from; slot < to; slot++) bytes.set(texts[slot]!, starts[slot - from]!);
      return { bytes, offset: (slot) => starts[slot - from]! };
    },
  };
}

Deno.test("metadata in columns reads back as written: values, types and key order", async () => {
  const metas: DocMeta[] = [
    { time: 1788246218450, session: "y001-1", src: "qq:group:household", by: "Wei", trust: "household" },
    { time: 1788247150566, session: "y001-1", src: "qq:group:household", by: "奶奶", trust: "household" },
    {},
    { session: "y002-1", time: 0, guest: true },
    // A key holding a string in one document and a number in another.
    { time: "yesterday", by: "Lin" },
    { time: 0.5, by: "" },
    { "2": "two", "1": 1, z: false },
  ];
  const columns = (await MetaColumns.read(sourceOf(metas), noPause))!;
  metas.forEach((meta, slot) => {
    const read = columns.get(slot);
    assert.deepEqual(read, meta, `slot ${slot}`);
    assert.deepEqual(Object.keys(read), Object.keys(meta), `slot ${slot}'s key order`);
  });
  // A new object each time.
  columns.get(0).by = "changed";
  assert.equal(columns.get(0).by, "Wei");
});

Deno.test("metadata that is not an object of strings, numbers and booleans reads back as parsed", async () => {
  const metas = [{ time: 1 }, { nested: { a: 1 } }, null, [1, 2], { list: ["a"], time: 2 }, { time: 3 }];
  const columns = (await MetaColumns.read(sourceOf(metas), noPause))!;
  metas.forEach((meta, slot) => assert.deepEqual(columns.get(slot), meta, `slot ${slot}`));
});

Deno.test("metadata of more keys than columns are kept for is left to the file, and a segment still reads it", async () => {
  const metas = Array.from({ length: MAX_META_KEYS + 1 }, (_, i) => ({ [`key${i}`]: i }));
  assert.equal(await MetaColumns.read(sourceOf(metas), noPause), undefined);
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-meta-columns-" });
  const index = new InvertedIndex();
  metas.forEach((meta, i) => index.put(`d${i}`, new Map([["lamp", 1]]), meta));
  const path = join(dir, "snap-1.bin");
  await writeSegment(path, { delta: index.snapshot() }, noPause);
  const segment = await Segment.open(path, noPause);
  for (let slot = 0; slot < segment.documents; slot++) assert.deepEqual(segment.meta(slot), metas[slot]);
  segment.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a year's metadata in columns costs a third of its JSON", async () => {
  const metas = Array.from({ length: 20_000 }, (_, i) => ({
    time: 1788246218450 + i * 900_000,
    session: `y${String(Math.floor(i / 60)).padStart(3, "0")}-${i % 3}`,
    src: i % 7 ? "qq:group:household" : "weixin:o9cq800000@im.wechat",
    by: ["Wei", "Lin", "奶奶", "Tom"][i % 4]!,
    trust: "household",
  }));
  const json = metas.reduce((sum, meta) => sum + encoder.encode(JSON.stringify(meta)).length, 0);
  const columns = (await MetaColumns.read(sourceOf(metas, 500), noPause))!;
  assert.ok(columns.residentBytes < json / 3, `${columns.residentBytes} bytes in columns, ${json} as JSON`);
  assert.deepEqual(columns.get(12_345), metas[12_345]);
});
