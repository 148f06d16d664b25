/**
 * The shapes a turn hands over and works with: its tool context, the tokens it used, and its result as a caller
 * speaking a model's API reads it. Apart from `agent.ts` so the files a turn is split into share them without a cycle.
 *
 * @module
 */

import type { TurnResult } from "../../io/device.ts";
import type { Trust } from "../../identity/trust.ts";
import type { ToolCall } from "../../provider/provider.ts";
import type { ToolContext } from "../../tools/tool.ts";

/**
 * A turn's tool context, and the lowest trust whose words its prompt holds so far: the reference block's speakers, a
 * picture's description (a stranger's words: anything can be written on what is photographed), then each tool result
 * that carries others' words. The registry's policy gate reads it: below the sender's trust, the turn is tainted.
 */
export interface TurnToolContext extends ToolContext {
  lowestTrustSeen: Trust;
}

/** Tokens one turn's LLM requests used, summed over its rounds. */
export interface TurnUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/**
 * A turn's result as the agent hands it over: a {@link TurnResult} with what a caller speaking a model's API reports —
 * the tokens the turn's requests used; for a stateless call the model's tool calls and finish reason; and, when a
 * failure came from one field of the request, that field (`param`).
 */
export interface AnsweredTurn extends TurnResult {
  usage?: TurnUsage;
  toolCalls?: ToolCall[];
  finishReason?: string;
  param?: string;
}
