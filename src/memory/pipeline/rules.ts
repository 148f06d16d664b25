/**
 * The distiller's rule-based fallback, for when no LLM is configured: a few conservative patterns that turn plain
 * statements into facts — where something is, what someone is called, what someone likes. It misses a lot on
 * purpose; what it finds is right. The LLM distiller does the real work when a key is set.
 *
 * @module
 */

import type { MemoryEntry } from "../text/text_memory.ts";

/** A fact proposed by the distiller, before it is recorded. */
export interface ProposedFact {
  subject: { name: string; type: string };
  predicate: string;
  object: string;
  single: boolean;
  provenance: string[];
}

const clean = (text: string) => text.replace(/^(?:the|my|our|a|an)\s+/i, "").replace(/[。.!！?？,，]+$/u, "").trim();

interface Rule {
  pattern: RegExp;
  make(match: RegExpExecArray, entry: MemoryEntry): Omit<ProposedFact, "provenance"> | undefined;
}

const RULES: Rule[] = [
  {
    // "The spare key is under the blue flowerpot", "the lamp is now in the bedroom"
    pattern:
      /^(?:the |my |our )?([\p{L}\p{N} '-]{2,40}?) (?:is|are) (?:now |still )?(in|on|under|at|behind|next to) (.{2,60})$/iu,
    make: (m) => ({
      subject: { name: clean(m[1]!), type: "thing" },
      predicate: "location",
      object: `${m[2]!.toLowerCase()} ${clean(m[3]!)}`,
      single: true,
    }),
  },
  {
    // "备用钥匙在蓝色花盆下面", "客厅灯现在放在卧室"
    pattern: /^([\p{Script=Han}A-Za-z0-9]{2,12}?)(?:现在|还)?(?:放在|在)([\p{Script=Han}A-Za-z0-9]{1,20})$/u,
    make: (m) => ({ subject: { name: m[1]!, type: "thing" }, predicate: "location", object: m[2]!, single: true }),
  },
  {
    pattern: /^(?:my name is|call me|i am called) ([\p{L} '-]{2,30})$/iu,
    make: (m, entry) => ({
      subject: { name: entry.sender, type: "person" },
      predicate: "name",
      object: clean(m[1]!),
      single: true,
    }),
  },
  {
    pattern: /^(?:我叫|叫我)([\p{Script=Han}A-Za-z]{1,10})$/u,
    make: (m, entry) => ({
      subject: { name: entry.sender, type: "person" },
      predicate: "name",
      object: m[1]!,
      single: true,
    }),
  },
  {
    pattern: /^i (?:really )?(?:like|love|enjoy) (.{2,40})$/iu,
    make: (m, entry) => ({
      subject: { name: entry.sender, type: "person" },
      predicate: "likes",
      object: clean(m[1]!),
      single: false,
    }),
  },
  {
    pattern: /^我(?:很|特别|最)?(?:喜欢|爱)(?:吃|喝|看|听)?([\p{Script=Han}A-Za-z0-9]{1,20})$/u,
    make: (m, entry) => ({
      subject: { name: entry.sender, type: "person" },
      predicate: "likes",
      object: m[1]!,
      single: false,
    }),
  },
];

/**
 * Facts found in what people said (the butler's own replies are not evidence), one sentence at a time.
 *
 * @example
 * ```ts
 * const text = "The spare key is under the blue flowerpot.";
 * ruleFacts([{ eventId: "e1", time: Date.now(), role: "user", source: "http", sender: "owner", text }]);
 * // [{ subject: { name: "spare key", type: "thing" }, predicate: "location", object: "under blue flowerpot",
 * //    single: true, provenance: ["e1"] }]
 * ```
 */
export function ruleFacts(entries: readonly MemoryEntry[]): ProposedFact[] {
  const facts: ProposedFact[] = [];
  for (const entry of entries) {
    if (entry.role !== "user") continue;
    for (const sentence of entry.text.split(/(?<=[。.!！?？；;])\s*|\n+/u)) {
      const text = sentence.replace(/[。.!！?？；;]+$/u, "").trim();
      for (const rule of RULES) {
        const match = rule.pattern.exec(text);
        const fact = match ? rule.make(match, entry) : undefined;
        if (fact && fact.subject.name && fact.object) {
          facts.push({ ...fact, provenance: [entry.eventId] });
          break;
        }
      }
    }
  }
  return facts;
}
