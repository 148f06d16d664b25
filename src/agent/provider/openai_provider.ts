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
import type { Clock } from "../../clock.ts";
import type { ToolSpec } from "../../tools/tool.ts";
import {
  type ChatMessage,
  type ChatOptions,
  type ChatRequest,
  type ChatResponse,
  emptyUsageTotals,
  type Provider,
  type ToolCall,
  type Usage,
  type UsageTotals,
} from "./provider.ts";
import { readSse } from "../../net/sse.ts";
import { ProviderError } from "./provider_error.ts";
import { parseRetryAfter, withRetry } from "./retry.ts";

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

/**
 * Aborts when nothing arrived for `ms` on the injected clock. `touch()` only records the time (it runs on every
 * streamed chunk); the one timer re-arms itself for the remainder when it fires early.
 */
class IdleTimeout {
  readonly controller = new AbortController();
  fired = false;
  #cancel: () => void = () => {};
  #last: number;

  constructor(private readonly ms: number, private readonly clock: Clock) {
    this.#last = clock.monotonic();
    this.#arm(ms);
  }

  #arm(delay: number): void {
    this.#cancel = this.clock.after(delay, () => {
      const idle = this.clock.monotonic() - this.#last;
      if (idle < this.ms) return this.#arm(this.ms - idle);
      this.fired = true;
      this.controller.abort(new Error("timeout"));
    });
  }

  touch(): void {
    this.#last = this.clock.monotonic();
  }

  clear(): void {
    this.#cancel();
  }
}

/** Talks to `${base_url}/chat/completions`. */
export class OpenAIProvider implements Provider {
  readonly model: string;
  #options: OpenAIProviderOptions;
  #endpoint: string;
  #totals: UsageTotals = emptyUsageTotals();
  #host: string;

