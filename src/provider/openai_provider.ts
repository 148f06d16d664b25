/**
 * The OpenAI-compatible provider (DeepSeek, Ollama, vLLM, llama.cpp server …): `POST {base_url}/chat/completions`
 * over `fetch`, JSON or a server-sent-event stream.
 *
 * No SDK: the chat completions wire is one request shape and two answer shapes, and `npm:openai` cost ≈ 12 MB of
 * resident memory and ≈ 50 ms of start-up on a machine whose whole budget is 64 MB. This file builds the request;
 * `openai_reply.ts` reads the answer; the exchange between — idle timeout, homed's retries, the error vocabulary — is
 * {@link CallRunner}'s. The API key goes into the `Authorization` header and nowhere else: it is never logged and
 * never part of an error message.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { ToolSpec } from "../tools/tool.ts";
import type {
  ChatImage,
  ChatMessage,
  ChatOptions,
  ChatRequest,
  ChatResponse,
  Provider,
  UsageTotals,
} from "./provider.ts";
import { encodeBase64 } from "../text/base64.ts";
import { CallRunner } from "./call_runner.ts";
import { readChatCompletion } from "./openai_reply.ts";
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
  /**
   * `true`: an empty key sends no `Authorization` header (a local server that needs none — a fallback's default)
   * instead of failing with `no_api_key`.
   */
  keyOptional?: boolean;
  /** The config key of the API key, named when the server refuses it (default `llm.api_key`). */
  keyName?: string;
}

/** Talks to `${base_url}/chat/completions`. */
export class OpenAIProvider implements Provider {
  readonly model: string;
  #options: OpenAIProviderOptions;
  #base: string;
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
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#endpoint = `${this.#base}/chat/completions`;
  }

  /** Running token and request totals. */
  usage(): UsageTotals {
    return this.#runner.usage();
  }

  /** Sends one request, streamed when `options.onDelta` is given. */
  chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    if (this.#keyMissing()) {
      return Promise.reject(this.#runner.refuseError(new ProviderError("no_api_key", this.#options.missingKeyHint)));
    }
    const stream = options.onDelta !== undefined;
    const host = this.#runner.host;
    return this.#runner.exchange(
      {
        url: this.#endpoint,
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...this.#authorization(),
          "accept": stream ? "text/event-stream" : "application/json",
        },
        body: JSON.stringify(this.#body(request, stream)),
      },
      options,
      async (reply) => {
        const response = await readChatCompletion(host, reply);
        return request.responseFormat ? { ...response, responseFormatSent: true } : response;
      },
    );
  }

  /**
   * Whether the server answers: `GET {base_url}/models` with the key, 2xx is up; a failure is the same
   * {@link ProviderError} a chat would get (`auth` for a refused key, `network`, `server`, `timeout` …).
   *
   * @example
   * ```ts
   * declare const provider: OpenAIProvider;
   * await provider.probe(AbortSignal.timeout(30_000)); // resolves while the server is up
   * ```
   */
  async probe(signal: AbortSignal): Promise<void> {
    if (this.#keyMissing()) throw new ProviderError("no_api_key", this.#options.missingKeyHint);
    await this.#runner.check(
      { url: `${this.#base}/models`, method: "GET", headers: { accept: "application/json", ...this.#authorization() } },
      signal,
    );
  }

  #keyMissing(): boolean {
    return this.#options.apiKey === "" && this.#options.keyOptional !== true;
  }

  #authorization(): Record<string, string> {
    return this.#options.apiKey === "" ? {} : { authorization: `Bearer ${this.#options.apiKey}` };
  }

  #body(request: ChatRequest, stream: boolean): Record<string, unknown> {
    const thinking = this.#options.thinking;
    const body: Record<string, unknown> = {
      model: this.#options.model,
      messages: withImages(request.messages.map((message) => this.#wireMessage(message)), request.images ?? []),
      temperature: this.#options.temperature,
      max_tokens: this.#options.maxTokens,
    };
    if (request.tools?.length) body.tools = request.tools.map(wireTool);
    if (request.responseFormat) body.response_format = request.responseFormat;
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
}

function wireTool(spec: ToolSpec): Record<string, unknown> {
  return {
    type: "function",
    function: { name: spec.name, description: spec.description, parameters: spec.parameters },
  };
}

/**
 * The messages with `images` as `image_url` parts of the last user message, as `data:` URLs of their bytes (a remote
 * API cannot reach a URL on the household's LAN).
 */
function withImages(messages: ChatMessage[], images: readonly ChatImage[]): unknown[] {
  if (images.length === 0) return messages;
  const last = messages.findLastIndex((message) => message.role === "user");
  if (last === -1) return messages;
  const user = messages[last]!;
  const parts = [
    { type: "text", text: user.content },
    ...images.map((image) => ({
      type: "image_url",
      image_url: { url: `data:${image.mime};base64,${encodeBase64(image.bytes)}` },
    })),
  ];
  return messages.map((message, index) => index === last ? { role: "user", content: parts } : message);
}
