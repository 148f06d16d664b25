/**
 * A fake OpenAI-compatible LLM server on loopback, for provider and end-to-end tests (and the benchmark).
 *
 * Real HTTP, JSON and SSE. Each test scripts the answers; every request is checked against the contract
 * (one system message, first, beginning with the persona; the tool-call pairing rule; `thinking`, `model` and
 * `max_tokens` as configured; valid tool names). A violation is recorded and answered with HTTP 400 (which the
 * client does not retry), and {@link FakeLlm.close} fails the test if any was recorded.
 *
 * @module
 */

import assert from "node:assert/strict";
import { completionBody, streamResponse, type WireAnswer } from "./openai_wire.ts";
import { waitFor } from "./wait.ts";

/** A tool call the fake should ask for. */
export interface FakeToolCall {
  name: string;
  /** Object (serialised) or raw string (sent as is, e.g. invalid JSON). */
  arguments: Record<string, unknown> | string;
  id?: string;
}

/** One scripted answer. */
export type FakeStep =
  | {
    /** Text of the answer. */
    reply?: string;
    toolCalls?: FakeToolCall[];
    /** For streamed requests: how many chunks to split the text into (default 4). */
    chunks?: number;
    /** For streamed requests: the last chunk waits for this promise. */
    gate?: Promise<void>;
    /** Wait before answering. */
    delayMs?: number;
    usage?: {
      prompt_tokens: number;
      completion_tokens: number;
      prompt_cache_hit_tokens?: number;
      prompt_cache_miss_tokens?: number;
    };
    reasoning?: string;
  }
  | { status: number; headers?: Record<string, string>; body?: unknown; delayMs?: number }
  | { raw: (request: RecordedRequest) => Response | Promise<Response> }
  /**
   * An answer made from the request itself — a hostile model that calls tools with whatever it was shown (every id
   * in the messages, every tool in the list).
   */
  | { from: (request: RecordedRequest) => Exclude<FakeStep, { from: unknown }> };

/** A request the fake received. */
export interface RecordedRequest {
  body: Record<string, unknown>;
  headers: Headers;
  /** performance.now() when it arrived and when its answer was complete. */
  receivedAt: number;
  finishedAt: number;
}

/** What every request must satisfy. */
export interface FakeExpectations {
  /** The system message must begin with this, byte for byte. */
  personaPrefix?: string;
  /** `false` → `{"type":"disabled"}`, `true` → `{"type":"enabled"}`, `"omit"` → no field. */
  thinking?: boolean | "omit";
  model?: string;
  maxTokens?: number;
  /** Bearer key the client must send. */
  apiKey?: string;
  /**
   * The model's context window in tokens, counted the fake's own way (UTF-8 bytes / 3.5 of every message text and
   * tool declaration — stricter than homed's estimate for Latin text): prompt plus `max_tokens` must fit, as a real
   * server demands.
   */
  contextWindow?: number;
  /**
   * Requests homed passes on as a client sent them (the OpenAI door's stateless calls, `homed-utility`): the rules of
   * homed's own prompt — one system message, first, beginning with the persona — are not applied to those this says
   * yes to; every other rule is.
   */
  passThrough?: (body: Record<string, unknown>) => boolean;
}

