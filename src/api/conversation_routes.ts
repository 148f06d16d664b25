/**
 * `GET /api/conversation?limit=`: the one conversation as the context window holds it now (household and owner: the
 * part the caller may read, `identity/visibility.ts`), so the console's chat page opens where the butler is — messages
 * from every channel, tool calls and their results.
 *
 * @module
 */

import type { Hono } from "hono";
import type { ContextEntry } from "../context/context_window.ts";
import { visibleTo } from "../identity/visibility.ts";
import type { ApiVariables } from "./auth.ts";
import { requireTrust } from "./require_trust.ts";
import { intParam } from "./search_params.ts";

/** One entry as the endpoint shows it. */
export interface ConversationEntryBody {
  event_id: string;
  time: string;
  role: "user" | "assistant" | "tool" | "system";
  text: string;
  source: string;
  sender: string;
  tool_calls?: Array<{ id: string; name: string; arguments: string }>;
  tool_call_id?: string;
}

/**
 * Mounts the endpoint over the context's entries (oldest first).
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 *
 * declare const options: ApiOptions;
 * const app = createApi({ ...options, routes: [conversationRoutes(() => [])] });
 * ```
 */
export function conversationRoutes(
  entries: () => readonly ContextEntry[],
): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/conversation", (c) => {
      const identity = c.get("identity");
      requireTrust(identity, "household", "The conversation");
      const limit = intParam(c, "limit", { min: 1, max: 500, fallback: 100 });
      // The caller's part of it: what they may read (identity/visibility.ts), as their own turn's prompt carries.
      const viewer = { sender: identity.name, trust: identity.trust };
      const readable = entries().filter((entry) => visibleTo(viewer, entry));
      return c.json({ entries: readable.slice(-limit).map(entryBody) });
    });
  };
}

function entryBody(entry: ContextEntry): ConversationEntryBody {
  const { message } = entry;
  return {
    event_id: entry.eventId,
    time: new Date(entry.time).toISOString(),
    role: message.role,
    text: message.content ?? "",
    source: entry.source,
    sender: entry.sender,
    ...(message.role === "assistant" && message.tool_calls
      ? {
        tool_calls: message.tool_calls.map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        })),
      }
      : {}),
    ...(message.role === "tool" ? { tool_call_id: message.tool_call_id } : {}),
  };
}
