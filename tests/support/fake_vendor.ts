/**
 * Fake Ollama (`POST /api/chat`) and Anthropic (`POST /v1/messages`) servers on loopback, for the LuaAdapter tests:
 * real HTTP, JSON, NDJSON and SSE, shaped as `../shared/reference/llm-wire-formats.md` describes the real APIs, and
 * strict like them — a request the real API would refuse (a string where Ollama wants an object, a `system` role or an
 * extra field for Anthropic, a tool result that is not first or answers no call, …) gets the same status and error
 * body, and is recorded as a violation that {@link FakeVendor.close} reports.
 *
 * @module
 */

import assert from "node:assert/strict";

/** One scripted answer: text, tool calls, or an HTTP error. */
export type VendorStep =
  | { reply?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>; chunks?: number }
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { errorMidStream: string; after?: string };

/** A request the fake received. */
export interface VendorRequest {
  body: Record<string, unknown>;
  headers: Headers;
}

type Kind = "ollama" | "anthropic";

/** A fake vendor server. */
export class FakeVendor {
  readonly kind: Kind;
  readonly requests: VendorRequest[] = [];
  readonly violations: string[] = [];
  readonly apiKey: string;
  #steps: VendorStep[] = [];
  #server: Deno.HttpServer<Deno.NetAddr>;
  #ids = 0;

  private constructor(kind: Kind, apiKey: string) {
    this.kind = kind;
    this.apiKey = apiKey;
    this.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => this.#handle(request));
  }

  /**
   * Starts a fake of `kind`.
   *
   * @example
   * ```ts
   * const ollama = FakeVendor.start("ollama");
   * ollama.enqueue({ reply: "Hello" });
   * ```
   */
  static start(kind: Kind, apiKey = "sk-ant-test-0123456789"): FakeVendor {
    return new FakeVendor(kind, apiKey);
  }

  /** `http://127.0.0.1:<port>`: `llm.base_url` for the adapter. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  enqueue(...steps: VendorStep[]): void {
    this.#steps.push(...steps);
  }

  /** Stops the server; fails when a request broke the vendor's rules. */
  async close(): Promise<void> {
    await this.#server.shutdown();
    assert.deepEqual(this.violations, [], "requests the real API would refuse");
  }

