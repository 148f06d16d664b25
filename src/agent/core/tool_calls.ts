/**
 * One answer's tool calls, run in order through the turn's view of the registry: each result joins the turn cut to
 * size and escaped, lowers the turn's trust when it carries others' words, and is reported to the input's channel.
 *
 * @module
 */

import { cutToTokens } from "../../context/tokens.ts";
import { lowerTrust } from "../../identity/trust.ts";
import type { InputEvent } from "../../io/event.ts";
import type { IOManager } from "../../io/io_manager.ts";
import type { ChatMessage, ToolCall } from "../../provider/provider.ts";
import { escapeMarkers } from "../../text/untrusted.ts";
import type { ToolRegistry } from "../../tools/registry.ts";
import type { TurnToolContext } from "./turn_types.ts";

/** What running the calls needs of the agent. */
export interface ToolCallDeps {
  io: Pick<IOManager, "report">;
  /** `llm.max_tool_result_tokens`: a longer result is cut, visibly. */
  maxResultTokens: number;
  /** Counts a cut result (`/api/status` `agent.cut_tool_results`). */
  onCut(): void;
}

/** One answer's calls and the turn they belong to. */
export interface ToolCallRound {
  event: InputEvent;
  calls: readonly ToolCall[];
  tools: ReturnType<ToolRegistry["view"]>;
  /** The turn's messages; each result is pushed as a `tool` message. */
  turn: ChatMessage[];
  toolContext: TurnToolContext;
}

/**
 * Runs one answer's tool calls in order; each result joins the turn, cut to size and escaped.
 *
 * @example
 * ```ts
 * declare const deps: ToolCallDeps;
 * declare const round: ToolCallRound;
 * await runToolCalls(deps, round);
 * round.turn.at(-1)?.role; // "tool"
 * ```
 */
export async function runToolCalls(deps: ToolCallDeps, round: ToolCallRound): Promise<void> {
  const { event, calls, tools, turn, toolContext } = round;
  for (const call of calls) {
    const outcome = await tools.call(call.function.name, call.function.arguments, toolContext);
    // Others' words in a result (an MCP server's, a web page's) taint the rest of the turn.
    if (outcome.trust) toolContext.lowestTrustSeen = lowerTrust(toolContext.lowestTrustSeen, outcome.trust);
    const cut = cutToTokens(outcome.content, deps.maxResultTokens);
    if (cut !== outcome.content) deps.onCut();
    // A tool result carries what others wrote (a web page, a device's name, an MCP server's text): a tag in it
    // stays text, never a message from someone.
    turn.push({ role: "tool", tool_call_id: call.id, content: escapeMarkers(cut) });
    deps.io.report(event.source, { type: "tool", eventId: event.id, name: call.function.name, ok: outcome.ok });
  }
}
