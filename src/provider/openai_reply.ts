/**
 * Reads a chat completions answer (`POST …/chat/completions`, status 2xx) into a {@link ChatResponse}: one JSON
 * object, or a server-sent-event stream of deltas up to `[DONE]`. What the server sent that homed cannot use
 * becomes a `bad_response` error saying what is wrong; an `error` chunk mid-stream, a retryable server error.
 *
 * @module
 */

import { readSse } from "../net/sse.ts";
import { badResponse, errorDetail, midStreamError } from "./call_errors.ts";
import type { Reply } from "./call_runner.ts";
import type { ChatResponse, ToolCall, Usage } from "./provider.ts";

interface WireToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string | Record<string, unknown> };
}

/**
 * The answer of one chat completions request; streamed when `reply.onDelta` is set. `host` names the server in
 * errors.
 *
 * @example
 * ```ts
 * const response = Response.json({ choices: [{ message: { content: "Hello!" }, finish_reason: "stop" }] });
 * const answer = await readChatCompletion("api.deepseek.com", { response, onDelta: undefined, touch: () => {} });
 * answer.content; // "Hello!"
 * ```
 */
export async function readChatCompletion(host: string, reply: Reply): Promise<ChatResponse> {
  const { response, onDelta, touch } = reply;
  if (!onDelta) {
    const text = await response.text();
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw badResponse(host, `it is not valid JSON (${(error as Error).message}): ${text.slice(0, 120)}`);
    }
    if (raw === null || typeof raw !== "object") throw badResponse(host, "it is not a JSON object");
    return parseCompletion(host, raw as Record<string, unknown>);
  }
  if (!response.body) throw badResponse(host, "the stream has no body");
  return await collectStream(host, chunks(host, response.body), touch, onDelta);
}

/** The JSON chunks of a chat completions stream, up to `[DONE]`; an `error` chunk ends it as a server error. */
async function* chunks(host: string, body: ReadableStream<Uint8Array>): AsyncGenerator<Record<string, unknown>> {
  for await (const event of readSse(body)) {
    if (event.data === "[DONE]") return;
    let chunk: unknown;
    try {
      chunk = JSON.parse(event.data);
    } catch {
      throw badResponse(host, `a streamed chunk is not JSON: ${event.data.slice(0, 120)}`);
    }
    if (chunk === null || typeof chunk !== "object" || Array.isArray(chunk)) {
      throw badResponse(host, `a streamed chunk is not a JSON object: ${event.data.slice(0, 120)}`);
    }
    const failure = (chunk as { error?: unknown }).error;
    if (failure !== undefined && failure !== null) throw midStreamError(host, errorDetail({ error: failure }));
    yield chunk as Record<string, unknown>;
  }
}

function parseCompletion(host: string, raw: Record<string, unknown>): ChatResponse {
  const choices = raw.choices;
  if (!Array.isArray(choices) || choices.length === 0) throw badResponse(host, "it has no choices");
  const choice = choices[0] as Record<string, unknown>;
  const message = choice.message as Record<string, unknown> | undefined;
  if (!message || typeof message !== "object") throw badResponse(host, "choices[0].message is missing");
  const content = message.content;
  if (content !== null && content !== undefined && typeof content !== "string") {
    throw badResponse(host, `choices[0].message.content is ${typeof content}, not text`);
  }
  const rawCalls = message.tool_calls;
  if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls)) {
    throw badResponse(host, "choices[0].message.tool_calls is not a list");
  }
  const toolCalls = ((rawCalls ?? []) as WireToolCall[]).map((call, index) =>
    checkCall(host, call, `choices[0].message.tool_calls[${index}]`)
  );
  const reasoning = message.reasoning_content;
  return {
    content: typeof content === "string" ? content : "",
    toolCalls,
    ...(typeof reasoning === "string" && reasoning !== "" ? { reasoningContent: reasoning } : {}),
    finishReason: typeof choice.finish_reason === "string" ? choice.finish_reason : "stop",
    ...(raw.usage ? { usage: readUsage(raw.usage) } : {}),
  };
}

function checkCall(host: string, call: WireToolCall, where: string): ToolCall {
  if (typeof call?.id !== "string" || call.id === "") throw badResponse(host, `${where}.id is missing`);
  const name = call.function?.name;
  if (typeof name !== "string" || name === "") throw badResponse(host, `${where}.function.name is missing`);
  const args = call.function?.arguments;
  return {
    id: call.id,
    type: "function",
    function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) },
  };
}

async function collectStream(
  host: string,
  stream: AsyncIterable<Record<string, unknown>>,
  touch: () => void,
  onDelta: (text: string) => void,
): Promise<ChatResponse> {
  let content = "";
  let reasoning = "";
  let finishReason = "";
  let usage: Usage | undefined;
  let sawChoice = false;
  const calls = new Map<number, WireToolCall & { function: { name: string; arguments: string } }>();
  for await (const chunk of stream) {
    touch();
    if (chunk.usage) usage = readUsage(chunk.usage);
    const choice = (chunk.choices as Array<Record<string, unknown>> | undefined)?.[0];
    if (!choice) continue;
    sawChoice = true;
    const delta = (choice.delta ?? {}) as Record<string, unknown>;
    if (typeof delta.reasoning_content === "string") reasoning += delta.reasoning_content;
    if (typeof delta.content === "string" && delta.content !== "") {
      content += delta.content;
      onDelta(delta.content);
    }
    // Tool calls arrive in pieces keyed by index: the name and the arguments text are concatenated.
    for (const part of (delta.tool_calls ?? []) as WireToolCall[]) {
      const index = part.index ?? calls.size;
      const slot = calls.get(index) ?? { index, function: { name: "", arguments: "" } };
      if (part.id) slot.id = part.id;
      if (part.function?.name) slot.function.name += part.function.name;
      if (typeof part.function?.arguments === "string") slot.function.arguments += part.function.arguments;
      calls.set(index, slot);
    }
    if (typeof choice.finish_reason === "string") finishReason = choice.finish_reason;
  }
  if (!sawChoice) throw badResponse(host, "the stream ended without any choice");
  const toolCalls = [...calls.values()].sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
    .map((call) => checkCall(host, call, `streamed tool_calls[${call.index}]`));
  return {
    content,
    toolCalls,
    ...(reasoning ? { reasoningContent: reasoning } : {}),
    finishReason: finishReason || "stop",
    ...(usage ? { usage } : {}),
  };
}

function readUsage(raw: unknown): Usage {
  const usage = raw as Record<string, unknown>;
  const number = (value: unknown) => typeof value === "number" && Number.isFinite(value) ? value : 0;
  return {
    promptTokens: number(usage.prompt_tokens),
    completionTokens: number(usage.completion_tokens),
    totalTokens: number(usage.total_tokens),
    cacheHitTokens: number(usage.prompt_cache_hit_tokens),
    cacheMissTokens: number(usage.prompt_cache_miss_tokens),
  };
}
