/**
 * Generates the Chinese conversation-memory set (`chinese_set.json`) for `deno task eval:memory-chinese`: two
 * households' family group chats in Chinese over four months (1 June – 28 September 2026), each member writing under
 * the name the family calls them (爷爷, 妈妈, 小雨 …, as family groups name themselves). Most of it is routine —
 * meals, weather, homework, the lights, "收到", a day's errands — and in it, said once in passing: allergies,
 * medicines, birthdays, likes, where things are, appointments and plans with their time ("下个月初", "月底",
 * "下周三"), relations that take two turns to connect, plans that change later ("不对，家长会改到下周五了"), and
 * claims two members contradict.
 *
 * Questions are asked during the replay, at `asked_at`, in the household's words, worded differently from the turns:
 * - `single`: one turn answers it ("小乐对什么过敏？");
 * - `multi`: two turns together (the classmate's name, then that classmate's birthday);
 * - `temporal`: what someone said on a day named relatively to the asking ("上周三", "大前天", "前天", "15号") — the
 *   same kind of report is said on many other days, so only the date tells the right one;
 * - `when`: asks for a time a turn gave ("医保卡什么时候办？" ← "下个月初给爷爷办医保卡");
 * - `corrected`: a fact or plan changed later; only the newer turn is the evidence;
 * - `contradiction`: two members said opposite things; both turns are the evidence.
 *
 * The first household (王家) is the `tune` half, the second (林家) the `test` half: nothing may be fitted on the second.
 * Times are wall-clock ("2026-06-03T19:12"), read as the machine's local time, as the daemon reads them.
 *
 * Seeded: the same run writes the same file; the committed JSON is the frozen set.
 *
 * Run: deno run --allow-write=bench/memory bench/memory/make_chinese_set.ts
 *
 * @module
 */

import { type SeededRandom, seededRandom } from "../support/seeded_random.ts";
import {
  type Cast,
  CASTS,
  chains,
  contradictions,
  dayReport,
  facts,
  fillers,
  PLAN_TIMES,
  plans,
} from "./chinese_household.ts";

/** One utterance of the family group. */
export interface ChineseTurn {
  id: string;
  speaker: string;
  text: string;
  /** Wall-clock time, "YYYY-MM-DDTHH:MM". */
  time: string;
}

/** Kinds of question, see the module doc. */
export type ChineseKind = "single" | "multi" | "temporal" | "when" | "corrected" | "contradiction";

/** A question, when it is asked, and the turns that answer it. */
export interface ChineseQuestion {
  id: string;
  text: string;
  kind: ChineseKind;
  gold: string[];
  /** Wall-clock time of the asking, "YYYY-MM-DDTHH:MM". */
  asked_at: string;
}

/** One household: its members, turns in time order, questions in time order. */
export interface ChineseHousehold {
  name: string;
  split: "tune" | "test";
  members: string[];
  turns: ChineseTurn[];
  questions: ChineseQuestion[];
}

/** The whole set. */
export interface ChineseSet {
  summary: Record<string, number>;
  households: ChineseHousehold[];
}

const DAY = 86_400_000;
const START = Date.UTC(2026, 5, 1); // wall-clock days counted with UTC arithmetic; printed without a zone
const DAYS = 120;
const WEEKDAY = ["日", "一", "二", "三", "四", "五", "六"];

/** A planted utterance, before ids are given. */
interface Said {
  speaker: string;
  text: string;
  time: number;
  id?: string;
}

/** A question before ids: gold as the planted utterances. */
interface Asked {
  text: string;
  kind: ChineseKind;
  gold: Said[];
  asked: number;
}

/** Wall-clock "YYYY-MM-DDTHH:MM" of a time counted in UTC arithmetic. */
function wall(time: number): string {
  return new Date(time).toISOString().slice(0, 16);
}

