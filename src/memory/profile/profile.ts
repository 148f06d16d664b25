/**
 * A profile per person (issue 39.2): the facts memory holds about one member of the household, grouped by kind —
 * health (allergies, medicines), dates (birthdays, exams, appointments), preferences, relations, other — each with
 * its provenance (the messages it was learnt from: when, who said it, what they said) and, for a fact a newer
 * statement or a correction closed, what superseded it. Built from the console's fact views (`fact_views.ts`), so a
 * profile shows only what its reader may read (`identity/visibility.ts`): the same rule as every other read path.
 *
 * Who the household's members are is told from the configuration (the owner, people with a household or owner
 * token) and from who has spoken (senders of facts, not a guest's): see {@link householdMembers}.
 *
 * @module
 */

import type { Trust } from "../../identity/trust.ts";
import type { Fact } from "../graph/fact.ts";
import type { FactView } from "../fact_views.ts";

/** What a fact in a profile is about; the page and the prompt show the kinds in this order. */
export type ProfileKind = "health" | "dates" | "preferences" | "relations" | "other";

/** Every kind, in the order a profile shows them. */
export const PROFILE_KINDS: readonly ProfileKind[] = ["health", "dates", "preferences", "relations", "other"];

/** What closed a fact: the newer statement or correction that holds since (or only when, if its reader may not). */
export interface Supersession {
  /** ISO 8601: when the fact was closed. */
  at: string;
  /** The fact that superseded it (absent when the reader may not read that one). */
  id?: number;
  object?: string;
  said_by?: string;
  /** Set when the newer value is a correction by hand. */
  corrected_by?: string;
}

/** A fact as a profile shows it: the console's view, its kind, and what superseded it when it no longer holds. */
export interface ProfileFact extends FactView {
  kind: ProfileKind;
  superseded_by?: Supersession;
}

/** A person's profile: their facts by kind, holding ones first in each, then superseded ones. */
export interface Profile {
  person: string;
  /** Facts that hold now, all kinds together. */
  holding: number;
  kinds: Record<ProfileKind, ProfileFact[]>;
}

/** A member of the household: a sender name (a token's name, a QQ number) and where homed knows them from. */
export interface Member {
  id: string;
  trust: Trust;
  /** `config`: a token or the owner; `spoken`: they told memory something. */
  known_from: Array<"config" | "spoken">;
}

// Matched on the predicate (what is said), which tells the kind better than the value: "likes" → "cats" is a
// preference, not a relation. Dates' words come first: a "dentist appointment" is a date, not health.
const DATE_WORDS =
  /birthday|birth date|born|exam|test date|appointment|anniversary|deadline|due|interview|wedding|graduat|flight|trip|生日|出生|考试|预约|复诊|纪念日|截止|面试|婚礼|毕业|航班|出行|日期/i;
const HEALTH_WORDS =
  /allerg|intoleran|medic|medicine|drug|pill|dose|diabet|asthma|blood|illness|disease|condition|diet|vaccin|symptom|injur|pregnan|health|过敏|药|病|哮喘|糖尿|血压|血糖|忌口|疫苗|症状|受伤|怀孕|健康|体检/i;
const RELATION_WORDS =
  /father|mother|parent|child|\bson\b|daughter|spouse|husband|wife|partner|sibling|brother|sister|friend|\bpet\b|married|grand|uncle|aunt|cousin|relative|classmate|colleague|teacher|爸|妈|父|母|儿子|女儿|丈夫|妻子|老公|老婆|爱人|哥|姐|弟|妹|朋友|宠物|爷爷|奶奶|外公|外婆|同学|同事|老师|亲戚/i;
const PREFERENCE_WORDS =
  /like|love|enjoy|prefer|favou?rite|dislike|hate|fan of|\bwants?\b|taste|喜欢|爱|讨厌|不吃|偏好|最爱|口味|想要/i;
// A value that reads as a day: 2026-03-04, 3月4日, March 4, 4 March.
const DATE_VALUE =
  /\d{4}-\d{1,2}-\d{1,2}|\d{1,2}月\d{1,2}[日号]|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}\b|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/i;
const HEALTH_VALUE = /allerg|\d+\s?mg\b|medicine|inhaler|insulin|过敏|药|胰岛素/i;

