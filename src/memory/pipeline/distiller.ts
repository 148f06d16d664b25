/**
 * The distiller: memory candidates → facts, in batches, one LLM call per batch through the Provider. The model must
 * answer with strict JSON (`{"facts": [...]}`), every fact citing event ids from the batch; an answer that breaks the
 * contract is retried once, then the batch fails and waits for the next run — never half-recorded. Without an LLM
 * the rule-based fallback runs.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Provider } from "../../provider/provider.ts";
import type { MemoryEntry } from "../text/text_memory.ts";
import { type ProposedFact, ruleFacts } from "./rules.ts";

/** Options of {@link Distiller}. */
export interface DistillerOptions {
  /** Without one (no key), the rule-based fallback is used. */
  provider?: Provider | undefined;
  /** The persona, first in every system message homed sends. */
  persona: string;
  logger: Logger;
}

/** What one batch produced. */
export interface Distilled {
  facts: ProposedFact[];
  via: "llm" | "rules";
  tokens: number;
}

const CONTRACT = [
  "## [homed] Memory distiller",
  "You turn what people in this household said into durable facts for long-term memory. Answer with JSON only:",
  '{"facts": [{"subject": {"name": "...", "type": "person|place|device|thing|event|other"}, "predicate": "...",',
  '"object": "...", "single": true|false, "provenance": ["<event id>", ...]}]}',
  "single is true when the predicate holds one value at a time (where something is, a state, a name) so a new value",
  "replaces the old. provenance lists the event ids (in brackets) of the lines the fact comes from. Record only what",
  "people stated about their household, its members, devices, places, habits and plans — not the butler's replies,",
  'not questions, not chit-chat. No fact is a valid answer: {"facts": []}.',
].join("\n");

/** Why a distiller answer breaks the contract, or the facts it holds. */
export function parseDistilled(content: string, eventIds: ReadonlySet<string>): ProposedFact[] | string {
  const json = content.trim().replace(/^```(?:json)?\s*|\s*```$/g, "");
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return `the answer is not JSON (${(error as Error).message})`;
  }
  const facts = (parsed as { facts?: unknown })?.facts;
  if (!Array.isArray(facts)) return 'the answer has no "facts" list';
  const out: ProposedFact[] = [];
  for (const [index, raw] of facts.entries()) {
    const fact = raw as Record<string, unknown>;
    const subject = fact?.subject as Record<string, unknown> | undefined;
    const where = `facts[${index}]`;
    if (typeof subject?.name !== "string" || subject.name.trim() === "") return `${where}.subject.name is missing`;
    if (typeof subject.type !== "string" || subject.type.trim() === "") return `${where}.subject.type is missing`;
    if (typeof fact.predicate !== "string" || fact.predicate.trim() === "") return `${where}.predicate is missing`;
    if (typeof fact.object !== "string" || fact.object.trim() === "") return `${where}.object is missing`;
    if (typeof fact.single !== "boolean") return `${where}.single is not true or false`;
    const provenance = fact.provenance;
    if (!Array.isArray(provenance) || provenance.length === 0 || !provenance.every((id) => eventIds.has(String(id)))) {
      return `${where}.provenance must list event ids of this batch, got ${JSON.stringify(provenance)?.slice(0, 80)}`;
    }
    out.push({
      subject: { name: subject.name.slice(0, 80), type: subject.type.slice(0, 20) },
      predicate: fact.predicate.slice(0, 80),
      object: fact.object.slice(0, 200),
      single: fact.single,
      provenance: provenance.map(String),
    });
  }
  return out;
}

/** The distiller. */
export class Distiller {
  #options: DistillerOptions;

  /**
   * @example
   * ```ts
   * import { log } from "../../log/logging.ts";
   *
   * // No provider: the rule-based fallback; pass one (the configured LLM) for the real distiller.
   * const distiller = new Distiller({ persona: "You are Alfred, the household's butler.", logger: log("memory") });
   * const text = "The spare key is under the blue flowerpot.";
   * const { facts, via } = await distiller.distill([
   *   { eventId: "e1", time: Date.now(), role: "user", source: "http", sender: "owner", text },
   * ]);
   * // via: "rules"; facts: [{ subject: { name: "spare key", type: "thing" }, predicate: "location",
   * //   object: "under blue flowerpot", single: true, provenance: ["e1"] }]
   * ```
   */
  constructor(options: DistillerOptions) {
    this.#options = options;
  }

  /**
   * Facts from one batch. Throws when the LLM fails or breaks the contract twice (the caller keeps the batch for the
   * next run).
   */
  async distill(entries: readonly MemoryEntry[], signal?: AbortSignal): Promise<Distilled> {
    const provider = this.#options.provider;
    if (!provider) return { facts: ruleFacts(entries), via: "rules", tokens: 0 };
    const ids = new Set(entries.map((entry) => entry.eventId));
    const lines = entries.map((entry) =>
      `[${entry.eventId}] ${new Date(entry.time).toISOString().slice(0, 16)} ${
        entry.role === "user" ? entry.sender : "butler"
      }: ${entry.text.replace(/\s+/g, " ").slice(0, 1_000)}`
    );
    let tokens = 0;
    let problem = "";
    for (let attempt = 1; attempt <= 2; attempt++) {
      const response = await provider.chat({
        messages: [
          { role: "system", content: `${this.#options.persona}\n\n${CONTRACT}` },
          {
            role: "user",
            content: `${problem ? `Your last answer was rejected: ${problem}. ` : ""}Lines:\n${lines.join("\n")}`,
          },
        ],
      }, signal ? { signal } : {});
      tokens += response.usage?.totalTokens ?? 0;
      const parsed = parseDistilled(response.content, ids);
      if (typeof parsed !== "string") return { facts: parsed, via: "llm", tokens };
      problem = parsed;
      this.#options.logger.warning("The distiller's answer breaks the contract ({problem}); attempt {attempt} of 2", {
        problem,
        attempt,
      });
    }
    throw Object.assign(new Error(`The distiller's answers broke the contract twice: ${problem}`), { tokens });
  }
}
