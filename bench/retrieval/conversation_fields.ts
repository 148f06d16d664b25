/**
 * Conversation-aware recall's parameters (issue 9, item 8), chosen on the conversation set (the adjustments run
 * through the index's `rerank` hook, before supersession, as `DocumentStore` runs them): each turn is indexed with
 * a second field — the previous turn's words, as namespaced terms in the same vector, not a second score added on —
 * and a query asks for it at weight `f`; context terms count in neither norm (see `CONTEXT_FIELD`). It runs the
 * shipped mechanism: `VectorStore.put(…, context)` and `VectorStore.search(…, { contextWeight: f })`. A query that
 * names a household member multiplies that person's turns by `speaker`; a when-question multiplies turns that name a
 * time by `when`. All three are chosen on the `tune` questions only; the table reports `test` with them, beside the
 * plain engine (f = 0, factors 1) — the anchor — in the same run.
 *
 * Run: deno task eval:conversation-fields (writes bench/out/retrieval/conversation_fields.json; --record: committed).
 */

import { hasTimeWords, isWhenQuestion } from "../../src/memory/recall/time_words.ts";
import { fuseConversations } from "../../src/memory/document/document_store.ts";
import { DEFAULT_SCORING } from "../../src/search/inverted_index.ts";
import { VectorStore } from "../../src/search/store.ts";
import { environment, writeResults } from "../support/report.ts";
import { loadConversationSet } from "./conversation_set.ts";

const set = await loadConversationSet();

// One store, as the memory keeps documents: a search without `contextWeight` scores exactly as a store without the
// field (context terms count in no norm), so f = 0 is the plain engine.
const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-conversation-fields-" });
const store = await VectorStore.open(dir);
const speakerOf = new Map<string, string>();
const textOf = new Map<string, string>();
const sessionOf = new Map<string, string>();
for (const session of set.sessions) {
  session.turns.forEach((turn, i) => {
    sessionOf.set(turn.id, session.id);
    speakerOf.set(turn.id, turn.speaker);
    textOf.set(turn.id, turn.text);
    store.put(turn.id, `${turn.speaker}: ${turn.text}`, { time: Date.parse(turn.time) }, session.turns[i - 1]?.text);
  });
}

/** Parameters of one run; `session`: weight of the turn's session score (the best other hit of its session). */
interface Params {
  f: number;
  speaker: number;
  when: number;
  session: number;
  slope: number;
}
const PLAIN: Params = { f: 0, speaker: 1, when: 1, session: 0, slope: DEFAULT_SCORING.slope };

/** recall@10 and MRR per category (and `all`) on one split. */
function run(params: Params, split: "tune" | "test") {
  const { f, speaker, when, session, slope } = params;
  store.index.scoring = { ...DEFAULT_SCORING, slope };
  const ranks: Record<string, number[]> = {};
  for (const question of set.questions.filter((q) => q.split === split)) {
    const named = set.speakers.filter((person) => question.text.includes(person));
    const asksWhen = isWhenQuestion(question.text);
    // The shipped mechanism: adjustments through the index's `rerank`, before it orders and supersedes.
    const hits = store.search(question.text, {
      k: 100,
      pool: 100,
      contextWeight: f,
      rerank: (candidates) => {
        fuseConversations(candidates, session, (hit) => sessionOf.get(hit.id)!);
        for (const hit of candidates) {
          hit.score *= (named.includes(speakerOf.get(hit.id)!) ? speaker : 1) *
            (asksWhen && hasTimeWords(textOf.get(hit.id)!) ? when : 1);
        }
      },
    });
    const rank = hits.findIndex((hit) => question.gold.includes(hit.id)) + 1 || Infinity;
    for (const key of [question.category, "all"]) (ranks[key] ??= []).push(rank);
  }
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return Object.fromEntries(
    Object.entries(ranks).map(([category, list]) => [category, {
      r10: round(list.filter((rank) => rank <= 10).length / list.length),
      mrr: round(list.reduce((sum, rank) => sum + 1 / rank, 0) / list.length),
      n: list.length,
    }]),
  );
}

const sweep: Array<Params & { tune_r10: number; tune_mrr: number }> = [];
for (const f of [0, 0.5, 0.7, 0.9]) {
  for (const speaker of [1, 1.5]) {
    for (const when of [1, 2]) {
      for (const session of [0, 0.1, 0.2, 0.4]) {
        for (const slope of [0.5, 0.75, 1]) {
          const params = { f, speaker, when, session, slope };
          const all = run(params, "tune").all!;
          sweep.push({ ...params, tune_r10: all.r10, tune_mrr: all.mrr });
        }
      }
    }
  }
}
// Best recall@10 on tune, then MRR; ties go to the plainer setting (smaller weights and factors, default slope).
const plainness = (p: Params) => p.f + p.speaker + p.when + p.session + Math.abs(p.slope - DEFAULT_SCORING.slope);
const best = [...sweep].sort((a, b) =>
  b.tune_r10 - a.tune_r10 || b.tune_mrr - a.tune_mrr || plainness(a) - plainness(b)
)[0]!;
const chosen: Params = { f: best.f, speaker: best.speaker, when: best.when, session: best.session, slope: best.slope };
const test = { anchor: run(PLAIN, "test"), chosen: run(chosen, "test") };
/** Each addition alone on the test half, beside the plain engine: what each one is worth by itself. */
const alone = Object.fromEntries(
  (["f", "speaker", "when", "session", "slope"] as const).map((key) => {
    const figures = run({ ...PLAIN, [key]: chosen[key] }, "test").all!;
    return [`${key} = ${chosen[key]} alone`, { test_r10: figures.r10, test_mrr: figures.mrr }];
  }),
);

await store.close();
await Deno.remove(dir, { recursive: true });

const env = await environment();
await writeResults(new URL("./conversation_fields.json", import.meta.url), {
  ...env,
  chosen_on_tune: chosen,
  sweep_size: sweep.length,
  top_of_sweep: [...sweep].sort((a, b) => b.tune_r10 - a.tune_r10 || b.tune_mrr - a.tune_mrr).slice(0, 10),
  test,
  alone_on_test: alone,
});
console.log(`conversation fields (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table([...sweep].sort((a, b) => b.tune_r10 - a.tune_r10 || b.tune_mrr - a.tune_mrr).slice(0, 10));
console.log(`chosen on tune: ${JSON.stringify(chosen)}; test split:`);
console.table(Object.fromEntries(
  Object.keys(test.anchor).map((category) => [category, {
    anchor_r10: test.anchor[category]!.r10,
    chosen_r10: test.chosen[category]?.r10,
    anchor_mrr: test.anchor[category]!.mrr,
    chosen_mrr: test.chosen[category]?.mrr,
    n: test.anchor[category]!.n,
  }]),
));
console.table(alone);
