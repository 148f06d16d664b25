import assert from "node:assert/strict";
import { join } from "node:path";
import { type DocMeta, InvertedIndex, type ScoringOptions } from "./inverted_index.ts";
import { type IndexPart, rank } from "./ranking.ts";
import { MASK_TERMS, Pool, scorePart } from "./max_score.ts";
import { Segment } from "./segment.ts";
import { writeSegment } from "./segment_writer.ts";

/** A small deterministic generator (no Math.random in tests). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** Term `j` of the vocabulary is in about 1/(j/3 + 1.3) of documents: a few very long lists, many short ones. */
const VOCABULARY = Array.from({ length: 60 }, (_, j) => j % 7 === 3 ? `~c${j}` : `t${j}`);

/** Random documents: term sets from the skewed vocabulary, a context-field term now and then, some exact copies. */
function corpus(random: () => number, count: number): Array<Map<string, number>> {
  const docs: Array<Map<string, number>> = [];
  for (let d = 0; d < count; d++) {
    if (docs.length && random() < 0.15) {
      docs.push(new Map(docs[Math.floor(random() * docs.length)]!)); // a tie with an earlier one
      continue;
    }
    const terms = new Map<string, number>();
    VOCABULARY.forEach((term, j) => {
      if (random() < 1 / (j / 3 + 1.3)) terms.set(term, 1 + Math.floor(random() * random() * 4));
    });
    if (random() < 0.3) terms.set(`^${VOCABULARY[Math.floor(random() * 10)]}`, 1);
    if (!terms.size) terms.set("t0", 1);
    docs.push(terms);
  }
  return docs;
}

function queryOf(random: () => number): Map<string, number> {
  const query = new Map<string, number>();
  const size = 1 + Math.floor(random() * 6);
  for (let i = 0; i < size; i++) {
    const term = VOCABULARY[Math.floor(random() * random() * VOCABULARY.length)]!;
    query.set(random() < 0.2 ? `^${term}` : term, 1 + Math.floor(random() * 2));
  }
  return query;
}

/**
 * The reference: every live document of every part scored (its float64 sum, rarer terms first), the filter applied,
 * sorted by score, then the earlier part, then the lower slot; the first `want`.
 */
function exhaustive(
  parts: readonly IndexPart[],
  query: ReadonlyMap<string, number>,
  scoring: ScoringOptions,
  want: number,
  filter?: (meta: DocMeta) => boolean,
): Array<[string, number]> {
  let n = 0, normSum = 0;
  for (const part of parts) (n += part.live, normSum += part.normSum);
  const terms: Array<{ text: string; weight: number }> = [];
  let queryNorm = 0, queryNormAll = 0;
  for (const [text, tf] of query) {
    let df = 0;
    parts.forEach((part) => df += part.termId(text) < 0 ? 0 : part.df(part.termId(text)));
    if (df <= 0) continue;
    const weight = (1 + Math.log(tf)) * Math.log((n + 1) / df) * (text.startsWith("~") ? scoring.conceptWeight : 1);
    terms.push({ text, weight });
    if (!text.startsWith("^")) queryNorm += weight * weight;
    queryNormAll += weight * weight;
  }
  queryNorm = Math.sqrt(queryNorm || queryNormAll);
  // Summed in float64, rarer terms (higher weights) first, then in the query's order.
  const order = terms.map((term, q) => ({ ...term, q })).sort((a, b) => b.weight - a.weight || a.q - b.q);
  const scored: Array<[number, number, number]> = [];
  parts.forEach((part, p) => {
    const alive = part.aliveFlags(), norms = part.norms();
    for (let slot = 0; slot < part.slotCount; slot++) {
      if (!alive[slot]) continue;
      const { termIds, weights } = part.docTerms(slot);
      const held = new Map([...termIds].map((termId, i) => [part.termText(termId), weights[i]!]));
      let raw = 0, matched = false;
      for (const { text, weight } of order) {
        const docWeight = held.get(text);
        if (docWeight === undefined) continue;
        matched = true;
        raw += weight * docWeight;
      }
      if (!matched || (filter && !filter(part.meta(slot)))) continue;
      const pivot = normSum / n;
      scored.push([raw / (queryNorm * ((1 - scoring.slope) * pivot + scoring.slope * norms[slot]!)), p, slot]);
    }
  });
  scored.sort((a, b) => b[0] - a[0] || a[1] - b[1] || a[2] - b[2]);
  return scored.slice(0, want).map(([score, p, slot]) => [parts[p]!.id(slot), score]);
}

