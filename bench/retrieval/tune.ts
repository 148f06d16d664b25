/**
 * Parameter sweep of the engine's scoring on both eval corpora (kept for transparency: these runs chose the
 * defaults in src/search/inverted_index.ts). Run: deno run --allow-read=.,../shared/data bench/retrieval/tune.ts
 */

import { InvertedIndex, type ScoringOptions } from "../../src/search/inverted_index.ts";
import { HOUSEHOLD, termFrequencies } from "../../src/search/tokenizer.ts";

const cmrc = JSON.parse(
  await Deno.readTextFile(new URL("../../../shared/data/cmrc2018/cmrc2018_dev.json", import.meta.url)),
);
const home = JSON.parse(await Deno.readTextFile(new URL("./home_set.json", import.meta.url)));
const corpora = {
  cmrc2018: {
    docs: cmrc.data.flatMap((a: { paragraphs: Array<{ id: string; context: string }> }) =>
      a.paragraphs.map((p) => ({ id: p.id, text: p.context, time: 0 }))
    ),
    queries: cmrc.data.flatMap((a: { paragraphs: Array<{ id: string; qas: Array<{ question: string }> }> }) =>
      a.paragraphs.flatMap((p) => p.qas.map((q) => ({ text: q.question, gold: [p.id], category: "all" })))
    ),
  },
  home: {
    docs: home.notes.map((n: { id: string; text: string; time: string }) => ({
      id: n.id,
      text: n.text,
      time: Date.parse(n.time),
    })),
    queries: home.queries,
  },
};
const analyzed = Object.fromEntries(
  Object.entries(corpora).map(([name, c]) => [name, {
    docs: c.docs.map((d: { id: string; text: string; time: number }) => ({
      ...d,
      terms: termFrequencies(d.text, { lexicon: HOUSEHOLD }),
    })),
    queries: c.queries.map((q: { text: string; gold: string[]; category: string }) => ({
      ...q,
      terms: termFrequencies(q.text, { lexicon: HOUSEHOLD }),
    })),
  }]),
);

function run(scoring: ScoringOptions, name: string) {
  const index = new InvertedIndex(scoring);
  for (const d of analyzed[name]!.docs) index.put(d.id, d.terms, { time: d.time });
  const ranks = analyzed[name]!.queries.map((q: { terms: Map<string, number>; gold: string[] }) => {
    const r = index.search(q.terms, { k: 100 }).findIndex((h) => q.gold.includes(h.id));
    return r === -1 ? Infinity : r + 1;
  });
  const share = (l: number) => ranks.filter((r: number) => r <= l).length / ranks.length;
  return {
    r10: share(10).toFixed(4),
    mrr: (ranks.reduce((s: number, r: number) => s + (r === Infinity ? 0 : 1 / r), 0) / ranks.length).toFixed(4),
  };
}

const rows: Record<string, unknown> = {};
const sweep = Deno.args[0] ?? "weights";
if (sweep === "weights") {
  for (const slope of [0.5, 0.75, 1]) {
    for (const conceptWeight of [0.6, 1, 1.5, 2]) {
      const scoring = { slope, conceptWeight, supersede: { similarity: 0.3, ratio: 0.5 } };
      rows[`s=${slope} c=${conceptWeight}`] = {
        cmrc: JSON.stringify(run(scoring, "cmrc2018")),
        home: JSON.stringify(run(scoring, "home")),
      };
    }
  }
} else {
  for (const similarity of [0.2, 0.3, 0.45]) {
    for (const ratio of [0.3, 0.5, 0.7]) {
      const scoring = { slope: 0.75, conceptWeight: 1.5, supersede: { similarity, ratio } };
      rows[`sim=${similarity} ratio=${ratio}`] = {
        cmrc: JSON.stringify(run(scoring, "cmrc2018")),
        home: JSON.stringify(run(scoring, "home")),
      };
    }
  }
  rows["no supersede"] = { home: JSON.stringify(run({ slope: 0.75, conceptWeight: 1.5 }, "home")) };
}
console.table(rows);
