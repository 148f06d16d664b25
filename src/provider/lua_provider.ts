/**
 * The LuaAdapter provider (`llm.provider: lua`, `llm.adapter: <file>`): a Lua script translates between homed's
 * chat request (the OpenAI chat-completions shape) and an LLM API that speaks something else. The script builds the
 * request once per call and reads each answer; homed performs the HTTP and keeps the retry policy, the deadlines and
 * the error vocabulary ({@link CallRunner}).
 *
 * The adapter contract (all values cross as JSON text; see `config/adapters/*.lua` and DESIGN.md):
 * - `build_request(request)` → `{url, method, headers, body}`; `request` is `{model, base_url, api_key, temperature,
 *   max_tokens, stream, messages, tools}` with `messages` in the chat-completions shape and `tools` as
 *   `{name, description, parameters}`. The url must be on `llm.base_url`'s host.
 * - `parse_response(status, body)` → `{content, tool_calls = [{id?, name, arguments}], finish_reason, usage =
 *   {prompt_tokens, completion_tokens, cache_read_tokens?}}`; `arguments` is a JSON text or an object.
 * - Streaming, optional: `stream_format = "ndjson" | "sse"`, `stream_event(id, event, data)` → `{delta?, error?}`
 *   per line or event, and `stream_end(id)` → the same shape as `parse_response`. Without them homed asks the
 *   adapter for whole answers only.
 * A script error or a malformed return value fails the call with code `adapter`, naming the script and line; the
 * daemon keeps serving.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { basename } from "node:path";
import type { Clock } from "../clock.ts";
import { LuaError } from "../lua/lua_error.ts";
import { type LuaLimits, LuaVm } from "../lua/vm.ts";
import { readSse } from "../net/sse.ts";
import type { ToolSpec } from "../tools/tool.ts";
import { badResponse, callError, midStreamError } from "./call_errors.ts";
import { CallRunner, type HttpRequest, type Reply } from "./call_runner.ts";
import { readLines } from "./ndjson_lines.ts";
import type { ChatOptions, ChatRequest, ChatResponse, Provider, ToolCall, UsageTotals } from "./provider.ts";
import { ProviderError } from "./provider_error.ts";
import { BUILTIN_PREFIX, builtinAdapter } from "../config/builtin_adapters.ts";

/** Options of {@link LuaProvider.open}. */
export interface LuaProviderOptions {
  /** The adapter script's path (`llm.adapter`). */
  adapter: string;
  /** The config key naming the adapter, in load errors (default `llm.adapter`). */
  adapterKey?: string;
  /** The config key of the API key, named when the server refuses it (default `llm.api_key`). */
  keyName?: string;
  model: string;
  baseUrl: string;
  apiKey: string;
  temperature: number;
  maxTokens: number;
  timeoutMs: number;
  maxRetries: number;
  limits: LuaLimits;
  clock: Clock;
  random: () => number;
  logger: Logger;
}

/** The adapter's answer, as checked. */
interface AdapterAnswer {
  content?: unknown;
  tool_calls?: unknown;
  finish_reason?: unknown;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; cache_read_tokens?: unknown };
}

const FUNCTIONS = ["build_request", "parse_response"] as const;

/** The provider. */
export class LuaProvider implements Provider {
  readonly model: string;
  #options: LuaProviderOptions;
  #vm: LuaVm;
  #runner: CallRunner;
  /** The probe's: one attempt, no retries (the breaker probes again later), not in the usage totals. */
  #probeRunner: CallRunner;
  #script: string;
  #host: string;
  #streamFormat: "ndjson" | "sse" | undefined;
  #streams = 0;

  private constructor(vm: LuaVm, options: LuaProviderOptions, streamFormat: "ndjson" | "sse" | undefined) {
    this.model = options.model;
    this.#options = options;
    this.#vm = vm;
    this.#script = vm.name;
    this.#host = new URL(options.baseUrl).host;
    this.#runner = new CallRunner({ ...options, host: this.#host });
    this.#probeRunner = new CallRunner({ ...options, host: this.#host, maxRetries: 0 });
    this.#streamFormat = streamFormat;
  }