  /**
   * @example
   * ```ts
   * const provider = new OpenAIProvider({ model: "deepseek-v4-flash", baseUrl: "https://api.deepseek.com/v1", … });
   * const answer = await provider.chat({ messages: [{ role: "user", content: "hi" }] });
   * ```
   */
  constructor(options: OpenAIProviderOptions) {
    this.model = options.model;
    this.#options = options;
    this.#host = new URL(options.baseUrl).host;
    this.#endpoint = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  }

  /** Running token and request totals. */
  usage(): UsageTotals {
    return { ...this.#totals };
  }

  /** Sends one request, streamed when `options.onDelta` is given. */
  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    if (this.#options.apiKey === "") {
      this.#totals.errors++;
      throw new ProviderError("no_api_key", this.#options.missingKeyHint);
    }
    let emitted = false;
    const onDelta = options.onDelta
      ? (text: string) => {
        emitted = true;
        options.onDelta!(text);
      }
      : undefined;
    const started = this.#options.clock.monotonic();
    try {
      const response = await withRetry(async () => {
        this.#totals.requests++;
        try {
          return await this.#once(request, options.signal, onDelta);
        } catch (error) {
          const mapped = this.#mapError(error, options.signal);
          // Text already shown to the user cannot be taken back, so a stream that failed midway is not retried.
          if (emitted && mapped.retryable) {
            throw new ProviderError(mapped.code, `${mapped.message} (the answer was cut off midway)`, {
              ...(mapped.status === undefined ? {} : { status: mapped.status }),
              cause: error,
            });
          }
          throw mapped;
        }
      }, {
        maxRetries: this.#options.maxRetries,
        clock: this.#options.clock,
        random: this.#options.random,
        signal: options.signal,
        onRetry: (error, attempt, delayMs) => {
          this.#totals.retries++;
          this.#options.logger.warning("LLM call failed ({code}), retry {attempt} in {delayMs} ms", {
            code: error.code,
            attempt,
            delayMs,
          });
        },
      });
      if (response.usage) this.#count(response.usage);
      this.#options.logger.debug("LLM answered in {ms} ms: {tools} tool calls, {tokens} tokens", {
        ms: Math.round(this.#options.clock.monotonic() - started),
        tools: response.toolCalls.length,
        tokens: response.usage?.totalTokens ?? 0,
      });
      return response;
    } catch (error) {
      this.#totals.errors++;
      if (error instanceof ProviderError) throw error;
      throw this.#mapError(error, options.signal);
    }
  }

  #count(usage: Usage): void {
    this.#totals.promptTokens += usage.promptTokens;
    this.#totals.completionTokens += usage.completionTokens;
    this.#totals.totalTokens += usage.totalTokens;
    this.#totals.cacheHitTokens += usage.cacheHitTokens;
    this.#totals.cacheMissTokens += usage.cacheMissTokens;
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

  /** POSTs the request; a status other than 2xx becomes the matching {@link ProviderError}. */
  async #post(body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
    const response = await fetch(this.#endpoint, {
      method: "POST",
      headers: {
        "authorization": `Bearer ${this.#options.apiKey}`,
        "content-type": "application/json",
        "accept": body.stream ? "text/event-stream" : "application/json",
      },
      body: JSON.stringify(body),
      signal,
    });
    if (response.ok) return response;
    const text = await response.text().catch(() => "");
    throw this.#httpError(response.status, response.headers, text);
  }

  async #once(
    request: ChatRequest,
    signal: AbortSignal | undefined,
    onDelta: ((text: string) => void) | undefined,
  ): Promise<ChatResponse> {
    const idle = new IdleTimeout(this.#options.timeoutMs, this.#options.clock);
    const combined = signal ? AbortSignal.any([signal, idle.controller.signal]) : idle.controller.signal;
    try {
      const response = await this.#post(this.#body(request, onDelta !== undefined), combined);
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
      const collected = await this.#collectStream(this.#chunks(response.body), idle, onDelta);
      // A cut-off stream is never a complete answer.
      if (combined.aborted) throw combined.reason;
      return collected;
    } catch (error) {
      if (idle.fired) {
        throw new ProviderError(
          "timeout",
          `The LLM server at ${this.#host} did not answer within ${Math.round(this.#options.timeoutMs / 1000)}s`,
          { retryable: true, cause: error },
        );
      }
      throw error;
    } finally {
      idle.clear();
    }
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
          `The LLM server at ${this.#host} failed midway through the answer: ${detailOf({ error: failure })}`,
          { retryable: true },
        );
      }
      yield chunk as Record<string, unknown>;
    }
  }

  #badResponse(detail: string): ProviderError {
    return new ProviderError(
      "bad_response",
      `The LLM server at ${this.#host} sent an answer homed cannot use: ${detail}`,
    );
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

  /** An answer with an HTTP error status, as the error vocabulary names it. */
  #httpError(status: number, headers: Headers, text: string): ProviderError {
    const host = this.#host;
    let detail = text.trim().slice(0, 300) || "no detail";
    try {
      detail = detailOf(JSON.parse(text)) ?? detail;
    } catch { /* not JSON: the text itself */ }
    const retryAfterMs = parseRetryAfter(headers, this.#options.clock.now());
    const extra = { status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    if (status === 401 || status === 403) {
      return new ProviderError(
        "auth",
        `The LLM server at ${host} refused the API key (HTTP ${status}: ${detail}); check llm.api_key`,
        extra,
      );
    }
    if (status === 429) {
      return new ProviderError("rate_limited", `The LLM server at ${host} is rate limiting (HTTP 429: ${detail})`, {
        ...extra,
        retryable: true,
      });
    }
    if (status >= 500) {
      return new ProviderError("server", `The LLM server at ${host} failed (HTTP ${status}: ${detail})`, {
        ...extra,
        retryable: true,
      });
    }
    return new ProviderError(
      "bad_request",
      `The LLM server at ${host} rejected the request (HTTP ${status}: ${detail})`,
      extra,
    );
  }

  #mapError(error: unknown, signal: AbortSignal | undefined): ProviderError {
    if (error instanceof ProviderError) return error;
    const host = this.#host;
    if (signal?.aborted) return new ProviderError("cancelled", "The LLM call was cancelled", { cause: error });
    if (error instanceof SyntaxError) return this.#badResponse(`it is not valid JSON (${error.message})`);
    // fetch rejects with a TypeError when the server cannot be reached or the connection breaks.
    const cause = (error as Error)?.cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : "";
    return new ProviderError(
      "network",
      `Cannot reach the LLM server at ${host}: ${(error as Error)?.message ?? String(error)}${cause}`,
      { retryable: true, cause: error },
    );
  }
}

/** The server's own words from an error body (`{"error": {"message": …}}`, `{"error": "…"}`, `{"message": …}`). */
function detailOf(body: unknown): string | undefined {
  const record = body as { error?: unknown; message?: unknown } | null;
  if (!record || typeof record !== "object") return undefined;
  const error = record.error as { message?: unknown } | string | undefined;
  if (typeof error === "string" && error !== "") return error;
  if (error && typeof error === "object" && typeof error.message === "string") return error.message;
  if (typeof record.message === "string") return record.message;
  return undefined;
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