/** The fake's token count of a request's prompt (messages and tool declarations), independent of homed's estimate. */
export function fakePromptTokens(body: Record<string, unknown>): number {
  const encoder = new TextEncoder();
  let bytes = 0;
  for (const message of (body.messages ?? []) as Array<Record<string, unknown>>) {
    bytes += 16 + encoder.encode(typeof message.content === "string" ? message.content : "").length;
    if (Array.isArray(message.tool_calls)) bytes += encoder.encode(JSON.stringify(message.tool_calls)).length;
  }
  if (body.tools) bytes += encoder.encode(JSON.stringify(body.tools)).length;
  return Math.ceil(bytes / 3.5);
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** The most tools DeepSeek's and OpenAI's chat APIs accept in one request. */
const MAX_TOOLS = 128;

/** Checks one request body against the contract; returns the violations. */
export function checkRequest(body: Record<string, unknown>, expect: FakeExpectations): string[] {
  const problems: string[] = [];
  const messages = body.messages as Array<Record<string, unknown>> | undefined;
  if (!Array.isArray(messages) || messages.length === 0) return ["messages is missing or empty"];
  const systems = messages.filter((m) => m.role === "system");
  if (!expect.passThrough?.(body)) {
    if (systems.length !== 1) problems.push(`expected exactly one system message, got ${systems.length}`);
    if (messages[0]?.role !== "system") problems.push(`first message is ${messages[0]?.role}, not system`);
    if (expect.personaPrefix !== undefined && !String(systems[0]?.content ?? "").startsWith(expect.personaPrefix)) {
      problems.push("system message does not begin with the persona");
    }
  }
  const pending = new Set<string>();
  messages.forEach((message, index) => {
    if (message.role === "tool") {
      const id = String(message.tool_call_id);
      if (!pending.delete(id)) problems.push(`messages[${index}] answers tool_call_id ${id}, which is not pending`);
      return;
    }
    if (pending.size) {
      problems.push(`messages[${index}] (${message.role}) comes before results for ${[...pending].join(", ")}`);
      pending.clear();
    }
    if (message.role === "assistant" && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls as Array<{ id: string; function?: { arguments?: unknown } }>) {
        if (pending.has(call.id)) problems.push(`messages[${index}] repeats tool_call id ${call.id}`);
        pending.add(call.id);
        // As the real APIs do: arguments sent back in history must be a JSON object.
        let parsed: unknown;
        try {
          parsed = JSON.parse(String(call.function?.arguments));
        } catch {
          parsed = undefined;
        }
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
          problems.push(`messages[${index}] tool_call ${call.id} has arguments that are not a JSON object`);
        }
      }
    }
  });
  if (pending.size) problems.push(`no results for tool calls ${[...pending].join(", ")}`);
  const last = messages.at(-1)?.role;
  if (last !== "user" && last !== "tool") problems.push(`last message is ${last}, not user or tool`);
  if (expect.thinking !== undefined) {
    const want = expect.thinking === "omit" ? undefined : { type: expect.thinking ? "enabled" : "disabled" };
    if (JSON.stringify(body.thinking) !== JSON.stringify(want)) {
      problems.push(`thinking is ${JSON.stringify(body.thinking)}, expected ${JSON.stringify(want)}`);
    }
  }
  if (expect.model !== undefined && body.model !== expect.model) problems.push(`model is ${body.model}`);
  if (expect.maxTokens !== undefined && body.max_tokens !== expect.maxTokens) {
    problems.push(`max_tokens is ${body.max_tokens}`);
  }
  if (expect.contextWindow !== undefined) {
    const prompt = fakePromptTokens(body);
    const maxTokens = typeof body.max_tokens === "number" ? body.max_tokens : 0;
    if (prompt + maxTokens > expect.contextWindow) {
      problems.push(
        `maximum context length is ${expect.contextWindow} tokens; the request has ${prompt} in the prompt plus ${maxTokens} for the reply`,
      );
    }
  }
  const tools = (body.tools ?? []) as Array<{ type?: string; function?: { name?: string } }>;
  // DeepSeek's and OpenAI's limit: a longer list fails the whole request.
  if (tools.length > MAX_TOOLS) problems.push(`tools has ${tools.length} entries; at most ${MAX_TOOLS} are accepted`);
  for (const tool of tools) {
    if (tool.type !== "function" || !TOOL_NAME.test(tool.function?.name ?? "")) {
      problems.push(`bad tool declaration ${JSON.stringify(tool).slice(0, 80)}`);
    }
  }
  return problems;
}

/** The fake server. */
export class FakeLlm {
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  /**
   * An outage: while set, every request — chat completions and `GET /v1/models` (a probe) — is answered with this
   * HTTP status at once, the script untouched; chat requests are still recorded in {@link FakeLlm.requests}.
   */
  down: number | undefined;
  /** `GET /v1/models` requests received (probes), answered or not. */
  modelRequests = 0;
  #steps: FakeStep[] = [];
  #server: Deno.HttpServer<Deno.NetAddr>;
  #expect: FakeExpectations;
  #counter = 0;

