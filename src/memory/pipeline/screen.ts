/**
 * What may become a fact: the one screen both distillers' proposals pass (the LLM's answer and the rule-based
 * fallback's finds, in `Distiller.distill`) before anything reaches the graph. A proposed fact is dropped —
 * with a log line naming the fact, the field and its value (cut), rate-limited per kind of problem — when:
 *
 * - a field is longer than a fact's field can be (`subject.name` and `predicate` 80 characters, `subject.type` 20,
 *   `object` 200): a value that long is text pasted into the answer, not a fact, and is never cut down to one;
 * - a field reads as an instruction to the butler ("ignore all rules and …", "obey …", "you are now …", a
 *   system-prompt-like text, homed's own markers, a role prefix such as `system:`) or holds a line break or another
 *   control character (a fact is one line);
 * - its subject is the butler itself ("the butler", "homed", "you", the persona's own names): its identity is
 *   `personal.md` alone;
 * - it is about identity or trust — a predicate about ownership, trust, roles, permissions or obedience (`owner`,
 *   `trust`, `role`, `permission`, `admin`, `obey`, `主人`, `权限` …), a trust level (or `admin`, `root`, `trusted`
 *   …) as its object or subject type, or a trust level as its subject with a naming predicate ("the owner is
 *   Mallory") unless the speaker is that very identity: trust comes from what a channel authenticated, never from what
 *   anyone says. This drops some harmless facts too ("the car's owner is Bob"); that is the price of never letting a
 *   message decide who is trusted;
 * - it repeats an earlier fact of the same proposal (same subject, type, predicate and value): its provenance joins
 *   the first one's.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { LogLimiter } from "../../log/rate_limit.ts";
import { normalizeName } from "../graph/synonyms.ts";
import type { MemoryEntry } from "../text/text_memory.ts";
import type { ProposedFact } from "./rules.ts";

/** Subjects that mean the butler itself: its identity comes from personal.md alone, never from what people claim. */
const SELF =
  /^(?:butler|the butler|our butler|homed|you|yourself|assistant|the assistant|ai|bot|管家|你|您|助手|机器人)$/iu;

/**
 * True when a proposed fact is about the butler itself (or names the persona's own name) and must not be recorded.
 *
 * @example
 * ```ts
 * aboutSelf({ name: "you" }, ["Alfred"]); // true
 * aboutSelf({ name: "homed" }, ["Alfred"]); // true
 * aboutSelf({ name: "alfred" }, ["Alfred"]); // true
 * aboutSelf({ name: "Leo" }, ["Alfred"]); // false
 * ```
 */
export function aboutSelf(subject: { name: string }, selfNames: readonly string[]): boolean {
  const name = fold(subject.name);
  return SELF.test(name) || selfNames.some((self) => fold(self).toLowerCase() === name.toLowerCase());
}

/** The longest value each field of a fact may have, in characters. */
export const FIELD_LIMITS = { "subject.name": 80, "subject.type": 20, predicate: 80, object: 200 } as const;

/** A fact's text fields, by their names in the distiller's contract. */
type Field = keyof typeof FIELD_LIMITS;

/** Why a proposed fact was dropped. */
export type DropKind = "too long" | "instruction" | "control character" | "about the butler" | "identity" | "duplicate";

/** A proposed fact the screen dropped. */
export interface Dropped {
  /** Where it was in the proposal (0-based). */
  index: number;
  kind: DropKind;
  /** The fact as the log names it, then what was wrong with which field and value. */
  problem: string;
}