Deno.test("MaxScore keeps exactly the exhaustive pool, ties and order included, on random corpora and queries", () => {
  const random = lcg(39_3);
  let queries = 0;
  for (let trial = 0; trial < 30; trial++) {
    const scoring: ScoringOptions = { slope: [0.75, 0, 0.3, 1][trial % 4]!, conceptWeight: 1.5, supersede: undefined };
    const older = new InvertedIndex(scoring), newer = new InvertedIndex(scoring);
    corpus(random, 300 + Math.floor(random() * 600)).forEach((terms, d) => {
      const index = random() < 0.7 ? older : newer;
      index.put(`d${d}`, terms, { even: d % 2 === 0 });
    });
    for (const id of older.ids()) if (random() < 0.1) older.delete(id);
    const parts = [older.part(), newer.part()];
    for (let q = 0; q < 25; q++, queries++) {
      const query = queryOf(random);
      const want = [1, 5, 20, 40][q % 4]!;
      const filter = q % 3 === 0 ? (meta: DocMeta) => meta.even === true : undefined;
      const got = rank(parts, query, { k: want, pool: want, ...(filter ? { filter } : {}) }, scoring);
      assert.deepEqual(
        got.map((hit) => [hit.id, hit.score]),
        exhaustive(parts, query, scoring, want, filter),
        `trial ${trial}, query ${JSON.stringify([...query])}, k ${want}`,
      );
    }
  }
  assert.equal(queries, 750);
});

Deno.test("MaxScore over a segment's long lists: the same pool, and the filter asked only of documents that can enter", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-maxscore-" });
  const scoring: ScoringOptions = { slope: 0.75, conceptWeight: 1.5, supersede: undefined };
  const random = lcg(20261204);
  const base = new InvertedIndex(scoring);
  // "tom" is in every document (a family member's name), "album" in one in ten, "812" in three.
  for (let d = 0; d < 3_000; d++) {
    const terms = new Map([["tom", 1], [`w${Math.floor(random() * 50)}`, 1 + Math.floor(random() * 3)]]);
    if (d % 10 === 0) terms.set("album", 1);
    if (d === 5 || d === 1_500 || d === 2_900) terms.set("812", 1);
    base.put(`d${d}`, terms, { d });
  }
  const path = join(dir, "seg-1.bin");
  await writeSegment(path, { delta: base.snapshot() }, () => Promise.resolve());
  const segment = await Segment.open(path);
  for (const slot of [10, 20, 1_500]) segment.kill(slot);
  const recent = new InvertedIndex(scoring);
  recent.put("r1", new Map([["tom", 1], ["album", 2], ["812", 1]]), { d: -1 });
  recent.put("r2", new Map([["tom", 2]]), { d: -2 });
  const parts = [segment, recent.part()];
  assert.ok(segment.maxima(segment.termId("tom")), "a long list keeps its maxima");
  assert.equal(segment.maxima(segment.termId("812")), undefined, "a short one is always walked");
  for (const text of ["tom album 812", "tom", "tom album", "where is tom w3", "album 812"]) {
    const query = new Map(text.split(" ").map((term) => [term, 1]));
    for (const want of [1, 5, 40]) {
      let asked = 0;
      const filter = (meta: DocMeta) => (asked++, Number(meta.d) % 3 !== 0);
      const got = rank(parts, query, { k: want, pool: want, filter }, scoring);
      const expected = exhaustive(parts, query, scoring, want, (meta) => Number(meta.d) % 3 !== 0);
      assert.deepEqual(got.map((hit) => [hit.id, hit.score]), expected, `${text}, k ${want}`);
      if (text === "tom album 812" && want === 5) {
        assert.ok(asked < 300, `the filter was asked ${asked} times of 3,000`);
      }
    }
  }
  segment.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("twin lists (a name and its concept, holding the same documents) are summed in one walk, as two", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-maxscore-twins-" });
  const scoring: ScoringOptions = { slope: 0.75, conceptWeight: 1.5, supersede: undefined };
  const random = lcg(393);
  const base = new InvertedIndex(scoring);
  // "奶奶" and "~grandmother" hold the same 2,400 documents (twins); "lin" and "~lin" as many, the same but one
  // (almost twins: one slot differs); "放在" is in three quarters of all (summed after them); "药" in a few.
  for (let d = 0; d < 4_000; d++) {
    const terms = new Map<string, number>([[`w${Math.floor(random() * 40)}`, 1 + Math.floor(random() * 3)]]);
    if (d % 5 < 3) (terms.set("奶奶", 1 + (d % 3 === 0 ? 1 : 0)), terms.set("~grandmother", 1 + (d % 7 === 0 ? 1 : 0)));
    if (d % 10 < 3) terms.set("lin", 1);
    if ((d % 10 < 3 && d !== 30) || d === 33) terms.set("~lin", d === 31 ? 2 : 1);
    if (d % 4 !== 0) terms.set("放在", 1);
    if (d % 401 === 0) terms.set("药", 1);
    base.put(`d${d}`, terms, { d });
  }
  const path = join(dir, "seg-1.bin");
  await writeSegment(path, { delta: base.snapshot() }, () => Promise.resolve());
  const segment = await Segment.open(path);
  for (const slot of [15, 16, 2_000]) segment.kill(slot);
  const recent = new InvertedIndex(scoring);
  recent.put("r1", new Map([["奶奶", 1], ["~grandmother", 1], ["药", 1]]), { d: -1 });
  const parts = [segment, recent.part()];
  const queries = [
    "奶奶 ~grandmother 放在 药",
    "奶奶 ~grandmother 放在",
    "奶奶 ~grandmother",
    "lin ~lin 放在 药",
    "药 奶奶 ~grandmother w3",
  ];
  for (const text of queries) {
    const query = new Map(text.split(" ").map((term) => [term, 1]));
    for (const want of [1, 5, 40]) {
      const got = rank(parts, query, { k: want, pool: want }, scoring);
      assert.deepEqual(
        got.map((hit) => [hit.id, hit.score]),
        exhaustive(parts, query, scoring, want),
        `${text}, k ${want}`,
      );
    }
  }
  segment.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a pool emptied for another search keeps what a new pool of its size keeps", () => {
  const random = lcg(5);
  // Scores on a coarse grid: many ties, which the part and the slot order.
  const offers = Array.from(
    { length: 300 },
    () => [Math.round(random() * 40) / 8, random() < 0.5 ? 0 : 1, (random() * 1e3) | 0],
  );
  const reused = new Pool(3);
  reused.offer(9, 0, 0);
  for (const size of [5, 2, 40, 1]) {
    const fresh = new Pool(size);
    assert.equal(reused.reset(size), reused);
    assert.equal(reused.size, size);
    for (const [score, part, slot] of offers) {
      fresh.offer(score!, part!, slot!, slot);
      reused.offer(score!, part!, slot!, slot);
    }
    assert.deepEqual(reused.items, fresh.items, `size ${size}`);
  }
});

