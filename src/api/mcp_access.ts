/**
 * What the daemon's own `/mcp` endpoint lets an MCP client do, as the person its API token names: chat in the one
 * conversation (through the HTTP device, like `POST /api/chat`), recall memory (household and owner only, the same
 * rule and message as `GET /api/memory/documents`), search knowledge, list their schedules (the owner sees all).
 *
 * @module
 */

import type { HttpDevice } from "./http_device.ts";
import { scheduleView, type TimerDevice } from "../timer/timer.ts";
import type { Identity } from "../identity/identity.ts";
import type { TurnEvent } from "../io/device.ts";
import { LaneFullError } from "../io/fair_queue.ts";
import { ShuttingDown } from "../io/turn_error.ts";
import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
import type { ButlerAccess } from "../mcp/serve/homed_tools.ts";
import type { MemoryService } from "../memory/memory_service.ts";
import { requireHouseholdIdentity, viewerOf } from "./memory_routes.ts";

/** The parts of a running homed the MCP tools reach. */
export interface McpAccessParts {
  device: HttpDevice;
  memory: MemoryService;
  knowledge: KnowledgeBase;
  timer: TimerDevice;
}

/**
 * The butler as `identity` may reach it.
 *
 * @example
 * ```ts
 * declare const parts: McpAccessParts;
 * const access = butlerAccessFor(parts, { name: "alice", trust: "household" });
 * await access.chat("Is the porch light on?");
 * ```
 */
export function butlerAccessFor(parts: McpAccessParts, identity: Identity): ButlerAccess {
  return {
    async chat(text, options) {
      const onText = options?.onText;
      // With onText the turn streams its reply (as /api/chat/stream does), so a chat answered before the turn ends
      // can say what the butler wrote so far. No signal is needed: the turn is the conversation's, and goes on.
      const onEvent = onText
        ? (event: TurnEvent) => {
          if (event.type === "delta") onText(event.text);
        }
        : undefined;
      let done;
      try {
        done = parts.device.submit({ text, identity, display: undefined }, onEvent).done;
      } catch (error) {
        if (error instanceof LaneFullError) throw new Error(error.message);
        if (error instanceof ShuttingDown) throw new Error("homed is shutting down; try again shortly");
        throw error;
      }
      const result = await done;
      if (result.error) throw new Error(result.error.message);
      return { reply: result.reply, channel: result.channel };
    },
    async recall(query, k) {
      requireHouseholdIdentity(identity);
      // What the caller may read only (identity/visibility.ts), as the console's memory pages.
      return await parts.memory.inspectDocuments(query, k ?? 5, viewerOf(identity));
    },
    searchKnowledge(query, k) {
      return Promise.resolve(parts.knowledge.search(query, k ?? 5));
    },
    schedules() {
      const mine = parts.timer.list({ name: identity.name, owner: identity.trust === "owner" });
      return Promise.resolve(mine.map(scheduleView));
    },
  };
}
