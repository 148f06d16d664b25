import assert from "node:assert/strict";
import { join } from "node:path";
import { crc32 } from "../../search/crc32.ts";
import { idHash, JournalIndex, readLines } from "./journal_index.ts";

/** An index of `count` lines of 10 bytes each, event ids `e0` … */
function indexOf(count: number): JournalIndex {
  const index = new JournalIndex();
  for (let n = 0; n < count; n++) index.add(idHash(`e${n}`), 10 * n, 10);
  return index;
}

const concat = (...parts: Uint8Array[]) => {
  const joined = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) joined.set(part, (at += part.length) - part.length);
  return joined;
};

Deno.test("records are found by their hash, in journal order, past many doublings of the table", () => {
  const index = indexOf(5_000);
  index.add(idHash("e17"), 50_000, 10); // the other half of an exchange, later in the journal
  assert.deepEqual(index.matches(idHash("e17")), [17, 5_000]);
  assert.deepEqual(index.matches(idHash("e4999")), [4_999]);
  assert.deepEqual(index.matches(idHash("missing")), []);
  assert.equal(index.offset(4_999), 49_990);
  assert.equal(index.end, 50_010);
});

Deno.test("batches read back whole; reading stops at a torn, damaged, out-of-place or too long batch", () => {
  const index = indexOf(300);
  const first = index.encode(0, 200, 2_000), second = index.encode(200, 300, 3_000);
  const whole = JournalIndex.decode(concat(first, second), 3_000);
  assert.equal(whole.whole, true);
  assert.deepEqual([whole.index.count, whole.index.end], [300, 3_000]);
  assert.deepEqual(whole.index.matches(idHash("e250")), [250]);

  const cases: Array<[string, Uint8Array, number]> = [
    ["torn", concat(first, second.subarray(0, second.length - 3)), 3_000],
    ["a flipped bit", concat(first, second.map((byte, i) => i === 40 ? byte ^ 1 : byte)), 3_000],
    ["not following", concat(first, index.encode(250, 300, 3_000)), 3_000],
    ["longer than the journal", concat(first, second), 2_999],
  ];
  for (const [what, bytes, journalBytes] of cases) {
    const { index: read, whole } = JournalIndex.decode(bytes, journalBytes);
    assert.equal(whole, false, what);
    assert.deepEqual([read.count, read.end], [200, 2_000], what);
    assert.deepEqual(read.matches(idHash("e250")), [], `${what}: the dropped batch's records are gone`);
    assert.deepEqual(read.matches(idHash("e199")), [199], what);
  }
  // Records that go backwards inside a batch with a good checksum: the batch is dropped whole.
  const backwards = new JournalIndex();
  backwards.add(idHash("a"), 0, 10);
  backwards.add(idHash("b"), 10, 10);
  const bytes = backwards.encode(0, 2, 20);
  const view = new DataView(bytes.buffer);
  view.setFloat64(24 + 16 + 8, 5, true); // the second record starts inside the first
  view.setUint32(bytes.length - 4, crc32(bytes.subarray(0, bytes.length - 4)), true);
  const read = JournalIndex.decode(bytes, 20);
  assert.deepEqual([read.index.count, read.index.end, read.whole], [0, 0, false]);
  assert.deepEqual(read.index.matches(idHash("a")), []);
});

Deno.test("readLines reads adjacent lines in one piece and refuses lines not framed as lines", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-journal-index-" });
  const path = join(dir, "candidates.jsonl");
  const lines = ["aaaa", "bb", "ccccccc", "d"];
  await Deno.writeTextFile(path, lines.map((line) => `${line}\n`).join(""));
  const index = new JournalIndex();
  let offset = 0;
  for (const line of lines) {
    index.add(idHash(line), offset, line.length + 1);
    offset += line.length + 1;
  }
  assert.deepEqual(await readLines(path, index, [0, 1, 3]), ["aaaa", "bb", "d"]);
  const shifted = new JournalIndex();
  shifted.add(idHash("x"), 1, 4); // starts inside "aaaa"
  assert.equal(await readLines(path, shifted, [0]), undefined);
  const past = new JournalIndex();
  past.add(idHash("x"), offset, 5); // past the file's end
  assert.equal(await readLines(path, past, [0]), undefined);
  await Deno.remove(dir, { recursive: true });
});
