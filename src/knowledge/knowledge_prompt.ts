/**
 * The knowledge part of the prompt: in the system message, when to learn and the topic catalogue (stable between
 * turns); in the current message's reference block, the sections that match it — labelled as knowledge, so it
 * never blurs with the household's memory.
 *
 * @module
 */

import type { PromptContributor } from "../prompt/contributor.ts";
import type { KnowledgeBase } from "./knowledge_base.ts";
import { REFERENCE_MIN_SCORE } from "../prompt/reference_floor.ts";

const GUIDANCE = [
  "This is what you have learned about the world (how things work, recipes, procedures) — not memories of this",
  "household. When you learn something durable and reusable — a recipe that worked, how a device is operated, a fix",
  "that solved a problem — record it with knowledge_create (a short topic like cooking or smart_home, and a title).",
  "Do not record passing chat or private events. Use knowledge_search when a question may be covered by a topic.",
  "Sections that match a message are quoted in its reference block.",
].join(" ");

/**
 * A prompt contributor: guidance and topics for the system message, up to `count` matching sections per message.
 *
 * @example
 * ```ts
 * import type { KnowledgeBase } from "./knowledge_base.ts";
 *
 * declare const knowledge: KnowledgeBase;
 * const contributor = knowledgePrompt(knowledge); // one of the agent's `promptContributors`
 * await contributor.reference?.({ text: "怎么做番茄炒蛋", source: "http", sender: "owner", time: Date.now() }, []);
 * // { title: "Knowledge sections that may answer this message",
 * //   body: "- [cooking › Tomato and egg stir-fry · 番茄炒蛋] …lt and sugar, return the eggs and toss. 先把蛋炒到…" }
 * ```
 */
export function knowledgePrompt(knowledge: KnowledgeBase, count = 3): PromptContributor {
  return {
    system: () => {
      const topics = knowledge.list().map((t) => t.topic);
      return {
        title: "Knowledge (learned about the world, not household memory)",
        body: `${GUIDANCE}\nTopics: ${topics.length ? topics.join(", ") : "none yet"}.`,
      };
    },
    reference: (input) => {
      const hits = input.text
        ? knowledge.search(input.text, count).filter((hit) => hit.score >= REFERENCE_MIN_SCORE)
        : [];
      if (!hits.length) return undefined;
      return {
        title: "Knowledge sections that may answer this message",
        body: hits.map((hit) => `- [${hit.topic} › ${hit.heading}] ${hit.snippet}`).join("\n"),
      };
    },
  };
}
