/**
 * The door's answers in OpenAI's shapes: a whole `chat.completion`, the `chat.completion.chunk`s of a stream (with
 * the model's tool calls of a stateless call, and the last `usage` chunk `stream_options.include_usage` asks for),
 * and the models.
 *
 * @module
 */

import type { AnsweredTurn, TurnUsage } from "../../agent/core/agent.ts";
import type { ToolCall } from "../../provider/provider.ts";

/** The `usage` object: the tokens the answer's LLM requests used (all rounds of a turn; 0 when none was made). */
export interface UsageBody {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * @example
 * ```ts
 * usageBody({ promptTokens: 120, completionTokens: 8, totalTokens: 128 });
 * // { prompt_tokens: 120, completion_tokens: 8, total_tokens: 128 }
 * ```
 */
export function usageBody(usage: TurnUsage | undefined): UsageBody {
  return {
    prompt_tokens: usage?.promptTokens ?? 0,
    completion_tokens: usage?.completionTokens ?? 0,
    total_tokens: usage?.totalTokens ?? 0,
  };
}

/** Why the answer ended, in OpenAI's words: tool calls, the model's own reason when OpenAI knows it, else `stop`. */
export function finishReason(result: AnsweredTurn): string {
  if (result.toolCalls?.length) return "tool_calls";
  return result.finishReason === "length" || result.finishReason === "content_filter" ? result.finishReason : "stop";
}

function wireCalls(calls: readonly ToolCall[]): ToolCall[] {
  return calls.map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.function.name, arguments: call.function.arguments },
  }));
}

/** What every completion and chunk starts with. */
export interface Head {
  id: string;
  created: number;
  model: string;
}

/**
 * A whole answer.
 *
 * @example
 * ```ts
 * completionBody({ id: "chatcmpl-1", created: 0, model: "homed" }, { eventId: "1", reply: "Hi", channel: "openai", rounds: 1 });
 * // { id: "chatcmpl-1", object: "chat.completion", …, choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, … }] }
 * ```
 */
export function completionBody(head: Head, result: AnsweredTurn): Record<string, unknown> {
  const calls = result.toolCalls ?? [];
  return {
    id: head.id,
    object: "chat.completion",
    created: head.created,
    model: head.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: calls.length && result.reply === "" ? null : result.reply,
        ...(calls.length ? { tool_calls: wireCalls(calls) } : {}),
      },
      logprobs: null,
      finish_reason: finishReason(result),
    }],
    usage: usageBody(result.usage),
  };
}

/** One chunk of a stream with one choice. */
export function chunkBody(head: Head, delta: Record<string, unknown>, finish: string | null): string {
  return JSON.stringify({
    id: head.id,
    object: "chat.completion.chunk",
    created: head.created,
    model: head.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
}

/** The chunk of a stateless call's tool calls, sent whole once the model has finished. */
export function toolCallsDelta(calls: readonly ToolCall[]): Record<string, unknown> {
  return { tool_calls: wireCalls(calls).map((call, index) => ({ index, ...call })) };
}

/** The last chunk `stream_options.include_usage` asks for: no choices, the usage. */
export function usageChunk(head: Head, usage: TurnUsage | undefined): string {
  return JSON.stringify({
    id: head.id,
    object: "chat.completion.chunk",
    created: head.created,
    model: head.model,
    choices: [],
    usage: usageBody(usage),
  });
}

/** One model of `GET /v1/models`. */
export function modelBody(id: string, created: number): Record<string, unknown> {
  return { id, object: "model", created, owned_by: "homed" };
}