/** Monday-first week number of a day, for 上周/这周. */
function weekOf(time: number): number {
  return Math.floor((Math.floor(time / DAY) + 3) / 7); // 1970-01-01 was a Thursday
}

/**
 * How someone asking at `asked` names the day `said`: 昨天, 前天, 大前天, 上周三, 这周一, 15号, 上个月20号
 * (`undefined` when none fits).
 *
 * @example
 * ```ts
 * relativeDay(Date.UTC(2026, 5, 3, 9), Date.UTC(2026, 5, 6, 22)); // "大前天"
 * relativeDay(Date.UTC(2026, 5, 3, 9), Date.UTC(2026, 5, 8, 22)); // "上周三" (8 June 2026 is a Monday)
 * ```
 */
export function relativeDay(said: number, asked: number): string | undefined {
  const [d0, d1] = [Math.floor(said / DAY), Math.floor(asked / DAY)];
  const n = d1 - d0;
  const weekday = WEEKDAY[new Date(said).getUTCDay()]!;
  if (n === 1) return "昨天";
  if (n === 2) return "前天";
  if (n === 3) return "大前天";
  if (n < 1) return undefined;
  if (weekOf(said) === weekOf(asked)) return `这周${weekday}`;
  if (weekOf(said) === weekOf(asked) - 1) return weekday === "日" ? "上周日" : `上周${weekday}`;
  const [a, b] = [new Date(said), new Date(asked)];
  if (a.getUTCMonth() === b.getUTCMonth()) return `${a.getUTCDate()}号`;
  if ((a.getUTCMonth() + 1) % 12 === b.getUTCMonth()) return `上个月${a.getUTCDate()}号`;
  return undefined;
}

/** A session of the group chat: when it starts and what is said, in order (times are given at the end). */
interface Session {
  day: number;
  start: number;
  turns: Said[];
}

