/**
 * Fitting one request into `memory.context_tokens`: which context exchanges go along, and how far the turn's own tool
 * results are cut. Apart from `agent.ts` because it is the one place a request's size is decided.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type ContextWindow, SHRINK_TO } from "../../context/context_window.ts";
import { cutToTokens, messagesTokens, messageTokens } from "../../context/tokens.ts";
import type { Viewer } from "../../identity/visibility.ts";
import type { ChatMessage } from "../../provider/provider.ts";
import { readableBy } from "./turn_helpers.ts";

/**
 * The messages of one request, within `memory.context_tokens`: of the context, only the exchanges `viewer` (the
 * turn's sender) may read (`visibleTo`), in order; when they would not fit, the least relevant context exchanges go
 * in one batch; if the turn alone is too big, its oldest tool results are cut further.
 */
export function fitRequest(
  deps: { context: ContextWindow; logger: Logger },
  system: ChatMessage,
  first: ChatMessage,
  turn: ChatMessage[],
  viewer: Viewer,
): ChatMessage[] {
  const context = deps.context;
  const budget = context.maxTokens;
  const rest = turn.slice(1);
  const readable = readableBy(viewer);
  let visible = context.view(readable);
  let own = messageTokens(system) + messageTokens(first) + messagesTokens(rest);
  if (own + visible.tokens > budget) {
    const room = Math.max(0, budget - own);
    // Relevance to what was said, not to the reference block around it.
    const current = turn[0]?.role === "user" ? turn[0].content : undefined;
    const dropped = context.shrinkTo(context.size, Math.floor(room * SHRINK_TO), current);
    if (dropped) deps.logger.info("Context over budget: dropped {dropped} oldest entries", { dropped });
    visible = context.view(readable);
  }
  for (const message of rest) {
    if (own + visible.tokens <= budget) break;
    if (message.role !== "tool") continue;
    const before = messageTokens(message);
    message.content = cutToTokens(message.content, 200);
    own -= before - messageTokens(message);
  }
  return [system, ...visible.messages, first, ...rest];
}