Deno.test("each candidate's mask names exactly the query terms it holds, in every part", () => {
  const random = lcg(31);
  const scoring: ScoringOptions = { slope: 0.75, conceptWeight: 1.5, supersede: undefined };
  const older = new InvertedIndex(scoring), newer = new InvertedIndex(scoring);
  corpus(random, 600).forEach((terms, d) => (random() < 0.6 ? older : newer).put(`d${d}`, terms, {}));
  const parts = [older.part(), newer.part()];
  for (let q = 0; q < 40; q++) {
    const query = [...queryOf(random)].map(([term]) => term);
    const pool = new Pool(20);
    // As `rank` gives them: each term's id in each part (terms no document holds left out), rarer first.
    const terms = query.map((term) => ({
      ids: parts.map((part) => part.termId(term)),
      weight: 1 + query.indexOf(term),
    }))
      .filter(({ ids }) => ids.some((id) => id >= 0));
    parts.forEach((part, p) =>
      scorePart(part, pool, {
        part: p,
        terms,
        queryNorm: 1,
        slope: 0.75,
        pivot: part.normSum / Math.max(1, part.live),
        keep: undefined,
        filter: undefined,
        matches: () => true,
      })
    );
    for (const [, p, slot, mask] of pool.items) {
      const held = new Set(parts[p]!.docTerms(slot).termIds);
      const expected = terms.reduce((bits, { ids }, t) => held.has(ids[p]!) ? bits | (1 << t) : bits, 0);
      assert.equal(mask, expected, `query ${query}, part ${p}, slot ${slot}`);
    }
  }
});

Deno.test("a newer near-duplicate supersedes the older with a query too long for a mask as with a short one", () => {
  const index = new InvertedIndex();
  const filler = Array.from({ length: 40 }, (_, i) => `w${i}`);
  index.put("older", new Map([["spare", 1], ["key", 1], ["flowerpot", 1]]), { time: 1 });
  index.put("newer", new Map([["spare", 1], ["key", 1], ["flowerpot", 1], ["blue", 1]]), { time: 2 });
  index.put("elsewhere", new Map([["spare", 1], ["key", 1], ["drawer", 1]]), { time: 3 });
  index.put("filler", new Map(filler.map((term) => [term, 1])), { time: 0 });
  for (let d = 0; d < 20; d++) index.put(`other${d}`, new Map([[`x${d}`, 1], ["spare", 1]]), { time: 0 });
  const short = new Map([["spare", 1], ["key", 1], ["flowerpot", 1]]);
  const long = new Map([...short, ...filler.map((term) => [term, 1] as const)]);
  assert.ok(long.size > MASK_TERMS);
  for (const query of [short, long]) {
    const ids = index.search(query, { k: 3 }).map((hit) => hit.id);
    assert.ok(ids.indexOf("newer") < ids.indexOf("older"), `${query.size} terms: ${ids}`);
  }
  // Without the newer one's terms, the older ranks first: it was moved, not outscored.
  const alone = new InvertedIndex();
  alone.put("older", new Map([["spare", 1], ["key", 1], ["flowerpot", 1]]), { time: 1 });
  alone.put("newer", new Map([["spare", 1], ["key", 1], ["flowerpot", 1], ["blue", 1]]), { time: 0 });
  assert.equal(alone.search(short, { k: 2 })[0]!.id, "older");
});
