/**
 * Recall on an independent set of real multi-session conversation: LoCoMo (Maharana et al., ACL 2024, "Evaluating
 * Very Long-Term Conversational Memory of LLM Agents"; github.com/snap-research/locomo, `data/locomo10.zip`): ten
 * conversations between two people over months (≈ 19–32 sessions, 300–700 turns each) with ≈ 2,000 annotated
 * questions whose evidence names the turns that answer them (category 1 multi-hop, 2 temporal, 3 open-domain, 4
 * single-hop; category 5, adversarial questions with no answer, is left out). homed's generator wrote none of it.
 * The data has no licence file, so it is not in this repository: pass its path (the unzipped `locomo10_v2/` folder
 * of one JSON file per conversation, or `locomo10.json`, a list of them).
 *
 * Through the daemon's own path, per conversation, on a simulated clock at each session's time: every utterance is
 * a turn of `MemoryService` (the context window of 30 entries whose evictions become layer-2 documents, the
 * after-turn journal, the memory job — distiller by rules, synonyms, the cold rule — every 30 simulated minutes).
 * Then each question goes to `MemoryService.recall(question, 10)`: a hit when an item's provenance holds an evidence
 * turn. The anchor in the same run is SQLite FTS5 (BM25, porter) over the same turns, one row each. The headline is
 * the strict rule (`strict_credit.ts`): an item earns credit for at most ⌈its length / 40⌉ of its turns, in the
 * order it shows them — a long item cannot cover ten turns with the text of two — and recall@10 is read within a
 * text budget of k × 125 characters (items taken best first while their texts fit): `strict_r1` and
 * `strict_r10_budget`, FTS5 scored the same way; `strict_r1_125` reads only the best item's first 125 characters (an
 * item that gathers a conversation's turns is long). Beside them the looser figures (any turn of an item's
 * provenance): recall@1, recall@10, recall@10 within the budget; and `answer_shown`, the share of questions whose
 * answer's every word is in the text within the budget (credit counts turns, not the words shown of them). All on
 * the `tune` half (the first five conversations: choose
 * there) and the `test` half (the last five: report), by category, with a breakdown of the questions whose best item
 * is wrong while FTS5's is right: what outranked the right turn.
 *
 * Run: deno task eval:memory-locomo --data /path/to/locomo10_v2 (writes bench/out/memory/recall_locomo.json;
 * --record: bench/memory/recall_locomo.json; --only tune: that half alone; --dump file.jsonl: each question's items).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import type { RecallItem } from "../../src/memory/memory.ts";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { fts5System } from "../retrieval/systems.ts";
import { daemonMemory } from "./daemon_memory.ts";
import { MONTHS } from "../../src/memory/recall/named_period.ts";
import { environment, writeResults } from "../support/report.ts";
import { CHARS_PER_TURN, score, type Scored, withinBudget } from "./strict_credit.ts";

const K = 10;
const BUDGET_CHARS = K * 125;
const SOURCE = "qq:group:friends";

interface Turn {
  id: string;
  speaker: string;
  text: string;
  time: number;
}

interface Question {
  text: string;
  /** LoCoMo's answer, to see whether what recall shows holds its words. */
  answer: string;
  gold: string[];
  category: number;
}

interface Conversation {
  name: string;
  turns: Turn[];
  questions: Question[];
}

/** "1:56 pm on 8 May, 2023" as UTC milliseconds. */
export function sessionTime(text: string): number {
  const match = /^(\d{1,2}):(\d{2})\s*(am|pm) on (\d{1,2}) (\w+),? (\d{4})$/i.exec(text.trim());
  if (!match) throw new TypeError(`Session time ${JSON.stringify(text)} is not like "1:56 pm on 8 May, 2023"`);
  const [, hh, mm, half, day, month, year] = match;
  const monthIndex = MONTHS.indexOf(month!.toLowerCase());
  if (monthIndex < 0) throw new TypeError(`Session time ${JSON.stringify(text)} names no month`);
  const hour = (Number(hh) % 12) + (half!.toLowerCase() === "pm" ? 12 : 0);
  return Date.UTC(Number(year), monthIndex, Number(day), hour, Number(mm));
}

