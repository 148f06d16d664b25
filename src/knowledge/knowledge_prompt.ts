/**
 * The knowledge block of the system prompt: when to learn, which topics exist, and the sections that match the
 * message — labelled as knowledge, so it never blurs with the household's memory.
 *
 * @module
 */

import type { PromptContributor } from "../agent/core/agent.ts";
import type { KnowledgeBase } from "./knowledge_base.ts";

/** Least score for a section to be shown unasked. */
export const PROMPT_HIT_MIN_SCORE = 0.12;

const GUIDANCE = [
  "This is what you have learned about the world (how things work, recipes, procedures) — not memories of this",
  "household. When you learn something durable and reusable — a recipe that worked, how a device is operated, a fix",
  "that solved a problem — record it with knowledge_create (a short topic like cooking or smart_home, and a title).",
  "Do not record passing chat or private events. Use knowledge_search when a question may be covered below or in",
  "other topics.",
].join(" ");

/**
 * A prompt contributor showing up to `count` matching sections.
 *
 * @example
 * ```ts
 * new Agent({ …, promptContributors: [knowledgePrompt(knowledge)] });
 * ```
 */
export function knowledgePrompt(knowledge: KnowledgeBase, count = 3): PromptContributor {
  return (event) => {
    const topics = knowledge.list().map((t) => t.topic);
    const text = typeof event.payload.text === "string" ? event.payload.text : "";
    const hits = text ? knowledge.search(text, count).filter((hit) => hit.score >= PROMPT_HIT_MIN_SCORE) : [];
    const lines = [GUIDANCE, `Topics: ${topics.length ? topics.join(", ") : "none yet"}.`];
    if (hits.length) {
      lines.push("Sections that may answer this message:");
      for (const hit of hits) lines.push(`- [${hit.topic} › ${hit.heading}] ${hit.snippet}`);
    }
    return { title: "Knowledge (learned about the world, not household memory)", body: lines.join("\n") };
  };
}
