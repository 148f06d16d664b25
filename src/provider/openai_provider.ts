/**
 * The OpenAI-compatible provider (DeepSeek, Ollama, vLLM, llama.cpp server …): `POST {base_url}/chat/completions`
 * over `fetch`, JSON or a server-sent-event stream.
 *
 * No SDK: the chat completions wire is one request shape and two answer shapes, and `npm:openai` cost ≈ 12 MB of
 * resident memory and ≈ 50 ms of start-up on a machine whose whole budget is 64 MB. Retries are homed's
 * ({@link withRetry}). The API key goes into the `Authorization` header and nowhere else: it is never logged and
 * never part of an error message.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { ToolSpec } from "../tools/tool.ts";
import type {
  ChatMessage,
  ChatOptions,
  ChatRequest,
  ChatResponse,
  Provider,
  ToolCall,
  Usage,
  UsageTotals,
} from "./provider.ts";
import { readSse } from "../net/sse.ts";
import { type Attempt, CallRunner, errorDetail, type IdleTimeout, postJson } from "./call_runner.ts";
import { ProviderError } from "./provider_error.ts";

/** Options of {@link OpenAIProvider}. */
export interface OpenAIProviderOptions {
  model: string;
  baseUrl: string;
  /** Empty means not set: every call then fails with `no_api_key` and {@link OpenAIProviderOptions.missingKeyHint}. */
  apiKey: string;
  temperature: number;
  maxTokens: number;
  /** `false` sends `thinking: {type: "disabled"}`, `true` enables it, `"omit"` sends nothing. */
  thinking: boolean | "omit";
  /** Idle timeout: longest wait for the answer's headers, and between two streamed chunks (`llm.timeout`). */
  timeoutMs: number;
  maxRetries: number;
  clock: Clock;
  random: () => number;
  logger: Logger;
  /** What to tell the user when no key is set. */
  missingKeyHint: string;
}

interface WireToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string | Record<string, unknown> };
}

