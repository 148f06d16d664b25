/**
 * `deno task bench:memory` (issue 9): replays a long multi-session conversation through memory as the daemon runs it,
 * on a simulated clock, then asks the questions. Two sets: the English conversation set
 * (bench/retrieval/conversation_set.json: a family chatting in a group, the butler listening) and the 60-day
 * bilingual household log (household_log.json: the family talking to the butler, who answers briefly).
 *
 * Replay, per turn, in time order: the memory job runs when `memory.distill_interval` (30 min) has passed on the
 * simulated clock (distiller — rules, no LLM — and the cold rule, 72 h); the prompt's memory material for the turn is
 * built (the graph index in the system message, the reference block for the message); the exchange enters layer 1
 * (the RelevanceContext, 30 entries / 48k tokens, as in the daemon), whose evictions become layer-2 documents; the
 * after-turn hook journals it. All through `MemoryService`, the daemon's own wiring.
 *
 * Then each question, as a turn whose model calls `memory_recall` (k = 10), is answered from (b) the three layers
 * within the memory budget: graph index + reference block + the tool's result, trimmed from its lowest-ranked item
 * until the three fit in 2,000 tokens. Its evidence recall@10 counts a hit when a kept item's provenance holds a gold
 * turn id. (a), side by side: flat retrieval — the same engine over every raw turn, top 10, no budget. Target:
 * (b) ≥ 90% of (a), with ≤ 2,000 memory tokens per turn.
 *
 * Run: deno task bench:memory (writes bench/out/memory/replay.json; --record: bench/memory/replay.json).
 */

import { estimateTokens } from "../../src/context/tokens.ts";
import { VectorStore } from "../../src/search/store.ts";
import type { PromptSection } from "../../src/prompt/contributor.ts";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { type ConversationSet, loadConversationSet } from "../retrieval/conversation_set.ts";
import { environment, percentile, writeResults } from "../support/report.ts";
import { daemonMemory } from "./daemon_memory.ts";

const BUDGET_TOKENS = 2_000;
const K = 10;

const sectionTokens = (section: PromptSection | undefined) =>
  section ? estimateTokens(`## ${section.title}\n${section.body}\n`) : 0;

interface Row {
  turns: number;
  questions: number;
  flat_r10: number;
  layered_r10: number;
  ratio: number;
  flat_mrr: number;
  layered_mrr: number;
  memory_tokens_per_turn_mean: number;
  memory_tokens_per_turn_p95: number;
  memory_tokens_per_turn_max: number;
  question_tokens_mean: number;
  question_tokens_max: number;
  items_cut_by_budget: number;
  documents: number;
  archived_documents: number;
  entities: number;
  facts: number;
  replay_ms: number;
}