  /**
   * Loads the adapter. A script that does not compile, lacks `build_request`/`parse_response`, or names an unknown
   * `stream_format` fails with an error naming the file (and line).
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   *
   * const provider = await LuaProvider.open({
   *   adapter: "config/adapters/ollama.lua",
   *   model: "qwen3:8b",
   *   baseUrl: "http://127.0.0.1:11434",
   *   apiKey: "",
   *   temperature: 0.7,
   *   maxTokens: 4096,
   *   timeoutMs: 30_000,
   *   maxRetries: 2,
   *   limits: { timeMs: 1_000, memoryBytes: 16_777_216 },
   *   clock: systemClock,
   *   random: Math.random,
   *   logger: log("llm"),
   * });
   * provider.streams; // true: ollama.lua sets stream_format = "ndjson"
   * ```
   */
  static async open(options: LuaProviderOptions): Promise<LuaProvider> {
    const key = options.adapterKey ?? "llm.adapter";
    let source = builtinAdapter(options.adapter);
    if (source === undefined) {
      try {
        source = await Deno.readTextFile(options.adapter);
      } catch (error) {
        throw new Error(`${key}: cannot read ${options.adapter}: ${(error as Error).message}`, { cause: error });
      }
    }
    const name = options.adapter.startsWith(BUILTIN_PREFIX) ? `${options.adapter}.lua` : basename(options.adapter);
    const vm = await LuaVm.open({
      name,
      source,
      limits: options.limits,
      grants: { json: true },
      logger: options.logger,
    });
    try {
      for (const fn of FUNCTIONS) {
        if (!vm.has(fn)) throw new Error(`${key}: ${options.adapter} defines no ${fn}() (an adapter needs both)`);
      }
      const format = vm.read("stream_format");
      if (format !== undefined && format !== "ndjson" && format !== "sse") {
        throw new Error(
          `${key}: ${options.adapter} sets stream_format to ${JSON.stringify(format)}; allowed: "ndjson" or "sse"`,
        );
      }
      const streams = format !== undefined && vm.has("stream_event") && vm.has("stream_end");
      return new LuaProvider(vm, options, streams ? format as "ndjson" | "sse" : undefined);
    } catch (error) {
      vm.close();
      throw error;
    }
  }

  /** Running token and request totals. */
  usage(): UsageTotals {
    return this.#runner.usage();
  }

  /** Whether this adapter streams (it defines `stream_format`, `stream_event` and `stream_end`). */
  get streams(): boolean {
    return this.#streamFormat !== undefined;
  }