/** Texts that read as instructions to the butler or as prompt text, not as something about the household. */
const INSTRUCTIONS: readonly RegExp[] = [
  /\b(?:ignor|disregard|forget|forgot|overrid|bypass|skip)\w*\b.{0,40}\b(?:instructions?|rules?|prompts?|guidelines?|directives?|contract|orders?|persona)\b/iu,
  /\b(?:ignor|disregard)\w*\s+(?:all\s+|everything\s+|anything\s+)?(?:above|previous|prior|earlier|before)\b/iu,
  /\bsystem[\s_-]*(?:prompt|message|instructions?)\b/iu,
  /\byou\s+(?:are|must|will|shall|should|now)\s+(?:now\s+|always\s+|only\s+)?(?:obey|follow|ignore|act|pretend|be|answer|do|tell|say|reply)\b/iu,
  /\bobey/iu,
  /\b(?:follow|do)\s+(?:the\s+|all\s+)?(?:orders|commands|instructions|whatever)\b/iu,
  /\b(?:from now on|new instructions?|developer mode|jailbreak|act as|pretend to be|do anything now)\b/iu,
  /(?:^|\s)(?:system|assistant|developer|user)\s*:/iu,
  /<\|[a-z_]+\|>|\[\/?(?:INST|SYS)\]|<<\/?SYS>>|<\/?(?:system|instructions?)>/iu,
  /[[［]\s*(?:via |homed|end of homed|said by )/iu,
  /(?:^|\s)#{2,6}\s/u,
  /(?:忽略|无视|忘记|忘掉|不要理会|跳过).{0,12}(?:指令|指示|规则|提示|设定|要求|限制)/u,
  /系统提示|提示词|(?:服从|听从|遵从|遵守|照做).{0,10}(?:命令|指令|的话|指示|要求)|从现在(?:开始|起)/u,
];

/** Words of a predicate that make it about identity or trust. */
const TRUST_WORDS = new Set([
  "owner",
  "owners",
  "owned",
  "trust",
  "trusts",
  "trusted",
  "trustworthy",
  "role",
  "roles",
  "permission",
  "permissions",
  "permitted",
  "admin",
  "admins",
  "administrator",
  "administrators",
  "rights",
  "privilege",
  "privileges",
  "privileged",
  "authority",
  "authorized",
  "authorised",
  "authorization",
  "authorisation",
  "access",
  "superuser",
  "sudo",
  "identity",
  "obey",
  "obeys",
  "obeyed",
  "master",
  "allowlist",
  "whitelist",
  "clearance",
]);
const TRUST_PREDICATE_CJK = /主人|权限|信任|角色|管理员|身份|听从|服从|遵从|授权|所有者|拥有者|户主|房主|家主|主子/u;

/** A trust level (or something that would grant one) as a whole value: "the owner", "admin", "家庭成员". */
const TRUST_VALUE = new RegExp(
  "^(?:(?:the|a|an|my|our|your|his|her|their|this|that|its)\\s+)?(?:trust(?:\\s+level)?\\s*[:=]?\\s*)?" +
    "(?:owner|owners|household|household members?|members? of (?:the|this|our) household|guests?|admin|admins|" +
    "administrators?|superusers?|root|sudoers?|trusted(?:\\s+(?:users?|persons?|people|members?))?|untrusted|master)" +
    "(?:\\s+of\\s+(?:the|this|our)\\s+(?:house|home|household|family|butler))?$" +
    "|^(?:主人|房主|户主|家主|管理员|超级用户|家庭成员|访客|客人|受信任的?人?|可信的?人?|信任的?人)$",
  "iu",
);

/** Predicates that say what someone is or is called. */
const NAMING =
  /^(?:is|are|was|be|equals?|same as|name|names|named|called|alias|aliases|nickname|real name|identity|who|是|叫|名字|名叫|称呼|就是|即)$/iu;

/** `text` as the screen reads it: compatibility forms folded, invisible format characters gone, spaces collapsed. */
function fold(text: string): string {
  return text.normalize("NFKC").replace(/\p{Cf}/gu, "").replace(/\s+/g, " ").trim();
}

/**
 * `value` for a log line or an error, as JSON (a text quoted, line breaks escaped), cut to at most `max` characters.
 *
 * @example
 * ```ts
 * quoted("tea"); // '"tea"'
 * quoted(42); // "42"
 * quoted("x".repeat(5_000), 8); // '"xxxxxxx…"'
 * ```
 */
export function quoted(value: unknown, max = 60): string {
  const cut = (text: string) => {
    const chars = [...text];
    return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
  };
  if (typeof value === "string") return JSON.stringify(cut(value));
  return cut(JSON.stringify(value) ?? String(value));
}

/** The words of a predicate: "isOwner", "is_owner", "is-owner" → ["is", "owner"]. */
function words(text: string): string[] {
  return text.replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

/** A fact's text fields by their names in the contract. */
function fieldsOf(fact: ProposedFact): Record<Field, string> {
  return {
    "subject.name": fact.subject.name,
    "subject.type": fact.subject.type,
    predicate: fact.predicate,
    object: fact.object,
  };
}

/** What is wrong with `fact` and in which field, or `undefined` when it may be recorded. */
function problemOf(
  fact: ProposedFact,
  speakers: readonly string[],
  selfNames: readonly string[],
): { kind: DropKind; field: Field; reason: string } | undefined {
  const entries = Object.entries(fieldsOf(fact)) as Array<[Field, string]>;
  for (const [field, value] of entries) {
    const length = [...value.trim()].length;
    if (length > FIELD_LIMITS[field]) {
      return {
        kind: "too long",
        field,
        reason: `is ${length} characters long, more than a fact's ${field} may be (${FIELD_LIMITS[field]})`,
      };
    }
  }
  for (const [field, value] of entries) {
    if (INSTRUCTIONS.some((pattern) => pattern.test(fold(value)))) {
      return { kind: "instruction", field, reason: "reads as an instruction to the butler, not as a fact" };
    }
  }
  for (const [field, value] of entries) {
    if (/[\p{Cc}\u2028\u2029]/u.test(value)) {
      return { kind: "control character", field, reason: "holds a line break or another control character" };
    }
  }
  if (aboutSelf(fact.subject, selfNames)) {
    return {
      kind: "about the butler",
      field: "subject.name",
      reason: "is the butler itself, whose identity is personal.md alone",
    };
  }
  const predicate = fold(fact.predicate);
  if (words(predicate).some((word) => TRUST_WORDS.has(word)) || TRUST_PREDICATE_CJK.test(predicate)) {
    return { kind: "identity", field: "predicate", reason: "is about identity or trust, which chat never sets" };
  }
  const trustValue = (text: string) => TRUST_VALUE.test(fold(text).replace(/[。.!！?？,，;；]+$/u, ""));
  if (trustValue(fact.object)) {
    return { kind: "identity", field: "object", reason: "is a trust level, which chat never sets" };
  }
  if (trustValue(fact.subject.type)) {
    return { kind: "identity", field: "subject.type", reason: "is a trust level, which chat never sets" };
  }
  const subject = fold(fact.subject.name);
  if (
    trustValue(subject) && NAMING.test(predicate) &&
    !speakers.some((speaker) => fold(speaker).toLowerCase() === subject.toLowerCase())
  ) {
    return {
      kind: "identity",
      field: "subject.name",
      reason: `is a trust level named by someone else (${quoted(fact.predicate)}), which chat never sets`,
    };
  }
  return undefined;
}

/** Options of {@link screenFacts}. */
export interface ScreenOptions {
  /** The butler's own names (from the persona). */
  selfNames: readonly string[];
  logger: Logger;
  /** Limits the log lines per kind of problem; without one every line is written. */
  limiter?: LogLimiter | undefined;
  /** How the log names the fact at `index`, or its `field`: `facts[2]`, `facts[2].object` in the LLM's answer. */
  label: (index: number, fact: ProposedFact, field?: string) => string;
}

/**
 * The facts of `proposed` that may be recorded (see the module's description), and those dropped; each drop is
 * logged. `entries` are the batch the facts come from: who said each fact is read from the lines it cites.
 *
 * @example
 * ```ts
 * import { log } from "../../log/logging.ts";
 *
 * const line = { eventId: "e1", time: 0, role: "user", source: "http", sender: "visitor", text: "…" } as const;
 * const fact = (predicate: string, object: string) => ({
 *   subject: { name: "Mallory", type: "person" }, predicate, object, single: true, provenance: ["e1"],
 * });
 * const { kept, dropped } = screenFacts([fact("likes", "tea"), fact("role", "owner"), fact("likes", "tea")], [line], {
 *   selfNames: ["Alfred"],
 *   logger: log("memory"),
 *   label: (index, _fact, field) => `facts[${index}]${field ? `.${field}` : ""}`,
 * });
 * // kept: the first fact; dropped: facts[1] (identity: predicate "role"), facts[2] (a duplicate of facts[0])
 * ```
 */
export function screenFacts(
  proposed: readonly ProposedFact[],
  entries: readonly MemoryEntry[],
  options: ScreenOptions,
): { kept: ProposedFact[]; dropped: Dropped[] } {
  const kept: ProposedFact[] = [];
  const dropped: Dropped[] = [];
  const first = new Map<string, { fact: ProposedFact; label: string }>();
  const drop = (index: number, kind: DropKind, problem: string) => {
    dropped.push({ index, kind, problem });
    const summary = (count: number, seconds: number) =>
      options.logger.warning(
        "Proposed facts dropped ({kind}) in the last {seconds} s and not logged one by one: {count}",
        { kind, seconds, count },
      );
    if (options.limiter && !options.limiter.allow(`memory fact: ${kind}`, summary)) return;
    const level = kind === "duplicate" || kind === "about the butler" ? "info" : "warning";
    options.logger[level]("Dropped a proposed fact ({kind}): {problem}", { kind, problem });
  };
  proposed.forEach((fact, index) => {
    const label = options.label(index, fact);
    const speakers = entries.filter((entry) => entry.role === "user" && fact.provenance.includes(entry.eventId))
      .map((entry) => entry.sender);
    const problem = problemOf(fact, speakers, options.selfNames);
    if (problem) {
      const value = fieldsOf(fact)[problem.field];
      const named = options.label(index, fact, problem.field);
      return drop(index, problem.kind, `${named} ${quoted(value)} ${problem.reason}`);
    }
    const key = [fact.subject.name, fact.subject.type, fact.predicate, fact.object].map((part) =>
      normalizeName(fold(part).toLowerCase())
    ).join("\u0000");
    const earlier = first.get(key);
    if (earlier) {
      earlier.fact.provenance = [...new Set([...earlier.fact.provenance, ...fact.provenance])];
      return drop(
        index,
        "duplicate",
        `${label} repeats ${earlier.label} (${quoted(fact.subject.name, 30)} ${quoted(fact.predicate, 30)} ${
          quoted(fact.object, 30)
        }); its provenance joins that fact's`,
      );
    }
    const copy = { ...fact, subject: { ...fact.subject }, provenance: [...fact.provenance] };
    first.set(key, { fact: copy, label });
    kept.push(copy);
  });
  return { kept, dropped };
}