async function replay(set: ConversationSet, butlerAnswers: boolean): Promise<Row> {
  const started = performance.now();
  const turns = set.sessions.flatMap((session) => session.turns)
    .sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-bench-memory-" });
  const clock = new FakeClock({ start: Date.parse(turns[0]!.time) });
  const { memory, context, at, finish } = await daemonMemory(dir, clock);
  const perTurn: number[] = [];
  const source = "qq:group:household";

  for (const turn of turns) {
    await at(Date.parse(turn.time));
    const input = { text: turn.text, source, sender: turn.speaker, time: clock.now() };
    perTurn.push(sectionTokens(await memory.system("owner")) + sectionTokens(await memory.reference(input, [])));
    const reply = butlerAnswers ? (/\p{Script=Han}/u.test(turn.text) ? "好的。" : "Noted.") : "";
    const origin = { eventId: turn.id, time: clock.now(), source, sender: turn.speaker };
    context.appendTurn([
      { role: "user", content: `[via ${source}, from ${turn.speaker}, trust household] ${turn.text}` },
      ...(reply ? [{ role: "assistant" as const, content: reply }] : []),
    ], origin);
    await memory.afterTurn({ ...origin, trust: "household", text: turn.text, reply });
  }
  await finish();

  // (a) flat retrieval over every raw turn, same engine.
  const flat = await VectorStore.open(`${dir}/flat`);
  flat.putMany(turns.map((turn) => ({ id: turn.id, text: `${turn.speaker}: ${turn.text}` })));

  const rankOf = (index: number) => index + 1 || Infinity;
  const flatRanks: number[] = [], layeredRanks: number[] = [], questionTokens: number[] = [];
  let cut = 0;
  for (const question of set.questions) {
    const gold = new Set(question.gold);
    flatRanks.push(rankOf(flat.search(question.text, { k: K }).findIndex((hit) => gold.has(hit.id))));

    const input = { text: question.text, source, sender: "owner", time: clock.now() };
    const fixed = sectionTokens(await memory.system("owner")) + sectionTokens(await memory.reference(input, []));
    const items = await memory.recall(question.text, K);
    // The tool's result as the model gets it; its lowest-ranked items go first when the budget is exceeded.
    const result = (list: typeof items) =>
      estimateTokens(JSON.stringify(list.map((item) => ({ ...item, time: new Date(item.time).toISOString() }))));
    let kept = items;
    while (kept.length && fixed + result(kept) > BUDGET_TOKENS) kept = kept.slice(0, -1);
    cut += items.length - kept.length;
    questionTokens.push(fixed + result(kept));
    layeredRanks.push(rankOf(kept.findIndex((item) => item.provenance.some((id) => gold.has(id)))));
  }
  const status = memory.status() as Record<string, number>;
  await flat.close();
  await memory.stop();
  await Deno.remove(dir, { recursive: true });

  const round = (x: number) => Math.round(x * 1000) / 1000;
  const r10 = (ranks: number[]) => round(ranks.filter((rank) => rank <= K).length / ranks.length);
  const mrr = (ranks: number[]) => round(ranks.reduce((sum, rank) => sum + 1 / rank, 0) / ranks.length);
  const mean = (values: number[]) => Math.round(values.reduce((sum, x) => sum + x, 0) / values.length);
  return {
    turns: turns.length,
    questions: set.questions.length,
    flat_r10: r10(flatRanks),
    layered_r10: r10(layeredRanks),
    ratio: round(r10(layeredRanks) / r10(flatRanks)),
    flat_mrr: mrr(flatRanks),
    layered_mrr: mrr(layeredRanks),
    memory_tokens_per_turn_mean: mean(perTurn),
    memory_tokens_per_turn_p95: percentile(perTurn, 95),
    memory_tokens_per_turn_max: Math.max(...perTurn),
    question_tokens_mean: mean(questionTokens),
    question_tokens_max: Math.max(...questionTokens),
    items_cut_by_budget: cut,
    documents: status.documents ?? 0,
    archived_documents: status.archived_documents ?? 0,
    entities: status.entities ?? 0,
    facts: status.facts ?? 0,
    replay_ms: Math.round(performance.now() - started),
  };
}

const household = JSON.parse(
  await Deno.readTextFile(new URL("./household_log.json", import.meta.url)),
) as ConversationSet;
const rows: Record<string, Row> = {
  "English conversation set": await replay(await loadConversationSet(), false),
  "60-day bilingual household log": await replay(household, true),
};

const env = await environment();
await writeResults(new URL("./replay.json", import.meta.url), {
  ...env,
  budget_tokens: BUDGET_TOKENS,
  k: K,
  target: "layered_r10 ≥ 0.9 × flat_r10 at ≤ 2,000 memory tokens per turn",
  rows,
});
console.log(
  `memory replay: flat retrieval (a) vs three layers (b) (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`,
);
console.table(
  Object.fromEntries(
    Object.entries(rows).map(([name, row]) => [name, {
      "(a) flat r@10": row.flat_r10,
      "(b) layers r@10": row.layered_r10,
      "b/a": row.ratio,
      "(a) MRR": row.flat_mrr,
      "(b) MRR": row.layered_mrr,
      "tokens/turn mean": row.memory_tokens_per_turn_mean,
      "tokens/turn max": row.memory_tokens_per_turn_max,
      "question tokens max": row.question_tokens_max,
    }]),
  ),
);
console.table(
  Object.fromEntries(
    Object.entries(rows).map(([name, row]) => [name, {
      turns: row.turns,
      questions: row.questions,
      documents: row.documents,
      archived: row.archived_documents,
      entities: row.entities,
      facts: row.facts,
      "items cut by budget": row.items_cut_by_budget,
      "replay ms": row.replay_ms,
    }]),
  ),
);
const met = Object.values(rows).every((row) => row.ratio >= 0.9 && row.question_tokens_max <= BUDGET_TOKENS);
console.log(`target (b) ≥ 90% of (a) within ${BUDGET_TOKENS} memory tokens per turn: ${met ? "met" : "NOT met"}`);