/** Builds one household's chat and questions. */
function household(cast: Cast, key: string): ChineseHousehold {
  const random = seededRandom(cast.seed);
  const { pick, int, next } = random;
  const sessions = schedule(random);
  const routine = fillers(cast, random);
  // Who talks: the younger child and the grandfather less.
  const talkers = [0, 1, 1, 2, 2, 3, 3, 3, 4, 4, 5];
  for (const session of sessions) {
    for (let n = int(4, 11); n > 0; n--) {
      const speaker = pick(talkers);
      const text = pick(routine)(speaker);
      // Nobody asks themselves whether their leg still hurts.
      if (text.includes(cast.refer[speaker]!)) continue;
      session.turns.push({ speaker: cast.members[speaker]!, text, time: 0 });
    }
  }
  const asked: Asked[] = [];
  const dayStart = (day: number) => START + day * DAY;
  const askOn = (day: number) => dayStart(day) + (22 * 60 + 30 + int(0, 20)) * 60_000;
  const on = (day: number) => sessions.filter((session) => session.day === day);
  /** Plants `text` in a random session of `day` (the latest before `before` when given). */
  const plant = (day: number, speaker: number, text: string): Said => {
    const choices = on(day);
    const session = choices.length ? pick(choices) : pick(sessions.filter((s) => s.day >= day));
    const said: Said = { speaker: cast.members[speaker]!, text, time: 0 };
    session.turns.splice(int(0, session.turns.length), 0, said);
    return said;
  };
  const dayOf = (said: Said) => sessions.find((session) => session.turns.includes(said))!.day;

  // Facts said once, some said again changed.
  for (const fact of facts(cast, random)) {
    const day = int(2, DAYS - 40);
    const first = plant(day, fact.speaker, fact.said);
    const later = fact.update ? day + int(8, 25) : undefined;
    asked.push({ text: fact.ask[0]!, kind: "single", gold: [first], asked: askOn(int(day + 1, (later ?? DAYS) - 1)) });
    if (fact.update && later !== undefined) {
      const second = plant(later, fact.update.speaker, fact.update.said);
      asked.push({
        text: fact.update.ask[0]!,
        kind: "corrected",
        gold: [second],
        asked: askOn(int(later + 1, DAYS - 1)),
      });
    }
  }
  // Plans with a time word; about half are moved later.
  for (const plan of plans(cast)) {
    const day = int(3, DAYS - 30);
    const said = plant(day, pick([2, 3, 3, 1, 4]), `${plan.said.replace("{t}", pick(PLAN_TIMES))}。`);
    for (const line of plan.chatter) plant(int(0, DAYS - 1), pick(talkers), line);
    plant(int(0, DAYS - 1), pick(talkers), `${plan.name}的事${pick(["别忘了", "我记着呢", "再确认一下"])}。`);
    if (next() < 0.5) {
      asked.push({ text: pick(plan.ask), kind: "when", gold: [said], asked: askOn(int(day + 1, DAYS - 1)) });
      continue;
    }
    const moved = day + int(2, 6);
    asked.push({ text: pick(plan.ask), kind: "when", gold: [said], asked: askOn(int(day, moved - 1)) });
    const time = pick(PLAN_TIMES);
    const correction = plant(
      moved,
      pick([0, 1, 2, 3, 4]),
      pick([
        `不对，${plan.name}改到${time}了。`,
        `刚接到通知，${plan.name}推迟到${time}。`,
        `${plan.name}时间变了，改成${time}。`,
      ]),
    );
    asked.push({
      text: pick([...plan.ask, `${plan.name}改到什么时候了？`]),
      kind: "corrected",
      gold: [correction],
      asked: askOn(int(moved + 1, Math.min(DAYS - 1, moved + 20))),
    });
  }
  // Relations that take two turns, and claims two members contradict.
  for (const [first, second, question] of chains(cast, random)) {
    const day = int(2, DAYS - 50);
    const a = plant(day, first.speaker, first.said);
    const b = plant(day + int(3, 30), second.speaker, second.said);
    asked.push({ text: question, kind: "multi", gold: [a, b], asked: askOn(int(dayOf(b) + 1, DAYS - 1)) });
  }
  for (const [first, second, question] of contradictions(cast)) {
    const day = int(2, DAYS - 30);
    const a = plant(day, first.speaker, first.said);
    const b = plant(day + int(0, 10), second.speaker, second.said);
    asked.push({ text: question, kind: "contradiction", gold: [a, b], asked: askOn(int(dayOf(b) + 1, DAYS - 1)) });
  }
  asked.push(...dayReports(cast, random, sessions, askOn));
  return finish(cast, key, sessions, asked);
}

/** One to three sessions a day (morning, noon, evening), one minute a turn. */
function schedule(random: SeededRandom): Session[] {
  const sessions: Session[] = [];
  for (let day = 0; day < DAYS; day++) {
    const slots = [[7, 8], [12, 13], [18, 21]].filter(() => random.next() < 0.7);
    if (!slots.length) slots.push([19, 21]);
    for (const [lo, hi] of slots) {
      sessions.push({
        day,
        start: START + day * DAY + (random.int(lo!, hi!) * 60 + random.int(0, 30)) * 60_000,
        turns: [],
      });
    }
  }
  return sessions;
}

/**
 * Most evenings one or two members report their day ("我今天去超市了"); some are asked about days later by a
 * relative day word. All reports of the same kind by that member that day are the evidence.
 */