  /** Sends one request through the adapter; streamed when `options.onDelta` is given and the adapter streams. */
  chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    return this.#chat(this.#runner, request, options);
  }

  async #chat(runner: CallRunner, request: ChatRequest, options: ChatOptions): Promise<ChatResponse> {
    // An adapter that does not stream answers whole; the text then arrives in one piece with the reply.
    const { onDelta: _whole, ...unstreamed } = options;
    const effective: ChatOptions = this.streams ? options : unstreamed;
    let http: HttpRequest;
    try {
      http = await this.#request(request, effective.onDelta !== undefined);
    } catch (error) {
      // Nothing was sent: like a missing key, the call is refused (and a broken contract is not worth a retry).
      throw runner.refuseError(callError(this.#host, error, effective.signal));
    }
    return await runner.exchange(http, effective, (reply) => this.#read(reply));
  }

  /**
   * Whether the API answers: a one-message chat through the adapter (an adapter knows no cheaper request), one
   * attempt, not counted in the usage totals.
   *
   * @example
   * ```ts
   * declare const provider: LuaProvider;
   * await provider.probe(AbortSignal.timeout(30_000)); // resolves while the API answers
   * ```
   */
  async probe(signal: AbortSignal): Promise<void> {
    await this.#chat(this.#probeRunner, { messages: [{ role: "user", content: "ping" }] }, { signal });
  }

  /** Frees the adapter's VM. */
  close(): void {
    this.#vm.close();
  }

  async #adapter(fn: string, ...args: Array<string | number>): Promise<Record<string, unknown>> {
    let raw: unknown;
    try {
      raw = await this.#vm.call(fn, ...args);
    } catch (error) {
      if (error instanceof LuaError) {
        throw new ProviderError("adapter", `The LLM adapter ${this.#script} failed in ${fn}(): ${error.message}`, {
          cause: error,
        });
      }
      throw error;
    }
    if (typeof raw !== "string") {
      throw this.#contract(
        fn,
        `it returned ${raw === undefined || raw === null ? "nothing" : typeof raw}, not a json.encode(...) text`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw this.#contract(fn, `it returned text that is not JSON: ${raw.slice(0, 80)}`);
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw this.#contract(fn, `it returned ${raw.slice(0, 80)}, not an object`);
    }
    return value as Record<string, unknown>;
  }

  #contract(fn: string, detail: string): ProviderError {
    return new ProviderError("adapter", `The LLM adapter ${this.#script} broke its contract in ${fn}(): ${detail}`);
  }

  /** The adapter's `build_request`, checked: a URL on `llm.base_url`'s host, string headers, a text body. */
  async #request(request: ChatRequest, stream: boolean): Promise<HttpRequest> {
    const spec = await this.#adapter("build_request", JSON.stringify(this.#wireRequest(request, stream)));
    const { url, method = "POST", headers = {}, body } = spec;
    if (typeof url !== "string") throw this.#contract("build_request", "url is missing or not a string");
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw this.#contract("build_request", `url ${JSON.stringify(url)} is not a URL`);
    }
    if (target.host !== this.#host) {
      throw this.#contract("build_request", `url ${url} is not on llm.base_url's host ${this.#host}`);
    }
    if (typeof method !== "string") throw this.#contract("build_request", "method is not a string");
    if (headers === null || typeof headers !== "object" || Object.values(headers).some((v) => typeof v !== "string")) {
      throw this.#contract("build_request", "headers is not an object of strings");
    }
    if (body !== undefined && typeof body !== "string") {
      throw this.#contract("build_request", "body is not a string (use json.encode)");
    }
    return { url: target, method, headers: headers as Record<string, string>, body };
  }

  /** Reads a 2xx answer through `parse_response`, or streamed through `stream_event` and `stream_end`. */
  async #read({ response, onDelta, touch }: Reply): Promise<ChatResponse> {
    if (!onDelta) {
      const text = await response.text();
      return this.#answer("parse_response", await this.#adapter("parse_response", response.status, text));
    }
    if (!response.body) throw badResponse(this.#host, "the stream has no body");
    const id = `s${++this.#streams}`;
    const events = this.#streamFormat === "sse"
      ? readSse(response.body)
      : (async function* (lines: AsyncGenerator<string>) {
        for await (const line of lines) yield { event: "", data: line };
      })(readLines(response.body));
    let ended = false;
    try {
      for await (const event of events) {
        touch();
        const out = await this.#adapter("stream_event", id, event.event, event.data);
        if (typeof out.error === "string") throw midStreamError(this.#host, out.error);
        if (typeof out.delta === "string" && out.delta !== "") onDelta(out.delta);
      }
      ended = true;
      return this.#answer("stream_end", await this.#adapter("stream_end", id));
    } finally {
      // The adapter forgets the stream's state even when it broke off.
      if (!ended) await this.#vm.call("stream_end", id).catch(() => {});
    }
  }

  #wireRequest(request: ChatRequest, stream: boolean): Record<string, unknown> {
    const { model, baseUrl, apiKey, temperature, maxTokens } = this.#options;
    return {
      model,
      base_url: baseUrl,
      api_key: apiKey,
      temperature,
      max_tokens: maxTokens,
      stream,
      messages: request.messages.map((message) => {
        if (message.role !== "assistant" || message.reasoning_content === undefined) return message;
        const { reasoning_content: _dropped, ...rest } = message;
        return rest;
      }),
      tools: (request.tools ?? []).map((tool: ToolSpec) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      })),
    };
  }

  #answer(fn: string, answer: AdapterAnswer): ChatResponse {
    const { content = "", tool_calls: calls = [], finish_reason: finish = "stop", usage } = answer;
    if (typeof content !== "string") throw this.#contract(fn, `content is ${typeof content}, not text`);
    if (!Array.isArray(calls)) throw this.#contract(fn, "tool_calls is not a list");
    const toolCalls: ToolCall[] = calls.map((call: unknown, index: number) => {
      const c = call as { id?: unknown; name?: unknown; arguments?: unknown };
      if (typeof c?.name !== "string" || c.name === "") {
        throw this.#contract(fn, `tool_calls[${index}].name is missing`);
      }
      const args = typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {});
      const id = typeof c.id === "string" && c.id !== "" ? c.id : `call_${crypto.randomUUID().slice(0, 8)}`;
      return { id, type: "function", function: { name: c.name, arguments: args } };
    });
    const number = (value: unknown) => typeof value === "number" && Number.isFinite(value) ? value : 0;
    const prompt = number(usage?.prompt_tokens), completion = number(usage?.completion_tokens);
    const cached = number(usage?.cache_read_tokens);
    return {
      content,
      toolCalls,
      finishReason: typeof finish === "string" ? finish : "stop",
      ...(usage
        ? {
          usage: {
            promptTokens: prompt,
            completionTokens: completion,
            totalTokens: prompt + completion,
            cacheHitTokens: cached,
            cacheMissTokens: cached ? prompt - cached : 0,
          },
        }
        : {}),
    };
  }
}