  private constructor(expect: FakeExpectations) {
    this.#expect = expect;
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (request) => this.#handle(request),
    );
  }

  /**
   * Starts a fake on a free loopback port.
   *
   * @example
   * ```ts
   * await using fake = FakeLlm.start({ personaPrefix: "You are homed", thinking: false });
   * fake.enqueue({ reply: "Hello" });
   * ```
   */
  static start(expect: FakeExpectations = {}): FakeLlm {
    return new FakeLlm(expect);
  }

  /** `http://127.0.0.1:<port>/v1`, the value for `llm.base_url`. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.#server.addr.port}/v1`;
  }

  /** Adds answers to the script, in order. */
  enqueue(...steps: FakeStep[]): void {
    this.#steps.push(...steps);
  }

  /** Answers still unused. */
  get remaining(): number {
    return this.#steps.length;
  }

  /** Resolves once `count` requests arrived; fails after `limitMs` saying how many did. */
  received(count: number, limitMs = 10_000): Promise<void> {
    return waitFor(() => this.requests.length >= count, `${count} LLM request(s) (got ${this.requests.length})`, {
      limitMs,
      everyMs: 5,
    });
  }

  async #handle(request: Request): Promise<Response> {
    const receivedAt = performance.now();
    const url = new URL(request.url);
    if (request.method === "GET" && url.pathname === "/v1/models") this.modelRequests++;
    if (this.down !== undefined) {
      if (request.method === "POST" && url.pathname === "/v1/chat/completions") {
        const body = await request.json().catch(() => ({}));
        this.requests.push({ body, headers: request.headers, receivedAt, finishedAt: performance.now() });
      } else {
        await request.body?.cancel();
      }
      return Response.json({ error: { message: `scripted outage (HTTP ${this.down})` } }, { status: this.down });
    }
    if (request.method === "GET" && url.pathname === "/v1/models") {
      if (this.#expect.apiKey && request.headers.get("authorization") !== `Bearer ${this.#expect.apiKey}`) {
        return Response.json({ error: { message: "Incorrect API key provided" } }, { status: 401 });
      }
      return Response.json({ object: "list", data: [{ id: this.#expect.model ?? "fake-model", object: "model" }] });
    }
    if (request.method !== "POST" || url.pathname !== "/v1/chat/completions") {
      return Response.json({ error: { message: `no route ${request.method} ${url.pathname}` } }, { status: 404 });
    }
    let body: Record<string, unknown>;
    try {
      body = await request.json();
    } catch {
      this.violations.push("request body is not JSON");
      return Response.json({ error: { message: "body is not JSON" } }, { status: 400 });
    }
    const recorded: RecordedRequest = { body, headers: request.headers, receivedAt, finishedAt: receivedAt };
    this.requests.push(recorded);
    const problems = checkRequest(body, this.#expect);
    if (this.#expect.apiKey && request.headers.get("authorization") !== `Bearer ${this.#expect.apiKey}`) {
      this.violations.push(`request #${this.requests.length}: sent with a wrong API key`);
      return Response.json({ error: { message: "Incorrect API key provided" } }, { status: 401 });
    }
    if (this.#steps.length === 0) problems.push("unexpected request: the script is empty");
    if (problems.length) {
      // The scripted answer stays queued: a bad request must not shift the rest of the script.
      this.violations.push(...problems.map((p) => `request #${this.requests.length}: ${p}`));
      return Response.json({ error: { message: `fake LLM: ${problems.join("; ")}` } }, { status: 400 });
    }
    const next = this.#steps.shift()!;
    const step = "from" in next ? next.from(recorded) : next;
    if ("raw" in step) return await step.raw(recorded);
    if (step.delayMs) await new Promise((resolve) => setTimeout(resolve, step.delayMs));
    if ("status" in step) {
      recorded.finishedAt = performance.now();
      return Response.json(step.body ?? { error: { message: `scripted HTTP ${step.status}` } }, {
        status: step.status,
        headers: step.headers ?? {},
      });
    }
    return body.stream === true ? this.#stream(step, recorded) : this.#complete(step, recorded);
  }

  /** A scripted answer as the wire writes it; tool calls without an id get `call_<n>`. */
  #answer(step: Extract<FakeStep, { reply?: string }>): WireAnswer {
    return {
      ...(step.reply === undefined ? {} : { content: step.reply }),
      toolCalls: (step.toolCalls ?? []).map((call) => ({
        id: call.id ?? `call_${++this.#counter}`,
        name: call.name,
        arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
      })),
      ...(step.reasoning ? { reasoning: step.reasoning } : {}),
      ...(step.usage ? { usage: step.usage } : {}),
      ...(step.chunks === undefined ? {} : { chunks: step.chunks }),
      ...(step.gate ? { gate: step.gate } : {}),
    };
  }

  #complete(step: Extract<FakeStep, { reply?: string }>, recorded: RecordedRequest): Response {
    const answer = this.#answer(step);
    recorded.finishedAt = performance.now();
    return Response.json(completionBody(answer, recorded.body.model, `chatcmpl-${this.#counter++}`));
  }

  #stream(step: Extract<FakeStep, { reply?: string }>, recorded: RecordedRequest): Response {
    return streamResponse(this.#answer(step), recorded.body.model, () => recorded.finishedAt = performance.now());
  }

  /**
   * Stops the server and fails when any request broke the contract (wrong key included) or scripted answers were
   * never asked for.
   */
  async close(): Promise<void> {
    await this.#server.shutdown();
    const unused = this.#steps.length
      ? [`${this.#steps.length} scripted answer(s) were never asked for (the test expected more LLM calls)`]
      : [];
    assert.deepEqual([...this.violations, ...unused], [], "the fake LLM saw requests that break the contract");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