/** One LoCoMo conversation (the `conversation` object, or the whole sample of `locomo10.json`) as turns and questions. */
function readConversation(name: string, raw: Record<string, unknown>): Conversation {
  const conversation = (raw.conversation ?? raw) as Record<string, unknown>;
  const turns: Turn[] = [];
  for (let n = 1; conversation[`session_${n}`] !== undefined || conversation[`session_${n}_date_time`]; n++) {
    const session = conversation[`session_${n}`] as Array<Record<string, unknown>> | undefined;
    const when = conversation[`session_${n}_date_time`];
    if (!Array.isArray(session) || typeof when !== "string") continue;
    const start = sessionTime(when);
    session.forEach((utterance, index) => {
      const caption = typeof utterance.blip_caption === "string" ? ` [shares ${utterance.blip_caption}]` : "";
      turns.push({
        id: `${name}:${utterance.dia_id}`,
        speaker: String(utterance.speaker),
        text: `${String(utterance.text ?? "")}${caption}`,
        // A turn a minute apart within its session.
        time: start + index * 60_000,
      });
    });
  }
  const qa = (raw.qa ?? conversation.qa) as Array<Record<string, unknown>> | undefined;
  const questions = (qa ?? [])
    .filter((item) => Number(item.category) !== 5 && Array.isArray(item.evidence) && item.evidence.length > 0)
    .map((item) => ({
      text: String(item.question),
      answer: String(item.answer ?? ""),
      // Some evidence lists hold "D8:6; D9:17" in one string.
      gold: (item.evidence as unknown[]).flatMap((id) => String(id).split(/[;,\s]+/)).filter((id) => id !== "")
        .map((id) => `${name}:${id}`),
      category: Number(item.category),
    }));
  return { name, turns, questions };
}

async function loadConversations(path: string): Promise<Conversation[]> {
  const stat = await Deno.stat(path);
  if (stat.isFile) {
    const list = JSON.parse(await Deno.readTextFile(path)) as Array<Record<string, unknown>>;
    return list.map((sample, index) => readConversation(String(sample.sample_id ?? index), sample));
  }
  const names: string[] = [];
  for await (const entry of Deno.readDir(path)) {
    if (entry.isFile && entry.name.endsWith(".json")) names.push(entry.name);
  }
  names.sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  return await Promise.all(
    names.map(async (file) =>
      readConversation(file.replace(/\.json$/, ""), JSON.parse(await Deno.readTextFile(join(path, file))))
    ),
  );
}

interface Outcome {
  split: "tune" | "test";
  category: number;
  facade: Scored;
  fts5: Scored;
  /** Whether homed's items within the budget show every word of the answer (its words of three letters or more). */
  answerShown: boolean;
  /** homed's items within the budget: how many, and their characters. */
  shown: { items: number; chars: number };
  /** When the facade's best item is wrong and FTS5's is right: what it was. */
  outranked?: string;
}

/**
 * Whether `shown` holds every word of three letters or more of `answer` — credit counts turns, not what an item
 * shows of them: this says whether cutting lines short hid the words that answer.
 */
function answerShown(answer: string, shown: string): boolean {
  const words = new Set(shown.toLowerCase().split(/[^\p{L}\p{N}]+/u));
  return answer.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word.length >= 3).every((w) => words.has(w));
}

/** What kind of item outranked the right turn, for the breakdown. */
function describe(item: RecallItem | undefined, gold: Set<string>, turnsById: Map<string, Turn>): string {
  if (!item) return "nothing recalled";
  if (item.kind === "document" && item.provenance.length > 1) {
    return "document of several turns (none of them the right one)";
  }
  if (item.kind === "document") {
    const turn = turnsById.get(item.provenance[0] ?? "");
    const neighbour = [...gold].some((id) => {
      const g = turnsById.get(id);
      return g && turn && Math.abs(g.time - turn.time) <= 3 * 60_000 && g.time !== turn.time;
    });
    return neighbour ? "document: a neighbouring turn of the right one" : "document: another turn";
  }
  return item.kind === "fact" ? "fact" : "recent context";
}

