import assert from "node:assert/strict";
import { memoSize, similarities, termsOf } from "./relevance.ts";
import { HOUSEHOLD, termFrequencies } from "./tokenizer.ts";

/** The cosine as it was computed before the memo: fresh terms, a map of weights per text, `for … of` sums. */
function reference(texts: readonly string[], query: string): number[] {
  const vectors = texts.map((text) => termFrequencies(text, { lexicon: HOUSEHOLD }));
  const queryTerms = termFrequencies(query, { lexicon: HOUSEHOLD });
  const df = new Map<string, number>();
  for (const vector of [...vectors, queryTerms]) {
    for (const term of vector.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  }
  const n = vectors.length + 1;
  const weigh = (vector: Map<string, number>) => {
    const weights = new Map<string, number>();
    let norm = 0;
    for (const [term, tf] of vector) {
      const weight = (1 + Math.log(tf)) * Math.log(1 + n / df.get(term)!);
      weights.set(term, weight);
      norm += weight * weight;
    }
    return { weights, norm: Math.sqrt(norm) || 1 };
  };
  const q = weigh(queryTerms);
  return vectors.map((vector) => {
    const d = weigh(vector);
    let dot = 0;
    for (const [term, weight] of q.weights) dot += weight * (d.weights.get(term) ?? 0);
    return dot / (q.norm * d.norm);
  });
}

Deno.test("similarities are exactly what they were before the memo, in both languages, asked twice", () => {
  const texts = [
    "Wei: The photo album 812 is on the top shelf in the study.",
    "奶奶: 收纳盒813号放在书房的柜子里",
    "butler: Noted.",
    "Lin: lamp lamps lamp, the living room lamp",
    "",
  ];
  for (const query of ["where is the photo album 812", "收纳盒813号放在哪里？", "lamp", "?"]) {
    assert.deepEqual(similarities(texts, query), reference(texts, query), query);
    assert.deepEqual(similarities(texts, query), reference(texts, query), `${query}, from the memo`);
  }
});

Deno.test("the memo gives a text's terms as the tokenizer does, keeps the recent ones, and stays bounded", () => {
  const text = "把客厅的灯打开";
  assert.deepEqual(termsOf(text), termFrequencies(text, { lexicon: HOUSEHOLD }));
  assert.equal(termsOf(text), termsOf(text), "the second is the memo's");
  for (let i = 0; i < 2_000; i++) termsOf(`note ${i}`);
  assert.ok(memoSize() <= 512, `${memoSize()} texts kept`);
  assert.notEqual(termsOf(text), termsOf(`note 0`), "an old text was dropped, not mixed up");
  assert.deepEqual(termsOf(text), termFrequencies(text, { lexicon: HOUSEHOLD }), "and is tokenized again");
  const long = "lamp ".repeat(400);
  assert.deepEqual(termsOf(long), termFrequencies(long, { lexicon: HOUSEHOLD }));
  assert.notEqual(termsOf(long), termsOf(long), "a long text is not kept");
});
