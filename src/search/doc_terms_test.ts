import assert from "node:assert/strict";
import { join } from "node:path";
import { DocTerms } from "./doc_terms.ts";

const noPause = () => Promise.resolve();

/** A document terms section as a segment writes it: per document its term ids (i32), then their weights (f32). */
async function section(dir: string, documents: Array<Array<[number, number]>>, lead = 12): Promise<string> {
  const pairs = documents.reduce((sum, terms) => sum + terms.length, 0);
  const bytes = new Uint8Array(lead + 8 * pairs);
  const view = new DataView(bytes.buffer);
  let at = lead;
  for (const terms of documents) {
    terms.forEach(([id], i) => view.setInt32(at + 4 * i, id, true));
    terms.forEach(([, weight], i) => view.setFloat32(at + 4 * (terms.length + i), weight, true));
    at += 8 * terms.length;
  }
  const path = join(dir, "terms.bin");
  await Deno.writeFile(path, bytes);
  return path;
}

const startsOf = (documents: Array<Array<[number, number]>>) => {
  const starts = new Uint32Array(documents.length + 1);
  documents.forEach((terms, d) => (starts[d + 1] = starts[d]! + terms.length));
  return starts;
};

Deno.test("document terms read back as written: ids, and weights through their codes or whole past 256 of them", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-doc-terms-" });
  const few = (d: number): Array<[number, number]> =>
    Array.from({ length: d % 7 }, (_, i) => [d * 10 + i, Math.fround(1 + Math.log(1 + ((d + i) % 4)))]);
  // Many distinct weights (a custom scorer's): past 256 they are kept whole, those before the 257th too.
  const many = (d: number): Array<[number, number]> =>
    Array.from({ length: 3 }, (_, i) => [d + i, Math.fround(0.001 * (3 * d + i))]);
  for (const make of [few, many]) {
    // Documents over more than one of the reader's 1 MB slices, and one with no terms.
    const documents = Array.from({ length: 60_000 }, (_, d) => make(d));
    const path = await section(dir, documents);
    const file = await Deno.open(path);
    const terms = await DocTerms.read(file, 12, startsOf(documents), noPause);
    file.close();
    for (const d of [0, 1, 6, 7, 257, 40_000, 59_999]) {
      const { termIds, weights } = terms.of(d);
      assert.deepEqual([...termIds], documents[d]!.map(([id]) => id), `document ${d}'s ids`);
      assert.deepEqual([...weights], documents[d]!.map(([, weight]) => weight), `document ${d}'s weights`);
    }
    const pairs = documents.reduce((sum, list) => sum + list.length, 0);
    assert.equal(terms.residentBytes, make === few ? 5 * pairs : 8 * pairs);
  }
  await Deno.remove(dir, { recursive: true });
});
