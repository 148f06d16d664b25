/**
 * The Provider interface: every LLM call in homed goes through it. Messages use the OpenAI chat wire format,
 * which is what every supported server speaks.
 *
 * @module
 */

import type { ToolSpec } from "../tools/tool.ts";

/** A function call the model asked for. */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** One message of the conversation sent to the LLM. */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[]; reasoning_content?: string }
  | { role: "tool"; tool_call_id: string; content: string };

/** A request; model, temperature and limits come from the provider's config. */
export interface ChatRequest {
  messages: ChatMessage[];
  /** Tools offered this round; none (or empty) for a round that must answer in text. */
  tools?: ToolSpec[];
  /**
   * Images for a main model that sees (`vision.direct`): sent as image parts of the request's last user message
   * (the turn's own), this request only — the history keeps that message's text.
   */
  images?: readonly ChatImage[];
  /**
   * The answer's shape, as OpenAI's `response_format` (JSON, or JSON after a schema). A provider that cannot send it
   * leaves {@link ChatResponse.responseFormatSent} unset, so the caller can refuse an answer not made to it.
   */
  responseFormat?: ResponseFormat;
}

/** OpenAI's `response_format` beyond plain text: any JSON object, or JSON after the named schema. */
export type ResponseFormat =
  | { type: "json_object" }
  | {
    type: "json_schema";
    json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean };
  };

/** An image for the model: its bytes and their (sniffed) MIME type. */
export interface ChatImage {
  mime: string;
  bytes: Uint8Array;
}

/** Token counts of one response. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** DeepSeek's `prompt_cache_hit_tokens`: prompt tokens served from its prefix cache (0 when not reported). */
  cacheHitTokens: number;
  /** DeepSeek's `prompt_cache_miss_tokens` (0 when not reported). */
  cacheMissTokens: number;
}

/** The model's answer. */
export interface ChatResponse {
  content: string;
  toolCalls: ToolCall[];
  /** DeepSeek's thinking text, kept for tool-call turns when thinking is on. */
  reasoningContent?: string;
  finishReason: string;
  usage?: Usage;
  /** The request's `responseFormat` went to the model with it (unset when none was asked for, or it could not be). */
  responseFormatSent?: boolean;
}

/** Per-call options. */
export interface ChatOptions {
  signal?: AbortSignal;
  /** When given, the answer is streamed and each piece of text is passed here as it arrives. */
  onDelta?: (text: string) => void;
  /**
   * Another provider stands behind this one (the {@link Provider} chain sets it): a timeout fails at once instead of
   * being retried, and so does a server asking to wait longer than the longest backoff (8 s) — the next provider
   * answers sooner. Refused connections and 5xx keep their quick retries.
   */
  failFast?: boolean;
}

/** Running totals, for `/api/status`. */
export interface UsageTotals extends Usage {
  requests: number;
  retries: number;
  errors: number;
}

/**
 * Totals before the first request.
 *
 * @example
 * ```ts
 * const totals = emptyUsageTotals(); // { requests: 0, retries: 0, …, cacheMissTokens: 0 }
 * ```
 */
export function emptyUsageTotals(): UsageTotals {
  return {
    requests: 0,
    retries: 0,
    errors: 0,
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    cacheHitTokens: 0,
    cacheMissTokens: 0,
  };
}

/** An LLM backend. */
export interface Provider {
  readonly model: string;
  /**
   * Sends one request.
   *
   * @throws {ProviderError} with a message that says what went wrong and what to do
   */
  chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse>;
  usage(): UsageTotals;
  /**
   * Checks, cheaply, whether the server answers again (a provider whose circuit breaker is open is probed in the
   * background); resolves when it does. Without it a minimal chat is the probe.
   *
   * @throws {ProviderError} saying why it does not answer
   */
  probe?(signal: AbortSignal): Promise<void>;
}