/** Talks to `${base_url}/chat/completions`. */
export class OpenAIProvider implements Provider {
  readonly model: string;
  #options: OpenAIProviderOptions;
  #endpoint: string;
  #runner: CallRunner;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   *
   * const provider = new OpenAIProvider({
   *   model: "deepseek-v4-flash",
   *   baseUrl: "https://api.deepseek.com/v1",
   *   apiKey: Deno.env.get("DEEPSEEK_API_KEY") ?? "",
   *   temperature: 0.7,
   *   maxTokens: 4096,
   *   thinking: false,
   *   timeoutMs: 30_000,
   *   maxRetries: 2,
   *   clock: systemClock,
   *   random: Math.random,
   *   logger: log("llm"),
   *   missingKeyHint: "No LLM API key is set: set the DEEPSEEK_API_KEY environment variable",
   * });
   * const answer = await provider.chat({ messages: [{ role: "user", content: "hi" }] });
   * answer.content; // "Hello! How can I help you today?"
   * ```
   */
  constructor(options: OpenAIProviderOptions) {
    this.model = options.model;
    this.#options = options;
    this.#runner = new CallRunner({ ...options, host: new URL(options.baseUrl).host });
    this.#endpoint = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  }

  /** Running token and request totals. */
  usage(): UsageTotals {
    return this.#runner.usage();
  }

  /** Sends one request, streamed when `options.onDelta` is given. */
  chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    if (this.#options.apiKey === "") {
      return Promise.reject(this.#runner.refuseError(new ProviderError("no_api_key", this.#options.missingKeyHint)));
    }
    return this.#runner.run(options, (attempt) => this.#once(request, attempt));
  }

  #body(request: ChatRequest, stream: boolean): Record<string, unknown> {
    const thinking = this.#options.thinking;
    const body: Record<string, unknown> = {
      model: this.#options.model,
      messages: request.messages.map((message) => this.#wireMessage(message)),
      temperature: this.#options.temperature,
      max_tokens: this.#options.maxTokens,
    };
    if (request.tools?.length) body.tools = request.tools.map(wireTool);
    if (thinking !== "omit") body.thinking = { type: thinking ? "enabled" : "disabled" };
    if (stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return body;
  }

  #wireMessage(message: ChatMessage): ChatMessage {
    if (message.role !== "assistant" || message.reasoning_content === undefined) return message;
    // DeepSeek wants reasoning_content back only inside a tool-call exchange, and only with thinking on.
    if (this.#options.thinking === true && message.tool_calls?.length) return message;
    const { reasoning_content: _dropped, ...rest } = message;
    return rest;
  }

  async #once(request: ChatRequest, attempt: Attempt): Promise<ChatResponse> {
    const { signal, idle, onDelta } = attempt;
    const body = this.#body(request, onDelta !== undefined);
    const response = await postJson(
      this.#runner,
      this.#endpoint,
      {
        "authorization": `Bearer ${this.#options.apiKey}`,
        "accept": onDelta ? "text/event-stream" : "application/json",
      },
      JSON.stringify(body),
      signal,
    );
    if (!onDelta) {
      // The idle timeout covers the wait for the headers; a long answer's body is bounded by the turn deadline.
      idle.clear();
      const text = await response.text();
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (error) {
        throw this.#badResponse(`it is not valid JSON (${(error as Error).message}): ${text.slice(0, 120)}`);
      }
      if (raw === null || typeof raw !== "object") throw this.#badResponse("it is not a JSON object");
      return this.#parseCompletion(raw as Record<string, unknown>);
    }
    if (!response.body) throw this.#badResponse("the stream has no body");
    return await this.#collectStream(this.#chunks(response.body), idle, onDelta);
  }

  /** The JSON chunks of a chat completions stream, up to `[DONE]`; an `error` chunk ends it as a server error. */
  async *#chunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Record<string, unknown>> {
    for await (const event of readSse(body)) {
      if (event.data === "[DONE]") return;
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        throw this.#badResponse(`a streamed chunk is not JSON: ${event.data.slice(0, 120)}`);
      }
      if (chunk === null || typeof chunk !== "object" || Array.isArray(chunk)) {
        throw this.#badResponse(`a streamed chunk is not a JSON object: ${event.data.slice(0, 120)}`);
      }
      const failure = (chunk as { error?: unknown }).error;
      if (failure !== undefined && failure !== null) {
        throw new ProviderError(
          "server",
          `The LLM server at ${this.#runner.host} failed midway through the answer: ${errorDetail({ error: failure })}`,
          { retryable: true },
        );
      }
      yield chunk as Record<string, unknown>;
    }
  }

  #badResponse(detail: string): ProviderError {
    return this.#runner.badResponse(detail);
  }

  #parseCompletion(raw: Record<string, unknown>): ChatResponse {
    const choices = raw.choices;
    if (!Array.isArray(choices) || choices.length === 0) throw this.#badResponse("it has no choices");
    const choice = choices[0] as Record<string, unknown>;
    const message = choice.message as Record<string, unknown> | undefined;
    if (!message || typeof message !== "object") throw this.#badResponse("choices[0].message is missing");
    const content = message.content;
    if (content !== null && content !== undefined && typeof content !== "string") {
      throw this.#badResponse(`choices[0].message.content is ${typeof content}, not text`);
    }
    const rawCalls = message.tool_calls;
    if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls)) {
      throw this.#badResponse("choices[0].message.tool_calls is not a list");
    }
    const toolCalls = ((rawCalls ?? []) as WireToolCall[]).map((call, index) =>
      this.#checkCall(call, `choices[0].message.tool_calls[${index}]`)
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

  #checkCall(call: WireToolCall, where: string): ToolCall {
    if (typeof call?.id !== "string" || call.id === "") throw this.#badResponse(`${where}.id is missing`);
    const name = call.function?.name;
    if (typeof name !== "string" || name === "") throw this.#badResponse(`${where}.function.name is missing`);
    const args = call.function?.arguments;
    return {
      id: call.id,
      type: "function",
      function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) },
    };
  }

  async #collectStream(
    stream: AsyncIterable<Record<string, unknown>>,
    idle: IdleTimeout,
    onDelta: (text: string) => void,
  ): Promise<ChatResponse> {
    let content = "";
    let reasoning = "";
    let finishReason = "";
    let usage: Usage | undefined;
    let sawChoice = false;
    const calls = new Map<number, WireToolCall & { function: { name: string; arguments: string } }>();
    for await (const chunk of stream) {
      idle.touch();
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
    if (!sawChoice) throw this.#badResponse("the stream ended without any choice");
    const toolCalls = [...calls.values()].sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
      .map((call) => this.#checkCall(call, `streamed tool_calls[${call.index}]`));
    return {
      content,
      toolCalls,
      ...(reasoning ? { reasoningContent: reasoning } : {}),
      finishReason: finishReason || "stop",
      ...(usage ? { usage } : {}),
    };
  }
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

function wireTool(spec: ToolSpec): Record<string, unknown> {
  return {
    type: "function",
    function: { name: spec.name, description: spec.description, parameters: spec.parameters },
  };
}
