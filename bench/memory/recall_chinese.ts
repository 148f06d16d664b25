/**
 * Recall on the Chinese household set (`chinese_set.json`, written by `make_chinese_set.ts`): two families' group
 * chats over four months, 王家 the `tune` half, 林家 the `test` half.
 *
 * Through the daemon's own path, as `eval:memory-locomo` runs LoCoMo: per household, on a simulated clock at each
 * turn's time, every utterance is a turn of `MemoryService` (the context window of 30 entries whose evictions become
 * layer-2 documents, the after-turn journal, the memory job every 30 simulated minutes). Unlike LoCoMo, each question
 * is asked when the set says (`asked_at`, during the replay, after the turns said before it): its relative day words
 * ("上周三", "大前天") mean that moment. Each goes to `MemoryService.recall(question, 10)`.
 *
 * Scored by the strict rule of `eval:memory-locomo` (`strict_credit.ts`): an item earns credit for at most
 * ⌈its length / 40⌉ of its turns in the order it shows them; recall@1 is the best item's, recall@10 is read within a
 * budget of k × 125 characters. Two FTS5 anchors over the same turns said so far (one row each, BM25), scored the same:
 * - `fts5`: `fts5System` of `bench/retrieval/systems.ts`, as `eval:memory-locomo` uses it — its Chinese column holds
 *   the CJK bigrams of homed's own tokenizer (FTS5's `unicode61` keeps a whole run of Han characters as one token, so
 *   a question could only match a turn written identically);
 * - `fts5_trigram`: what someone outside would use with no tokenizer of their own: SQLite's built-in `trigram`
 *   tokenizer, the question as an OR of its three-character pieces.
 * The acceptance anchor is the better of the two on each figure.
 *
 * Run: deno task eval:memory-chinese (writes bench/out/memory/recall_chinese.json; --record:
 * bench/memory/recall_chinese.json; --only tune: that half alone; --dump file.jsonl: each question's items).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { DatabaseSync } from "node:sqlite";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { type EvalDoc, fts5System, type RetrievalSystem } from "../retrieval/systems.ts";
import { daemonMemory } from "./daemon_memory.ts";
import { environment, writeResults } from "../support/report.ts";
import { score, type Scored, type ShownItem } from "./strict_credit.ts";
import type { ChineseHousehold, ChineseKind, ChineseSet } from "./make_chinese_set.ts";

const K = 10;
const BUDGET_CHARS = K * 125;
const SOURCE = "qq:group:family";
const KINDS: ChineseKind[] = ["single", "multi", "temporal", "when", "corrected", "contradiction"];

/**
 * "2026-06-03T19:12" as the machine's local time, as the daemon reads wall-clock times.
 *
 * @example
 * ```ts
 * wallTime("2026-06-03T19:12") === new Date(2026, 5, 3, 19, 12).getTime(); // true
 * ```
 */
export function wallTime(text: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(text);
  if (!match) throw new TypeError(`${JSON.stringify(text)} is not "YYYY-MM-DDTHH:MM"`);
  const [, y, mo, d, h, mi] = match.map(Number);
  return new Date(y!, mo! - 1, d!, h!, mi!).getTime();
}

/** Han, kana and Hangul runs: where the trigram anchor takes its pieces. */
const CJK_RUN = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]+/gu;

/**
 * SQLite FTS5 with its `trigram` tokenizer, queried with an OR of the question's three-character pieces (CJK runs)
 * and its Latin words: FTS5 with nothing of homed's.
 *
 * @example
 * ```ts
 * const fts = fts5TrigramSystem();
 * fts.index([{ id: "t1", text: "妈妈: 小乐对花生过敏" }]);
 * fts.search("小乐对什么过敏？", 10); // ["t1"]: its piece 小乐对 is in the turn
 * fts.close?.();
 * ```
 */
export function fts5TrigramSystem(): RetrievalSystem {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, body, tokenize = 'trigram')");
  const insert = db.prepare("INSERT INTO docs (doc_id, body) VALUES (?, ?)");
  const query = db.prepare("SELECT doc_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?");
  return {
    name: "fts5_trigram",
    index(docs: readonly EvalDoc[]) {
      db.exec("BEGIN");
      for (const doc of docs) insert.run(doc.id, doc.text);
      db.exec("COMMIT");
    },
    search(text, k) {
      const pieces = new Set<string>();
      for (const run of text.match(CJK_RUN) ?? []) {
        const chars = [...run];
        for (let i = 0; i + 3 <= chars.length; i++) pieces.add(chars.slice(i, i + 3).join(""));
      }
      for (const word of text.replace(CJK_RUN, " ").match(/[\p{L}\p{N}]{3,}/gu) ?? []) pieces.add(word.toLowerCase());
      if (!pieces.size) return [];
      const match = [...pieces].map((piece) => `"${piece.replaceAll('"', '""')}"`).join(" OR ");
      return (query.all(match, k) as Array<{ doc_id: string }>).map((row) => row.doc_id);
    },
    close: () => db.close(),
  };
}

