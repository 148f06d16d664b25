/**
 * The butler's memory tools: `memory_recall` (anyone: what the asker may recall, with when and from whom each item
 * came) and `memory_forget` (the owner: what given messages left in every layer).
 *
 * @module
 */

import type { Tool } from "../tools/tool.ts";
import { visibleTo } from "../identity/visibility.ts";
import type { Asker, RecallItem } from "./memory.ts";
import type { ForgetCounts } from "./memory_inspection.ts";
import type { MemoryEntry } from "./text/text_memory.ts";

/** What the memory tools ask of memory (the {@link MemoryService}, whose stores may still be opening). */
export interface MemoryToolTarget {
  /** Recalls for `asker` only what they may recall. */
  recall(query: string, k: number, asker: Asker): Promise<RecallItem[]>;
  /** Forgets the input events in every layer. */
  forget(eventIds: readonly string[]): Promise<ForgetCounts>;
  /** The journaled messages of input events (see `Memory.messages`). */
  messages(eventIds: readonly string[]): Promise<Map<string, MemoryEntry>>;
}

/**
 * Builds the tools over `memory`.
 *
 * @example
 * ```ts
 * import { ToolRegistry } from "../tools/registry.ts";
 *
 * declare const memory: MemoryToolTarget;
 * const registry = new ToolRegistry();
 * for (const tool of memoryTools(memory)) registry.register(tool);
 * ```
 */
export function memoryTools(memory: MemoryToolTarget): Tool[] {
  return [{
    name: "memory_forget",
    effect: "act",
    description:
      "Forget what the household said in given messages, in every layer of memory (context, journal, documents, facts). Find the messages first with memory_recall: pass the event ids from its provenance. Only when the owner asks.",
    parameters: {
      type: "object",
      properties: {
        event_ids: {
          type: "array",
          items: { type: "string", minLength: 1, maxLength: 100 },
          minItems: 1,
          maxItems: 100,
        },
      },
      required: ["event_ids"],
      additionalProperties: false,
    },
    allow: "owner",
    execute: async (args) => {
      const removed = await memory.forget(args.event_ids as string[]);
      return `Forgotten: ${removed.context} context entries, ${removed.candidates} journal lines, ` +
        `${removed.documents} documents, ${removed.facts} facts`;
    },
  }, {
    name: "memory_recall",
    effect: "read",
    description:
      "Recall what happened in this household beyond the current conversation: facts learned from what people said, earlier exchanges (documents) and recent context, best first, with when and in which message. Use it when someone refers to something said before. For a guest it recalls only what that guest said.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: 500 },
        k: { type: "integer", minimum: 1, maximum: 20, description: "How many items (default 5)" },
      },
      required: ["query"],
      additionalProperties: false,
    },
    // Anyone may ask: the asker's trust decides what the recall holds (a guest: only what that guest said).
    allow: "anyone",
    execute: async (args, context) => {
      const asker = { sender: context.sender, trust: context.trust };
      const items = await memory.recall(args.query as string, (args.k as number | undefined) ?? 5, asker);
      if (!items.length) return "Nothing in memory matches that.";
      // When and from whom each item came: its messages' senders, channels and trust — those the asker may read.
      const all = await memory.messages([...new Set(items.flatMap((item) => item.provenance))]);
      const messages = new Map([...all].filter(([, entry]) => visibleTo(asker, entry)));
      return items.map((item) => ({
        ...item,
        time: new Date(item.time).toISOString(),
        from: item.provenance.flatMap((eventId) => {
          const entry = messages.get(eventId);
          return entry
            ? [{
              sender: entry.sender,
              source: entry.source,
              trust: entry.trust ?? "household",
              time: new Date(entry.time).toISOString(),
            }]
            : [];
        }),
      }));
    },
  }];
}