  #refuse(status: number, message: string): Response {
    this.violations.push(message);
    return this.kind === "ollama"
      ? Response.json({ error: message }, { status })
      : Response.json({ type: "error", error: { type: "invalid_request_error", message } }, { status });
  }

  async #handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const expected = this.kind === "ollama" ? "/api/chat" : "/v1/messages";
    if (request.method !== "POST" || path !== expected) {
      this.violations.push(`${request.method} ${path}`);
      return new Response("404 page not found", { status: 404 });
    }
    let body: Record<string, unknown>;
    try {
      body = await request.json();
    } catch {
      return this.#refuse(400, "invalid JSON");
    }
    this.requests.push({ body, headers: request.headers });
    const problem = this.kind === "ollama" ? ollamaProblem(body) : this.#anthropicProblem(request.headers, body);
    if (problem) return this.#refuse(problem.status, problem.message);
    const step = this.#steps.shift() ?? { reply: "(no scripted answer)" };
    if ("status" in step) return Response.json(step.body, { status: step.status, headers: step.headers ?? {} });
    const stream = this.kind === "ollama" ? body.stream !== false : body.stream === true;
    if (this.kind === "ollama") return stream ? this.#ollamaStream(body, step) : this.#ollamaJson(body, step);
    return stream ? this.#anthropicStream(body, step) : this.#anthropicJson(body, step);
  }

  #anthropicProblem(headers: Headers, body: Record<string, unknown>): { status: number; message: string } | undefined {
    if (headers.get("x-api-key") !== this.apiKey) return { status: 401, message: "invalid x-api-key" };
    if (!headers.get("anthropic-version")) return { status: 400, message: "anthropic-version: header is required" };
    return anthropicProblem(body);
  }

  #ollamaJson(body: Record<string, unknown>, step: Exclude<VendorStep, { status: number }>): Response {
    if ("errorMidStream" in step) return Response.json({ error: step.errorMidStream }, { status: 500 });
    return Response.json({
      model: body.model,
      created_at: new Date(0).toISOString(),
      message: { role: "assistant", content: step.reply ?? "", ...this.#ollamaCalls(step) },
      done: true,
      done_reason: "stop",
      prompt_eval_count: 143,
      eval_count: 21,
    });
  }

  #ollamaCalls(step: { toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> }) {
    if (!step.toolCalls?.length) return {};
    return {
      tool_calls: step.toolCalls.map((call, index) => ({
        id: `call_${(++this.#ids).toString().padStart(8, "0")}`,
        function: { index, name: call.name, arguments: call.arguments },
      })),
    };
  }

  #ollamaStream(
    body: Record<string, unknown>,
    step: Exclude<VendorStep, { status: number }>,
  ): Response {
    const lines: string[] = [];
    const line = (message: Record<string, unknown>, done: Record<string, unknown> = { done: false }) =>
      lines.push(JSON.stringify({ model: body.model, created_at: new Date(0).toISOString(), message, ...done }));
    if ("errorMidStream" in step) {
      line({ role: "assistant", content: step.after ?? "Part" });
      lines.push(JSON.stringify({ error: step.errorMidStream }));
    } else {
      for (const piece of split(step.reply ?? "", step.chunks ?? 3)) line({ role: "assistant", content: piece });
      if (step.toolCalls?.length) line({ role: "assistant", content: "", ...this.#ollamaCalls(step) });
      line({ role: "assistant", content: "" }, {
        done: true,
        done_reason: "stop",
        prompt_eval_count: 160,
        eval_count: 6,
      });
    }
    return new Response(lines.map((l) => `${l}\n`).join(""), {
      headers: { "content-type": "application/x-ndjson" },
    });
  }

  #anthropicBlocks(step: { reply?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> }) {
    const blocks: Array<Record<string, unknown>> = [];
    if (step.reply) blocks.push({ type: "text", text: step.reply });
    for (const call of step.toolCalls ?? []) {
      blocks.push({
        type: "tool_use",
        id: `toolu_${(++this.#ids).toString().padStart(8, "0")}`,
        name: call.name,
        input: call.arguments,
      });
    }
    return blocks;
  }

  #anthropicJson(
    body: Record<string, unknown>,
    step: Exclude<VendorStep, { status: number }>,
  ): Response {
    if ("errorMidStream" in step) {
      return Response.json({ type: "error", error: { type: "overloaded_error", message: step.errorMidStream } }, {
        status: 529,
      });
    }
    const content = this.#anthropicBlocks(step);
    return Response.json({
      id: "msg_01Vb8sK2",
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: step.toolCalls?.length ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 402, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 61 },
    });
  }

  #anthropicStream(
    body: Record<string, unknown>,
    step: Exclude<VendorStep, { status: number }>,
  ): Response {
    const events: string[] = [];
    const event = (type: string, data: Record<string, unknown>) =>
      events.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event("message_start", {
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: body.model,
        content: [],
        stop_reason: null,
        usage: { input_tokens: 402, output_tokens: 1 },
      },
    });
    if ("errorMidStream" in step) {
      event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: step.after ?? "Part" } });
      event("error", { error: { type: "overloaded_error", message: step.errorMidStream } });
    } else {
      const blocks = this.#anthropicBlocks(step);
      blocks.forEach((block, index) => {
        if (block.type === "text") {
          event("content_block_start", { index, content_block: { type: "text", text: "" } });
          event("ping", {});
          for (const piece of split(String(block.text), step.chunks ?? 3)) {
            event("content_block_delta", { index, delta: { type: "text_delta", text: piece } });
          }
        } else {
          event("content_block_start", { index, content_block: { ...block, input: {} } });
          const json = JSON.stringify(block.input);
          for (const piece of ["", ...split(json, 3)]) {
            event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } });
          }
        }
        event("content_block_stop", { index });
      });
      event("message_delta", {
        delta: { stop_reason: step.toolCalls?.length ? "tool_use" : "end_turn", stop_sequence: null },
        usage: { output_tokens: 61 },
      });
      event("message_stop", {});
    }
    return new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });
  }
}

