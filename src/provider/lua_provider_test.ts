import assert from "node:assert/strict";
import { rejection } from "../../tests/support/rejection.ts";
import { getLogger } from "@logtape/logtape";
import { fileURLToPath } from "node:url";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { FakeVendor } from "../../tests/support/fake_vendor.ts";
import { LuaProvider, type LuaProviderOptions } from "./lua_provider.ts";
import type { ChatRequest } from "./provider.ts";
import { ProviderError } from "./provider_error.ts";

const ADAPTERS = fileURLToPath(new URL("../../config/adapters/", import.meta.url));
const LAMP = {
  name: "lamp_set",
  description: "Switch a lamp",
  parameters: {
    type: "object",
    properties: { room: { type: "string" }, on: { type: "boolean" } },
    required: ["room", "on"],
    additionalProperties: false,
  },
};
const NOARGS = { name: "list_rooms", description: "List rooms", parameters: { type: "object", properties: {} } };

async function open(vendor: FakeVendor, extra: Partial<LuaProviderOptions> = {}): Promise<LuaProvider> {
  return await LuaProvider.open({
    adapter: `${ADAPTERS}${vendor.kind}.lua`,
    model: vendor.kind === "ollama" ? "qwen3:8b" : "claude-sonnet-4-5",
    baseUrl: vendor.baseUrl,
    apiKey: vendor.kind === "ollama" ? "" : vendor.apiKey,
    temperature: 1.3,
    maxTokens: 512,
    timeoutMs: 5_000,
    maxRetries: 0,
    limits: { timeMs: 1_000, memoryBytes: 8 * 1024 * 1024 },
    clock: new FakeClock(),
    random: () => 0.5,
    logger: getLogger(["test"]),
    ...extra,
  });
}

/** A conversation with a finished tool round: two calls answered, then the user speaks again. */
const HISTORY: ChatRequest = {
  messages: [
    { role: "system", content: "# Persona\nYou are the butler." },
    { role: "user", content: "Turn off the kitchen and hall lamps" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "lamp_set", arguments: '{"room":"kitchen","on":false}' } },
        { id: "call_b", type: "function", function: { name: "list_rooms", arguments: "" } },
      ],
    },
    { role: "tool", tool_call_id: "call_a", content: "kitchen lamp is off" },
    { role: "tool", tool_call_id: "call_b", content: "" },
    { role: "assistant", content: "Done." },
    { role: "user", content: "Thanks! And the hall?" },
  ],
  tools: [LAMP, NOARGS],
};