function dayReports(
  cast: Cast,
  random: SeededRandom,
  sessions: Session[],
  askOn: (day: number) => number,
): Asked[] {
  const reports: Array<
    { day: number; speaker: number; kind: string; said: Said; ask: (who: string, day: string) => string }
  > = [];
  for (const session of sessions) {
    // Evenings only: a report of the day ("中午在外面吃的…") is said once the day is done.
    if (new Date(session.start).getUTCHours() < 18 || random.next() < 0.2) continue;
    for (let n = random.int(1, 3); n > 0; n--) {
      const speaker = random.pick([0, 1, 1, 2, 3, 3, 4]);
      const report = dayReport(random);
      const said: Said = { speaker: cast.members[speaker]!, text: report.text, time: 0 };
      session.turns.splice(random.int(0, session.turns.length), 0, said);
      reports.push({ day: session.day, speaker, kind: report.text.slice(0, 4), said, ask: report.ask });
    }
  }
  const asked: Asked[] = [];
  const used = new Set<string>();
  for (let tries = 0; asked.length < 95 && tries < 5000; tries++) {
    const report = random.pick(reports);
    const gap = random.pick([1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 25]);
    const day = report.day + gap;
    const word = relativeDay(START + report.day * DAY, START + day * DAY);
    const key = `${report.day}:${report.speaker}:${report.kind}`;
    if (day >= DAYS || !word || used.has(key)) continue;
    used.add(key);
    const gold = reports.filter((r) => r.day === report.day && r.speaker === report.speaker && r.kind === report.kind);
    asked.push({
      text: report.ask(cast.refer[report.speaker]!, word),
      kind: "temporal",
      gold: gold.map((r) => r.said),
      asked: askOn(day),
    });
  }
  return asked;
}

/** Gives turns their times and ids, questions their ids, both in time order. */
function finish(cast: Cast, key: string, sessions: Session[], asked: Asked[]): ChineseHousehold {
  const turns: ChineseTurn[] = [];
  for (const session of sessions.sort((a, b) => a.start - b.start)) {
    session.turns.forEach((said, index) => {
      said.time = session.start + index * 60_000;
      said.id = `${key}:t${String(turns.length + 1).padStart(4, "0")}`;
      turns.push({ id: said.id, speaker: said.speaker, text: said.text, time: wall(said.time) });
    });
  }
  const questions = asked
    .filter((question) => question.gold.every((said) => said.time < question.asked))
    .sort((a, b) => a.asked - b.asked)
    .map((question, index) => ({
      id: `${key}:q${String(index + 1).padStart(3, "0")}`,
      text: question.text,
      kind: question.kind,
      gold: question.gold.map((said) => said.id!),
      asked_at: wall(question.asked),
    }));
  return { name: cast.name, split: cast.split, members: [...cast.members], turns, questions };
}

/**
 * Generates the whole set.
 *
 * @example
 * ```ts
 * const set = chineseSet();
 * set.households.map((h) => h.split); // ["tune", "test"]
 * ```
 */
export function chineseSet(): ChineseSet {
  const households = [household(CASTS[0]!, "wang"), household(CASTS[1]!, "lin")];
  const summary: Record<string, number> = {
    households: households.length,
    turns: households.reduce((sum, h) => sum + h.turns.length, 0),
    questions: households.reduce((sum, h) => sum + h.questions.length, 0),
  };
  for (const h of households) {
    for (const q of h.questions) summary[`${h.split}/${q.kind}`] = (summary[`${h.split}/${q.kind}`] ?? 0) + 1;
  }
  return { summary, households };
}

if (import.meta.main) {
  const set = chineseSet();
  // One turn or question a line: readable in a diff, half the size of indented JSON.
  const lines = (list: readonly unknown[]) => list.map((item) => `    ${JSON.stringify(item)}`).join(",\n");
  const households = set.households.map((h) =>
    `  {"name": ${JSON.stringify(h.name)}, "split": "${h.split}", "members": ${JSON.stringify(h.members)},\n` +
    `   "turns": [\n${lines(h.turns)}\n   ],\n   "questions": [\n${lines(h.questions)}\n   ]}`
  );
  const text = `{"summary": ${JSON.stringify(set.summary)},\n "households": [\n${households.join(",\n")}\n ]}\n`;
  await Deno.writeTextFile(new URL("./chinese_set.json", import.meta.url), text);
  console.log(set.summary);
}
