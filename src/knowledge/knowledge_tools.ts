/**
 * The butler's knowledge tools: `knowledge_search`, `knowledge_create`, `knowledge_list`.
 *
 * @module
 */

import type { Tool } from "../tools/tool.ts";
import type { KnowledgeBase } from "./knowledge_base.ts";
import { MAX_TOPIC_CHARS } from "./topic_name.ts";

/**
 * Builds the tools over a knowledge base.
 *
 * @example
 * ```ts
 * import { ToolRegistry } from "../tools/registry.ts";
 * import type { KnowledgeBase } from "./knowledge_base.ts";
 *
 * declare const knowledge: KnowledgeBase;
 * const registry = new ToolRegistry();
 * for (const tool of knowledgeTools(knowledge)) registry.register(tool);
 * ```
 */
export function knowledgeTools(knowledge: KnowledgeBase): Tool[] {
  return [
    {
      name: "knowledge_search",
      effect: "read",
      allow: "anyone",
      description:
        "Search what you have learned about the world (recipes, how devices work, how-tos). Returns the best sections with topic, heading, score and a snippet. Household events and people are memory, not knowledge.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", minLength: 1, maxLength: 500 },
          k: { type: "integer", minimum: 1, maximum: 10, description: "How many sections (default 5)" },
        },
        required: ["query"],
        additionalProperties: false,
      },
      execute: (args) => {
        const hits = knowledge.search(args.query as string, (args.k as number | undefined) ?? 5);
        return hits.length ? hits : "No knowledge matches that query.";
      },
    },
    {
      name: "knowledge_create",
      effect: "act",
      allow: "household",
      description:
        "Record durable, reusable knowledge: a recipe that worked, how a device is operated, a fix that solved a problem. A new topic is created, or the entry is appended to the topic as a dated section. Do not store passing chat or private household events here.",
      parameters: {
        type: "object",
        properties: {
          topic: {
            type: "string",
            minLength: 1,
            maxLength: MAX_TOPIC_CHARS,
            description: 'Folder-style name, e.g. "cooking", "smart_home", "菜谱" (letters, digits, _ and -)',
          },
          content: { type: "string", minLength: 1, description: "The knowledge, in Markdown" },
          title: { type: "string", maxLength: 120, description: "Short title of the entry" },
        },
        required: ["topic", "content"],
        additionalProperties: false,
      },
      execute: async (args) => {
        const result = await knowledge.create(
          args.topic as string,
          args.content as string,
          args.title as string | undefined,
        );
        return result.created
          ? `Created topic "${result.topic}" with section "${result.heading}"`
          : `Appended section "${result.heading}" to topic "${result.topic}"`;
      },
    },
    {
      name: "knowledge_list",
      effect: "read",
      allow: "anyone",
      description: "List the knowledge topics with their number of sections and last change.",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      execute: () => knowledge.list(),
    },
  ];
}