for (const kind of ["ollama", "anthropic"] as const) {
  Deno.test(`${kind}: a tool-call answer and a text answer, whole and streamed, in the vendor's own wire format`, async () => {
    const vendor = FakeVendor.start(kind);
    const provider = await open(vendor);
    assert.equal(provider.streams, true);
    vendor.enqueue(
      {
        toolCalls: [{ name: "lamp_set", arguments: { room: "hall", on: false } }, {
          name: "list_rooms",
          arguments: {},
        }],
      },
      { reply: "The hall lamp is off now." },
      { reply: "Streaming works fine.", chunks: 3 },
      { reply: "Checking.", toolCalls: [{ name: "lamp_set", arguments: { room: "study", on: true } }] },
    );
    const calls = await provider.chat(HISTORY);
    assert.equal(calls.finishReason, "tool_calls");
    assert.deepEqual(calls.toolCalls.map((call) => [call.function.name, JSON.parse(call.function.arguments)]), [
      ["lamp_set", { room: "hall", on: false }],
      ["list_rooms", {}],
    ]);
    assert.ok(calls.toolCalls.every((call) => /^(call|toolu)_/.test(call.id)), "ids kept or made up");
    const text = await provider.chat(HISTORY);
    assert.deepEqual([text.content, text.finishReason, text.toolCalls], ["The hall lamp is off now.", "stop", []]);
    const deltas: string[] = [];
    const streamed = await provider.chat(HISTORY, { onDelta: (piece) => deltas.push(piece) });
    assert.equal(streamed.content, "Streaming works fine.");
    assert.equal(deltas.join(""), "Streaming works fine.");
    assert.ok(deltas.length >= 2, "the text arrived in pieces");
    const streamedCall = await provider.chat(HISTORY, { onDelta: () => {} });
    assert.equal(streamedCall.content, "Checking.");
    assert.deepEqual(JSON.parse(streamedCall.toolCalls[0]!.function.arguments), { room: "study", on: true });
    assert.equal(streamedCall.finishReason, "tool_calls");

    // What went over the wire: the vendor's shape, accepted by the strict fake (close() asserts no violation).
    const sent = vendor.requests[0]!.body;
    if (kind === "ollama") {
      assert.deepEqual(sent.options, { num_predict: 512, temperature: 1.3 });
      assert.equal(sent.stream, false);
      const messages = sent.messages as Array<Record<string, unknown>>;
      assert.deepEqual(messages[2]!.tool_calls, [
        { function: { name: "lamp_set", arguments: { room: "kitchen", on: false } } },
        { function: { name: "list_rooms", arguments: {} } },
      ]);
      assert.deepEqual(messages.slice(3, 5), [
        { role: "tool", tool_name: "lamp_set", content: "kitchen lamp is off" },
        { role: "tool", tool_name: "list_rooms", content: "" },
      ]);
      assert.deepEqual((sent.tools as Array<Record<string, unknown>>)[1], { type: "function", function: NOARGS });
      assert.equal(vendor.requests[2]!.body.stream, true);
    } else {
      assert.equal(sent.system, "# Persona\nYou are the butler.");
      assert.equal(sent.temperature, 1, "capped at the API's maximum");
      assert.equal(sent.max_tokens, 512);
      const messages = sent.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
      assert.deepEqual(messages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user"]);
      assert.deepEqual(messages[1]!.content.map((b) => [b.type, b.input]), [
        ["tool_use", { room: "kitchen", on: false }],
        ["tool_use", {}],
      ]);
      assert.deepEqual(messages[2]!.content, [
        { type: "tool_result", tool_use_id: "call_a", content: "kitchen lamp is off" },
        { type: "tool_result", tool_use_id: "call_b", content: "(no output)" },
      ]);
      assert.deepEqual((sent.tools as Array<Record<string, unknown>>)[0], {
        name: "lamp_set",
        description: "Switch a lamp",
        input_schema: LAMP.parameters,
      });
      assert.equal(vendor.requests[0]!.headers.get("anthropic-version"), "2023-06-01");
    }
    const usage = provider.usage();
    assert.equal(usage.requests, 4);
    assert.ok(usage.promptTokens > 0 && usage.completionTokens > 0);
    provider.close();
    await vendor.close();
  });

  Deno.test(`${kind}: the vendor's HTTP errors and mid-stream errors become the provider's errors, with its words`, async () => {
    const vendor = FakeVendor.start(kind);
    const provider = await open(vendor);
    const host = new URL(vendor.baseUrl).host;
    const body = (message: string, type = "rate_limit_error") =>
      kind === "ollama" ? { error: message } : { type: "error", error: { type, message } };
    vendor.enqueue(
      { status: 429, body: body("slow down"), headers: { "retry-after": "3" } },
      { status: 404, body: body("model 'x' not found", "not_found_error") },
      { errorMidStream: "overloaded, try later", after: "Part" },
    );
    const limited = await rejection(provider.chat(HISTORY), ProviderError);
    assert.equal(limited.code, "rate_limited");
    assert.equal(limited.message, `The LLM server at ${host} is rate limiting (HTTP 429: slow down)`);
    assert.equal(limited.retryAfterMs, 3_000);
    const missing = await rejection(provider.chat(HISTORY), ProviderError);
    assert.equal(missing.code, "bad_request");
    assert.match(missing.message, /rejected the request \(HTTP 404: model 'x' not found\)$/);
    const deltas: string[] = [];
    const broken = await rejection(provider.chat(HISTORY, { onDelta: (piece) => deltas.push(piece) }), ProviderError);
    assert.equal(broken.code, "server");
    assert.equal(
      broken.message,
      `The LLM server at ${host} failed midway through the answer: overloaded, try later (the answer was cut off midway)`,
    );
    assert.deepEqual(deltas, ["Part"]);
    provider.close();
    await vendor.close();
  });

  Deno.test(`${kind}: a probe is one uncounted one-message chat through the adapter, never retried`, async () => {
    const vendor = FakeVendor.start(kind);
    const provider = await open(vendor, { maxRetries: 2 });
    vendor.enqueue({ reply: "pong" }, { status: 503, body: kind === "ollama" ? { error: "loading" } : {} });
    await provider.probe(AbortSignal.timeout(5_000));
    assert.equal(vendor.requests.length, 1);
    assert.equal((await rejection(provider.probe(AbortSignal.timeout(5_000)), ProviderError)).code, "server");
    assert.equal(vendor.requests.length, 2, "the 503 was not retried");
    assert.equal(provider.usage().requests, 0);
    provider.close();
    await vendor.close();
  });
}

Deno.test("adapter failures: syntax error at open names file and line; runtime errors and broken contracts name the script", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-adapter-" });
  const vendor = FakeVendor.start("ollama");
  const write = async (name: string, source: string) => {
    await Deno.writeTextFile(`${dir}/${name}`, source);
    return `${dir}/${name}`;
  };
  const options = (adapter: string) => ({ adapter } as Partial<LuaProviderOptions>);
  await assert.rejects(
    open(vendor, options(await write("broken.lua", "function build_request(text)\n  return json.encode({\nend\n"))),
    /^LuaError: broken\.lua:3: unexpected symbol near 'end'/,
  );
  await assert.rejects(
    open(vendor, options(await write("half.lua", "function build_request() end"))),
    /llm\.adapter: .*half\.lua defines no parse_response\(\) \(an adapter needs both\)/,
  );
  await assert.rejects(
    open(
      vendor,
      options(
        await write("odd.lua", "stream_format = 'xml'\nfunction build_request() end\nfunction parse_response() end"),
      ),
    ),
    /sets stream_format to "xml"; allowed: "ndjson" or "sse"/,
  );
  const faulty = await open(
    vendor,
    options(
      await write(
        "faulty.lua",
        [
          "function build_request(text)",
          "  local r = json.decode(text)",
          "  if r.messages[#r.messages].content == 'elsewhere' then",
          "    return json.encode({ url = 'http://example.com/api/chat', body = '{}' })",
          "  end",
          "  return json.encode({ url = r.base_url .. '/api/chat', method = 'POST', headers = {}, body = json.encode({ model = r.model, messages = r.messages, stream = false }) })",
          "end",
          "function parse_response(status, text)",
          "  local r = json.decode(text)",
          "  local said = r.message.content",
          "  if said == 'nothing' then return nil end",
          "  if said == 'not json' then return 'hello' end",
          "  if said == 'no name' then return json.encode({ tool_calls = { { arguments = '{}' } } }) end",
          "  if said == 'number' then return json.encode({ content = 5 }) end",
          "  return json.encode({ content = r.message.missing.field })",
          "end",
        ].join("\n"),
      ),
    ),
  );
  const say = (content: string): ChatRequest => ({ messages: [{ role: "user", content }] });
  const runtime = await rejection(faulty.chat(say("hi")), ProviderError);
  assert.equal(runtime.code, "adapter");
  assert.equal(
    runtime.message,
    "The LLM adapter faulty.lua failed in parse_response(): faulty.lua:15: attempt to index a nil value (field 'missing')",
  );
  const broken: Array<[string, string]> = [
    ["nothing", "it returned nothing, not a json.encode(...) text"],
    ["not json", "it returned text that is not JSON: hello"],
    ["no name", "tool_calls[0].name is missing"],
    ["number", "content is number, not text"],
  ];
  for (const [reply, detail] of broken) {
    vendor.enqueue({ reply });
    const error = await rejection(faulty.chat(say("hi")), ProviderError);
    assert.equal(error.code, "adapter", reply);
    assert.equal(error.message, `The LLM adapter faulty.lua broke its contract in parse_response(): ${detail}`);
  }
  const elsewhere = await rejection(faulty.chat(say("elsewhere")), ProviderError);
  assert.equal(elsewhere.code, "adapter");
  assert.match(
    elsewhere.message,
    /^The LLM adapter faulty\.lua broke its contract in build_request\(\): url http:\/\/example\.com\/api\/chat is not on llm\.base_url's host 127\.0\.0\.1:\d+$/,
  );
  faulty.close();
  await vendor.close();
  await Deno.remove(dir, { recursive: true });
});