function split(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** What the real Ollama refuses (or, for a tool result without `tool_name`, cannot match to its call). */
function ollamaProblem(body: Record<string, unknown>): { status: number; message: string } | undefined {
  if (typeof body.model !== "string" || body.model === "") return { status: 400, message: "model is required" };
  const messages = body.messages as Array<Record<string, unknown>> | undefined;
  if (!Array.isArray(messages)) return { status: 400, message: "messages is required" };
  for (const message of messages) {
    if (typeof message.content !== "string") {
      return {
        status: 400,
        message: "json: cannot unmarshal array into Go struct field Message.messages.content of type string",
      };
    }
    for (const call of (message.tool_calls ?? []) as Array<{ function?: { arguments?: unknown } }>) {
      const args = call.function?.arguments;
      if (args === null || typeof args !== "object" || Array.isArray(args)) {
        return { status: 400, message: "Value looks like object, but can't find closing '}' symbol" };
      }
    }
    if (message.role === "tool" && typeof message.tool_name !== "string") {
      return { status: 400, message: "a tool message needs tool_name to be matched to its call" };
    }
  }
  for (const key of ["max_tokens", "temperature"]) {
    if (key in body) return { status: 400, message: `${key} at the top level has no effect on Ollama (use options)` };
  }
  return undefined;
}

const ANTHROPIC_FIELDS = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "stream",
  "tools",
  "tool_choice",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "metadata",
  "thinking",
]);

/** What the real Messages API refuses, with its error texts. */
function anthropicProblem(body: Record<string, unknown>): { status: number; message: string } | undefined {
  for (const key of Object.keys(body)) {
    if (!ANTHROPIC_FIELDS.has(key)) return { status: 400, message: `${key}: Extra inputs are not permitted` };
  }
  if (typeof body.max_tokens !== "number" || body.max_tokens < 1) {
    return { status: 400, message: "max_tokens: Field required" };
  }
  if (typeof body.temperature === "number" && body.temperature > 1) {
    return { status: 400, message: "temperature: Input should be less than or equal to 1" };
  }
  for (const tool of (body.tools ?? []) as Array<Record<string, unknown>>) {
    for (const key of Object.keys(tool)) {
      if (!["name", "description", "input_schema"].includes(key)) {
        return { status: 400, message: `tools.0.${key}: Extra inputs are not permitted` };
      }
    }
  }
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  if (!Array.isArray(messages) || !messages.length) return { status: 400, message: "messages: Field required" };
  let previousToolUses: string[] = [];
  for (const [n, message] of messages.entries()) {
    if (message.role === "system") {
      return {
        status: 400,
        message: 'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter',
      };
    }
    if (n === 0 && message.role !== "user") {
      return { status: 400, message: "messages: first message must use the user role" };
    }
    if (n > 0 && messages[n - 1]!.role === message.role) {
      return {
        status: 400,
        message:
          `roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`,
      };
    }
    const blocks = typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : message.content as Array<Record<string, unknown>>;
    if (!Array.isArray(blocks) || !blocks.length) {
      return {
        status: 400,
        message: "all messages must have non-empty content except for the optional final assistant message",
      };
    }
    const results: string[] = [];
    let seenOther = false;
    for (const block of blocks) {
      if (block.type === "text" && (typeof block.text !== "string" || block.text === "")) {
        return { status: 400, message: "messages: text content blocks must be non-empty" };
      }
      if (block.type === "tool_use") {
        if (message.role !== "assistant") {
          return { status: 400, message: `messages.${n}: tool_use only in assistant messages` };
        }
        if (block.input === null || typeof block.input !== "object" || Array.isArray(block.input)) {
          return { status: 400, message: `messages.${n}.content.tool_use.input: Input should be a valid dictionary` };
        }
      }
      if (block.type === "tool_result") {
        if (seenOther) {
          return { status: 400, message: "Did not find 1 tool_result block(s) at the beginning of this message" };
        }
        results.push(String(block.tool_use_id));
      } else seenOther = true;
    }
    if (message.role === "user") {
      const missing = previousToolUses.filter((id) => !results.includes(id));
      if (missing.length) {
        return {
          status: 400,
          message: `messages.${n}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${
            missing.join(", ")
          }`,
        };
      }
      const unexpected = results.filter((id) => !previousToolUses.includes(id));
      if (unexpected.length) {
        return {
          status: 400,
          message: `unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(", ")}`,
        };
      }
    }
    previousToolUses = message.role === "assistant"
      ? blocks.filter((block) => block.type === "tool_use").map((block) => String(block.id))
      : [];
  }
  return undefined;
}