/**
 * The kind of a fact with `predicate` and `object`; `people` are the names of known people (lower case), whose
 * appearance as the value makes a fact a relation ("alice" → "sister of" → "bob").
 *
 * @example
 * ```ts
 * kindOf("allergic to", "peanuts"); // "health"
 * kindOf("生日", "3月4日"); // "dates"
 * kindOf("likes", "cats"); // "preferences"
 * kindOf("is married to", "owner"); // "relations"
 * kindOf("works at", "the hospital"); // "other"
 * ```
 */
export function kindOf(predicate: string, object: string, people: ReadonlySet<string> = new Set()): ProfileKind {
  if (DATE_WORDS.test(predicate)) return "dates";
  if (HEALTH_WORDS.test(predicate)) return "health";
  if (RELATION_WORDS.test(predicate) || people.has(object.trim().toLowerCase())) return "relations";
  if (PREFERENCE_WORDS.test(predicate)) return "preferences";
  if (HEALTH_VALUE.test(object)) return "health";
  if (DATE_VALUE.test(object)) return "dates";
  return "other";
}

/**
 * What superseded the closed fact `closed` among `facts` (the same subject's): a fact of the same subject and
 * predicate that began when it was closed — the newer statement, or the correction. Only `at` when the reader's
 * facts hold no such fact (it is one they may not read).
 */
function supersession(closed: FactView, facts: readonly FactView[]): Supersession {
  const newer =
    facts.filter((fact) =>
      fact.id !== closed.id && fact.subject === closed.subject && fact.predicate === closed.predicate &&
      fact.valid_from === closed.valid_to
    ).sort((a, b) => b.id - a.id)[0];
  if (!newer) return { at: closed.valid_to ?? "" };
  return {
    at: closed.valid_to ?? newer.valid_from,
    id: newer.id,
    object: newer.object,
    said_by: newer.said_by,
    ...(newer.corrected_by !== undefined ? { corrected_by: newer.corrected_by } : {}),
  };
}

/**
 * `person`'s profile from the fact views of their entity (`MemoryService.inspectGraph`, already only what the reader
 * may read): grouped by kind, holding facts first (newest first), then superseded ones, each marked with what
 * superseded it; `naming` (other entities' facts whose value is the person: "bob" "brother of" "alice") join the
 * relations after the person's own. `holding` counts the person's own facts that hold.
 *
 * @example
 * ```ts
 * import type { FactView } from "../fact_views.ts";
 *
 * declare const facts: FactView[]; // await memory.inspectGraph("alice", viewer)
 * const profile = buildProfile("alice", facts, new Set(["alice", "bob"]));
 * profile.kinds.health; // [{ predicate: "allergic to", object: "peanuts", kind: "health", sources: [{ … }] }]
 * ```
 */
export function buildProfile(
  person: string,
  facts: readonly FactView[],
  people: ReadonlySet<string>,
  naming: readonly FactView[] = [],
): Profile {
  const kinds = Object.fromEntries(PROFILE_KINDS.map((kind) => [kind, [] as ProfileFact[]])) as Record<
    ProfileKind,
    ProfileFact[]
  >;
  const ordered = [...facts].sort((a, b) =>
    Number(!a.holds) - Number(!b.holds) || b.valid_from.localeCompare(a.valid_from) || b.id - a.id
  );
  for (const fact of ordered) {
    const kind = kindOf(fact.predicate, fact.object, people);
    kinds[kind].push({ ...fact, kind, ...(fact.holds ? {} : { superseded_by: supersession(fact, facts) }) });
  }
  // Others' facts naming them ("bob" "brother of" them) are relations, after their own, in the same order.
  const others = [...naming].sort((a, b) =>
    Number(!a.holds) - Number(!b.holds) || b.valid_from.localeCompare(a.valid_from) || b.id - a.id
  );
  for (const fact of others) {
    kinds.relations.push({
      ...fact,
      kind: "relations",
      ...(fact.holds ? {} : { superseded_by: supersession(fact, naming) }),
    });
  }
  return { person, holding: facts.filter((fact) => fact.holds).length, kinds };
}

/** Characters of one person's line in the prompt's profile section, at most. */
export const PROMPT_LINE_MAX = 300;

/** The kinds in the prompt's order of importance: health first, then dates ahead, then preferences. */
const PROMPT_ORDER: readonly ProfileKind[] = ["health", "dates", "preferences", "relations", "other"];

