/**
 * Conversation-aware recall's parameters (issue 9, item 8), chosen on the conversation set: each turn is indexed with
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
import { VectorStore } from "../../src/memory/vector/store.ts";
import { environment, writeResults } from "../support/report.ts";
import { loadConversationSet } from "./conversation_set.ts";

const set = await loadConversationSet();

// One store, as the memory keeps documents: a search without `contextWeight` scores exactly as a store without the
// field (context terms count in no norm), so f = 0 is the plain engine.
const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-conversation-fields-" });
const store = await VectorStore.open(dir);
const speakerOf = new Map<string, string>();
const textOf = new Map<string, string>();
for (const session of set.sessions) {
  session.turns.forEach((turn, i) => {
    speakerOf.set(turn.id, turn.speaker);
    textOf.set(turn.id, turn.text);
    store.put(turn.id, `${turn.speaker}: ${turn.text}`, { time: Date.parse(turn.time) }, session.turns[i - 1]?.text);
  });
}

/** recall@10 and MRR per category (and `all`) on one split. */
function run(f: number, speaker: number, split: "tune" | "test", when = 1) {
  const ranks: Record<string, number[]> = {};
  for (const question of set.questions.filter((q) => q.split === split)) {
    const named = set.speakers.filter((person) => question.text.includes(person));
    const asksWhen = isWhenQuestion(question.text);
    const hits = store.search(question.text, { k: 100, contextWeight: f })
      .map((hit) => ({
        id: hit.id,
        score: hit.score * (named.includes(speakerOf.get(hit.id)!) ? speaker : 1) *
          (asksWhen && hasTimeWords(textOf.get(hit.id)!) ? when : 1),
      }))
      .sort((a, b) => b.score - a.score);
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

const sweep: Array<{ f: number; speaker: number; when: number; tune_r10: number; tune_mrr: number }> = [];
for (const f of [0, 0.3, 0.5, 0.7, 0.9]) {
  for (const speaker of [1, 1.5, 2]) {
    for (const when of [1, 1.5, 2]) {
      const all = run(f, speaker, "tune", when).all!;
      sweep.push({ f, speaker, when, tune_r10: all.r10, tune_mrr: all.mrr });
    }
  }
}
// Best recall@10 on tune, then MRR; ties go to the smaller weight and factors.
const best = [...sweep].sort((a, b) =>
  b.tune_r10 - a.tune_r10 || b.tune_mrr - a.tune_mrr || a.f - b.f || a.speaker - b.speaker || a.when - b.when
)[0]!;
const test = { anchor: run(0, 1, "test"), chosen: run(best.f, best.speaker, "test", best.when) };

await store.close();
await Deno.remove(dir, { recursive: true });

const env = await environment();
await writeResults(new URL("./conversation_fields.json", import.meta.url), {
  ...env,
  chosen_on_tune: { f: best.f, speaker: best.speaker, when: best.when },
  sweep,
  test,
});
console.log(`conversation fields (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(sweep);
console.log(`chosen on tune: f = ${best.f}, speaker = ${best.speaker}, when = ${best.when}; test split:`);
console.table(Object.fromEntries(
  Object.keys(test.anchor).map((category) => [category, {
    anchor_r10: test.anchor[category]!.r10,
    chosen_r10: test.chosen[category]?.r10,
    anchor_mrr: test.anchor[category]!.mrr,
    chosen_mrr: test.chosen[category]?.mrr,
    n: test.anchor[category]!.n,
  }]),
));