async function evaluate(conversation: Conversation, split: "tune" | "test"): Promise<Outcome[]> {
  const turns = conversation.turns;
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-locomo-" });
  const clock = new FakeClock({ start: turns[0]!.time });
  const replay = await daemonMemory(dir, clock);
  const { memory, finish } = replay;
  for (const turn of turns) await replay.say(turn, SOURCE);
  await finish();

  const fts = fts5System();
  fts.index(turns.map((turn) => ({ id: turn.id, text: `${turn.speaker}: ${turn.text}`, time: turn.time })));
  const turnsById = new Map(turns.map((turn) => [turn.id, turn]));
  const outcomes: Outcome[] = [];
  for (const question of conversation.questions) {
    const gold = new Set(question.gold);
    const items = await memory.recall(question.text, K);
    const anchor = fts.search(question.text, K).map((id) => ({
      provenance: [id],
      text: `${turnsById.get(id)?.speaker}: ${turnsById.get(id)?.text ?? ""}`,
    }));
    const facade = score(items, gold, BUDGET_CHARS, BUDGET_CHARS / K);
    const fts5 = score(anchor, gold, BUDGET_CHARS, BUDGET_CHARS / K);
    const kept = withinBudget(items, BUDGET_CHARS);
    dump?.push({ question: question.text, gold: question.gold, split, category: question.category, items, anchor });
    outcomes.push({
      split,
      category: question.category,
      facade,
      fts5,
      shown: { items: kept.length, chars: kept.reduce((sum, item) => sum + item.text.length, 0) },
      answerShown: answerShown(question.answer, kept.map((item) => item.text).join("\n")),
      ...(!facade.r1 && fts5.r1 ? { outranked: describe(items[0], gold, turnsById) } : {}),
    });
  }
  fts.close?.();
  await memory.stop();
  await Deno.remove(dir, { recursive: true });
  return outcomes;
}

const args = parseArgs({
  args: Deno.args,
  options: {
    data: { type: "string" },
    record: { type: "boolean" },
    only: { type: "string" },
    dump: { type: "string" },
  },
});
/** With --dump: every question's items, for reading what recall showed (written to that path as JSON lines). */
const dump: Array<Record<string, unknown>> | undefined = args.values.dump ? [] : undefined;
if (args.values.only && args.values.record) {
  console.error("--only runs one half: it is for choosing, not for the recorded figures");
  Deno.exit(2);
}
if (!args.values.data) {
  console.error(
    "Pass the LoCoMo data: --data /path/to/locomo10_v2 (a folder of one JSON file per conversation) or locomo10.json",
  );
  Deno.exit(2);
}
const conversations = await loadConversations(args.values.data);
if (conversations.length < 2) throw new RangeError(`${args.values.data} holds ${conversations.length} conversations`);
const half = Math.ceil(conversations.length / 2);
const outcomes: Outcome[] = [];
for (const [index, conversation] of conversations.entries()) {
  const split = index < half ? "tune" : "test";
  // --only tune: while choosing, the test half is not even run.
  if (args.values.only && args.values.only !== split) continue;
  const started = performance.now();
  outcomes.push(...await evaluate(conversation, split));
  console.error(
    `${conversation.name}: ${conversation.turns.length} turns, ${conversation.questions.length} questions, ${
      Math.round(performance.now() - started)
    } ms`,
  );
}

const share = (list: Outcome[], pick: (outcome: Outcome) => boolean) =>
  list.length ? Math.round(list.filter(pick).length / list.length * 1000) / 1000 : 0;
const mean = (list: Outcome[], pick: (outcome: Outcome) => number) =>
  list.length ? Math.round(list.reduce((sum, o) => sum + pick(o), 0) / list.length * 10) / 10 : 0;