interface Outcome {
  split: "tune" | "test";
  kind: ChineseKind;
  homed: Scored;
  fts5: Scored;
  trigram: Scored;
}

async function evaluate(
  household: ChineseHousehold,
  dump: Array<Record<string, unknown>> | undefined,
): Promise<Outcome[]> {
  const turns = household.turns.map((turn) => ({ ...turn, at: wallTime(turn.time) }));
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-chinese-" });
  const clock = new FakeClock({ start: turns[0]!.at });
  const replay = await daemonMemory(dir, clock);
  const { memory, at, finish } = replay;
  const anchors = [fts5System(), fts5TrigramSystem()];
  const byId = new Map(turns.map((turn) => [turn.id, turn]));
  const shown = (id: string): ShownItem => ({
    provenance: [id],
    text: `${byId.get(id)!.speaker}: ${byId.get(id)!.text}`,
  });
  const outcomes: Outcome[] = [];
  let next = 0;
  for (const question of household.questions) {
    const asked = wallTime(question.asked_at);
    const said = [];
    for (; next < turns.length && turns[next]!.at <= asked; next++) {
      const turn = turns[next]!;
      await replay.say({ ...turn, time: turn.at }, SOURCE);
      said.push({ id: turn.id, text: `${turn.speaker}: ${turn.text}`, time: turn.at });
    }
    for (const anchor of anchors) anchor.index(said);
    await at(asked);
    const gold = new Set(question.gold);
    const items = await memory.recall(question.text, K);
    const [fts, trigram] = anchors.map((anchor) => anchor.search(question.text, K).map(shown));
    dump?.push({ id: question.id, question: question.text, kind: question.kind, gold: question.gold, items, fts });
    outcomes.push({
      split: household.split,
      kind: question.kind,
      homed: score(items, gold, BUDGET_CHARS),
      fts5: score(fts!, gold, BUDGET_CHARS),
      trigram: score(trigram!, gold, BUDGET_CHARS),
    });
  }
  await finish();
  for (const anchor of anchors) anchor.close?.();
  await memory.stop();
  await Deno.remove(dir, { recursive: true });
  return outcomes;
}

const args = parseArgs({
  args: Deno.args,
  options: { record: { type: "boolean" }, only: { type: "string" }, dump: { type: "string" } },
});
const dump: Array<Record<string, unknown>> | undefined = args.values.dump ? [] : undefined;
const set = JSON.parse(await Deno.readTextFile(new URL("./chinese_set.json", import.meta.url))) as ChineseSet;
const outcomes: Outcome[] = [];
for (const household of set.households) {
  // --only tune: while choosing, the test half is not even run.
  if (args.values.only && args.values.only !== household.split) continue;
  const started = performance.now();
  outcomes.push(...await evaluate(household, dump));
  console.error(
    `${household.name} (${household.split}): ${household.turns.length} turns, ${household.questions.length} questions, ${
      Math.round(performance.now() - started)
    } ms`,
  );
}
if (dump) await Deno.writeTextFile(args.values.dump!, dump.map((line) => JSON.stringify(line)).join("\n") + "\n");

const share = (list: Outcome[], pick: (outcome: Outcome) => boolean) =>
  list.length ? Math.round(list.filter(pick).length / list.length * 1000) / 1000 : 0;
const row = (list: Outcome[]) => {
  const figures = {
    questions: list.length,
    homed_r1: share(list, (o) => o.homed.strict_r1),
    fts5_r1: share(list, (o) => o.fts5.strict_r1),
    trigram_r1: share(list, (o) => o.trigram.strict_r1),
    homed_r10_budget: share(list, (o) => o.homed.strict_budget),
    fts5_r10_budget: share(list, (o) => o.fts5.strict_budget),
    trigram_r10_budget: share(list, (o) => o.trigram.strict_budget),
  };
  // The acceptance margin: homed's r@10 in the budget over the better anchor's.
  const margin = figures.homed_r10_budget - Math.max(figures.fts5_r10_budget, figures.trigram_r10_budget);
  return { ...figures, margin: Math.round(margin * 1000) / 1000 };
};
const rows: Record<string, ReturnType<typeof row>> = { all: row(outcomes) };
for (const split of ["tune", "test"] as const) {
  const part = outcomes.filter((o) => o.split === split);
  if (!part.length) continue;
  rows[split] = row(part);
  for (const kind of KINDS) rows[`${split}/${kind}`] = row(part.filter((o) => o.kind === kind));
}

const env = await environment();
await writeResults(new URL("./recall_chinese.json", import.meta.url), {
  ...env,
  set: "bench/memory/chinese_set.json (make_chinese_set.ts)",
  summary: set.summary,
  budget_chars: BUDGET_CHARS,
  scoring: "strict (strict_credit.ts): an item credits at most ceil(length / 40) of its turns; r@10 within k x 125",
  anchors: {
    fts5: "fts5System: porter unicode61 Latin column + CJK bigrams of homed's tokenizer",
    fts5_trigram: "FTS5 trigram tokenizer, query = OR of the question's 3-character pieces",
  },
  rows,
});
console.log(`Recall on the Chinese household set (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