/** A whole day in a value: 2026-03-04 (zero-padded, so days sort as text). */
const ISO_DAY = /\d{4}-\d{2}-\d{2}/;

/** True when `object` names a whole day (2026-03-04) that is before `now`'s day: a date no longer ahead. */
function pastDay(object: string, now: number): boolean {
  const day = /(\d{4})-(\d{1,2})-(\d{1,2})/.exec(object);
  if (!day) return false;
  const time = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]) + 1);
  return Number.isFinite(time) && time <= now;
}

/**
 * One person's compact line for the prompt: the facts that hold, not a guest's (a guest's claim about a member is
 * not told to the model as the household's knowledge), most important first — health, then dates still ahead, then
 * preferences, relations, the rest — whole facts only, at most {@link PROMPT_LINE_MAX} characters. `undefined` when
 * nothing is left to say.
 *
 * @example
 * ```ts
 * import type { Fact } from "../graph/fact.ts";
 *
 * declare const facts: Fact[]; // await memory.factsAbout("alice", viewer)
 * compactLine("alice", facts, Date.now());
 * // "alice — allergic to: peanuts; birthday: 2027-03-04; likes: strawberries"
 * ```
 */
export function compactLine(
  person: string,
  facts: readonly Fact[],
  now: number,
  people: ReadonlySet<string> = new Set(),
): string | undefined {
  // Newest first within each kind, whichever order the caller's read gave.
  const holding = facts.filter((fact) => fact.validTo === null && fact.trust !== "guest")
    .sort((a, b) => b.validFrom - a.validFrom || b.id - a.id);
  const parts: string[] = [];
  for (const kind of PROMPT_ORDER) {
    let ofKind = holding.filter((fact) => kindOf(fact.predicate, fact.object, people) === kind);
    if (kind === "dates") {
      // Dates ahead, the soonest first (those naming a whole day), then the others (a birthday's "June 2").
      ofKind = ofKind.filter((fact) => !pastDay(fact.object, now))
        .map((fact, i) => ({ fact, i, day: ISO_DAY.exec(fact.object)?.[0] ?? "\uffff" }))
        .sort((a, b) => a.day.localeCompare(b.day) || a.i - b.i).map(({ fact }) => fact);
    }
    for (const fact of ofKind) parts.push(`${fact.predicate}: ${fact.object}`);
  }
  if (!parts.length) return undefined;
  let line = `${person} —`;
  for (const [i, part] of parts.entries()) {
    const next = `${line}${i === 0 ? " " : "; "}${part}`;
    if ([...next].length > PROMPT_LINE_MAX) break;
    line = next;
  }
  return line.endsWith("—") ? undefined : line;
}

/**
 * The household's members, each once: those the configuration names (`configured`: the owner and people with a
 * household or owner token) and those who have spoken (`speakers`: senders of facts not a guest's), configured ones
 * first, then by name. A guest is no member: a guest token's person is left out even if listed.
 *
 * @example
 * ```ts
 * householdMembers(
 *   [{ id: "owner", trust: "owner" }, { id: "alice", trust: "household" }],
 *   [{ name: "alice", trust: "household" }, { name: "10001000", trust: "household" }],
 * );
 * // [{ id: "owner", trust: "owner", known_from: ["config"] },
 * //  { id: "alice", trust: "household", known_from: ["config", "spoken"] },
 * //  { id: "10001000", trust: "household", known_from: ["spoken"] }]
 * ```
 */
export function householdMembers(
  configured: ReadonlyArray<{ id: string; trust: Trust }>,
  speakers: ReadonlyArray<{ name: string; trust: Trust }>,
): Member[] {
  const members = new Map<string, Member>();
  for (const person of configured) {
    if (person.trust === "guest" || members.has(person.id)) continue;
    members.set(person.id, { id: person.id, trust: person.trust, known_from: ["config"] });
  }
  const spoken = [...speakers].filter((speaker) => speaker.trust !== "guest")
    .sort((a, b) => a.name.localeCompare(b.name));
  for (const speaker of spoken) {
    const known = members.get(speaker.name);
    if (known) known.known_from.push("spoken");
    else members.set(speaker.name, { id: speaker.name, trust: speaker.trust, known_from: ["spoken"] });
  }
  return [...members.values()];
}