// The strict figures first: each item credits at most ⌈its length / 40⌉ of its turns (strict_credit.ts).
const row = (list: Outcome[]) => ({
  questions: list.length,
  strict_r1: share(list, (o) => o.facade.strict_r1),
  fts5_strict_r1: share(list, (o) => o.fts5.strict_r1),
  strict_r1_125: share(list, (o) => o.facade.strict_r1_short),
  fts5_strict_r1_125: share(list, (o) => o.fts5.strict_r1_short),
  strict_r10_budget: share(list, (o) => o.facade.strict_budget),
  fts5_strict_r10_budget: share(list, (o) => o.fts5.strict_budget),
  facade_r1: share(list, (o) => o.facade.r1),
  fts5_r1: share(list, (o) => o.fts5.r1),
  facade_r10: share(list, (o) => o.facade.r10),
  fts5_r10: share(list, (o) => o.fts5.r10),
  facade_r10_budget: share(list, (o) => o.facade.budget),
  fts5_r10_budget: share(list, (o) => o.fts5.budget),
  answer_shown: share(list, (o) => o.answerShown),
  items_in_budget: mean(list, (o) => o.shown.items),
  chars_in_budget: mean(list, (o) => o.shown.chars),
});
const rows: Record<string, ReturnType<typeof row>> = { all: row(outcomes) };
for (const split of ["tune", "test"] as const) {
  const part = outcomes.filter((o) => o.split === split);
  rows[split] = row(part);
  if (!part.length) continue;
  for (const category of [1, 2, 3, 4]) {
    rows[`${split}/category ${category}`] = row(part.filter((o) => o.category === category));
  }
}
const outranked: Record<string, number> = {};
for (const outcome of outcomes) {
  if (outcome.outranked) outranked[outcome.outranked] = (outranked[outcome.outranked] ?? 0) + 1;
}

if (dump) await Deno.writeTextFile(args.values.dump!, dump.map((line) => JSON.stringify(line)).join("\n") + "\n");
const env = await environment();
await writeResults(new URL("./recall_locomo.json", import.meta.url), {
  ...env,
  set: "LoCoMo (locomo10), categories 1-4",
  conversations: conversations.map((conversation) => conversation.name),
  tune: conversations.slice(0, half).map((conversation) => conversation.name),
  budget_chars: BUDGET_CHARS,
  chars_per_credited_turn: CHARS_PER_TURN,
  rows,
  outranked_when_fts5_right: outranked,
});
console.log(`Recall on LoCoMo through MemoryService (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.log(
  `Headline (strict: an item credits at most ⌈length / ${CHARS_PER_TURN}⌉ of its turns; r@10 within ${BUDGET_CHARS} chars):`,
);
console.table(Object.fromEntries(
  Object.entries(rows).filter(([name]) => !name.includes("/")).map(([name, row]) => [name, {
    questions: row.questions,
    "homed r@1": row.strict_r1,
    "FTS5 r@1": row.fts5_strict_r1,
    "homed r@1 in 125 chars": row.strict_r1_125,
    "FTS5 r@1 in 125 chars": row.fts5_strict_r1_125,
    "homed r@10 in budget": row.strict_r10_budget,
    "FTS5 r@10 in budget": row.fts5_strict_r10_budget,
  }]),
));
console.log("All figures (strict_*: the rule above; the rest credit any turn of an item):");
console.table(rows);
console.log("When the best item is wrong and FTS5's is right, what came first:");
console.table(outranked);
// The older sets beside it, as their own evals last recorded them (eval:memory-recall, bench:memory).
const recorded = async (file: string) => JSON.parse(await Deno.readTextFile(new URL(file, import.meta.url)));
const conversation = await recorded("./recall_conversation.json");
const replayed = await recorded("./replay.json");
console.log(
  `The older sets, as recorded (conversation set at ${String(conversation.commit).slice(0, 10)}, replay at ${
    String(replayed.commit).slice(0, 10)
  }):`,
);
console.table({
  "English conversation set (eval:memory-recall), all": {
    facade_r10: conversation.at_10?.all?.facade_r10,
    fts5_r10: conversation.at_10?.all?.fts5_r10,
  },
  ...Object.fromEntries(
    Object.entries(replayed.rows ?? {}).map(([name, row]) => [
      `${name} (bench:memory)`,
      { facade_r10: (row as { layered_r10?: number }).layered_r10, flat_r10: (row as { flat_r10?: number }).flat_r10 },
    ]),
  ),
});
