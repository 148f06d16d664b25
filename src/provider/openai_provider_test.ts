import assert from "node:assert/strict";
import { rejection } from "../../tests/support/rejection.ts";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { FakeLlm } from "../../tests/support/fake_llm.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { OpenAIProvider, type OpenAIProviderOptions } from "./openai_provider.ts";
import type { ChatRequest } from "./provider.ts";
import { ProviderError } from "./provider_error.ts";

const KEY = "sk-provider-test-123";
const REQUEST: ChatRequest = {
  messages: [{ role: "system", content: "# persona" }, { role: "user", content: "hi" }],
};

function provider(fake: FakeLlm, extra: Partial<OpenAIProviderOptions> = {}) {
  const clock = extra.clock as FakeClock | undefined ?? new FakeClock();
  return {
    clock,
    provider: new OpenAIProvider({
      model: "m1",
      baseUrl: fake.baseUrl,
      apiKey: KEY,
      temperature: 0.3,
      maxTokens: 77,
      thinking: false,
      timeoutMs: 5_000,
      maxRetries: 2,
      clock,
      random: () => 0.5,
      logger: getLogger(["test"]),
      missingKeyHint: "set DEEPSEEK_API_KEY",
      ...extra,
    }),
  };
}

Deno.test("sends model, temperature, max_tokens, tools and thinking as configured", async () => {
  for (const thinking of [false, true, "omit"] as const) {
    const fake = FakeLlm.start({ personaPrefix: "# persona", thinking, model: "m1", maxTokens: 77, apiKey: KEY });
    fake.enqueue({ reply: "hello", usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const { provider: p } = provider(fake, { thinking });
    const response = await p.chat({
      ...REQUEST,
      tools: [{ name: "lamp_set", description: "d", parameters: { type: "object" } }],
    });
    assert.equal(response.content, "hello");
    assert.equal(fake.requests[0]!.body.temperature, 0.3);
    assert.deepEqual(fake.requests[0]!.body.tools, [
      { type: "function", function: { name: "lamp_set", description: "d", parameters: { type: "object" } } },
    ]);
    assert.deepEqual(p.usage(), {
      requests: 1,
      retries: 0,
      errors: 0,
      promptTokens: 12,
      completionTokens: 3,
      totalTokens: 15,
      cacheHitTokens: 0,
      cacheMissTokens: 0,
    });
    await fake.close();
  }
});

Deno.test("images for a seeing main model go as data-URL parts of the last user message, that request only", async () => {
  const fake = FakeLlm.start({ personaPrefix: "# persona", model: "m1", maxTokens: 77, apiKey: KEY });
  fake.enqueue({ reply: "A cat." }, { reply: "Still a cat." });
  const { provider: p } = provider(fake);
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
  const messages: ChatRequest["messages"] = [
    { role: "system", content: "# persona" },
    { role: "user", content: "earlier" },
    { role: "assistant", content: "ok" },
    { role: "user", content: "[image: shown to you with this message] what is it?" },
  ];
  await p.chat({ messages, images: [{ mime: "image/png", bytes: png }] });
  const sent = fake.requests[0]!.body.messages as Array<{ role: string; content: unknown }>;
  assert.equal(sent[1]!.content, "earlier", "earlier messages stay text");
  assert.deepEqual(sent[3]!.content, [
    { type: "text", text: "[image: shown to you with this message] what is it?" },
    { type: "image_url", image_url: { url: `data:image/png;base64,${btoa(String.fromCharCode(...png))}` } },
  ]);
  assert.equal(messages[3]!.content, "[image: shown to you with this message] what is it?", "the caller's unchanged");
  await p.chat({ messages });
  assert.equal((fake.requests[1]!.body.messages as Array<{ content: unknown }>)[3]!.content, messages[3]!.content);
  await fake.close();
});

Deno.test("response_format goes to the model as asked, and the answer says it went; none when not asked", async () => {
  const fake = FakeLlm.start({ personaPrefix: "# persona", model: "m1", maxTokens: 77, apiKey: KEY });
  fake.enqueue({ reply: '{"title":"Tea"}' }, { reply: "plain" });
  const { provider: p } = provider(fake);
  const format = {
    type: "json_schema" as const,
    json_schema: { name: "title", strict: true, schema: { type: "object", properties: { title: { type: "string" } } } },
  };
  const shaped = await p.chat({ ...REQUEST, responseFormat: format });
  assert.deepEqual(fake.requests[0]!.body.response_format, format);
  assert.equal(shaped.responseFormatSent, true);
  const plain = await p.chat(REQUEST);
  assert.equal("response_format" in fake.requests[1]!.body, false);
  assert.equal(plain.responseFormatSent, undefined);
  await fake.close();
});

Deno.test("streams text as it arrives and assembles tool-call deltas split across chunks", async () => {
  const fake = FakeLlm.start({ personaPrefix: "# persona" });
  fake.enqueue({
    reply: "Let me check.",
    chunks: 5,
    toolCalls: [
      { name: "lamp_set", arguments: { room: "客厅", on: true }, id: "call_a" },
      { name: "output_send", arguments: { channel: "http", text: "x" }, id: "call_b" },
    ],
  });
  const { provider: p } = provider(fake);
  const deltas: string[] = [];
  const response = await p.chat(REQUEST, { onDelta: (text) => deltas.push(text) });
  assert.ok(deltas.length >= 4);
  assert.equal(deltas.join(""), "Let me check.");
  assert.deepEqual(response.toolCalls, [
    { id: "call_a", type: "function", function: { name: "lamp_set", arguments: '{"room":"客厅","on":true}' } },
    { id: "call_b", type: "function", function: { name: "output_send", arguments: '{"channel":"http","text":"x"}' } },
  ]);
  assert.equal(fake.requests[0]!.body.stream, true);
  assert.deepEqual(p.usage().totalTokens, 15);
  await fake.close();
});

Deno.test("reasoning_content is kept for tool-call turns only with thinking on", async () => {
  const messages: ChatRequest["messages"] = [
    { role: "system", content: "# persona" },
    { role: "user", content: "q" },
    {
      role: "assistant",
      content: null,
      reasoning_content: "thoughts",
      tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "c1", content: "r" },
  ];
  for (const thinking of [true, false] as const) {
    const fake = FakeLlm.start({ thinking });
    fake.enqueue({ reply: "a", reasoning: "more thoughts" });
    const { provider: p } = provider(fake, { thinking });
    const response = await p.chat({ messages });
    assert.equal(response.reasoningContent, "more thoughts");
    const sent = (fake.requests[0]!.body.messages as Array<Record<string, unknown>>)[2]!;
    assert.equal(sent.reasoning_content, thinking ? "thoughts" : undefined);
    await fake.close();
  }
});

Deno.test("429 and 5xx are retried with Retry-After and backoff; auth errors are not", async () => {
  const fake = FakeLlm.start();
  fake.enqueue({ status: 429, headers: { "retry-after": "1" } }, { status: 502 }, { reply: "finally" });
  const { provider: p, clock } = provider(fake);
  assert.equal((await p.chat(REQUEST)).content, "finally");
  assert.deepEqual(clock.sleeps, [1000, 1000]);
  assert.equal(p.usage().retries, 2);

  fake.enqueue({ status: 401, body: { error: { message: "Authentication Fails, Your api key is invalid" } } });
  const auth = await rejection(p.chat(REQUEST), ProviderError);
  assert.equal(auth.code, "auth");
  assert.equal(
    auth.message,
    `The LLM server at ${
      new URL(fake.baseUrl).host
    } refused the API key (HTTP 401: Authentication Fails, Your api key is invalid); check llm.api_key`,
  );
  assert.ok(!auth.message.includes(KEY));
  fake.enqueue({ status: 400, body: { error: { message: "Model Not Exist" } } });
  const bad = await rejection(p.chat(REQUEST), ProviderError);
  assert.equal(bad.code, "bad_request");
  assert.match(bad.message, /rejected the request \(HTTP 400: Model Not Exist\)/);
  assert.equal(fake.requests.length, 5);
  await fake.close();
});

Deno.test("answers homed cannot use are errors that say what is wrong", async () => {
  const fake = FakeLlm.start();
  const host = new URL(fake.baseUrl).host;
  const cases: Array<[unknown, RegExp]> = [
    [{ choices: [] }, /it has no choices/],
    [{ choices: [{ index: 0 }] }, /choices\[0\]\.message is missing/],
    [{ choices: [{ message: { content: 5 } }] }, /choices\[0\]\.message\.content is number, not text/],
    [{ choices: [{ message: { content: null, tool_calls: {} } }] }, /tool_calls is not a list/],
    [{ choices: [{ message: { tool_calls: [{ function: { name: "x" } }] } }] }, /tool_calls\[0\]\.id is missing/],
    [
      { choices: [{ message: { tool_calls: [{ id: "a", function: {} }] } }] },
      /tool_calls\[0\]\.function\.name is missing/,
    ],
  ];
  const { provider: p } = provider(fake);
  for (const [body, pattern] of cases) {
    fake.enqueue({ raw: () => Response.json(body) });
    const error = await rejection(p.chat(REQUEST), ProviderError);
    assert.equal(error.code, "bad_response");
    assert.ok(error.message.startsWith(`The LLM server at ${host} sent an answer homed cannot use: `), error.message);
    assert.match(error.message, pattern);
  }
  fake.enqueue({
    raw: () => new Response("<html>gateway</html>", { headers: { "content-type": "application/json" } }),
  });
  assert.equal((await rejection(p.chat(REQUEST), ProviderError)).code, "bad_response");
  fake.enqueue({ raw: () => new Response("data: [DONE]\n\n", { headers: { "content-type": "text/event-stream" } }) });
  assert.match(
    (await rejection(p.chat(REQUEST, { onDelta: () => {} }), ProviderError)).message,
    /the stream ended without any choice/,
  );
  // Object arguments (some servers send them) are accepted and serialised.
  fake.enqueue({
    raw: () =>
      Response.json({
        choices: [{ message: { tool_calls: [{ id: "a", function: { name: "t", arguments: { x: 1 } } }] } }],
      }),
  });
  assert.equal((await p.chat(REQUEST)).toolCalls[0]!.function.arguments, '{"x":1}');
  await fake.close();
});

Deno.test("a silent server times out on the injected clock with a message naming the wait", async () => {
  const fake = FakeLlm.start();
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  fake.enqueue({
    raw: async () => {
      await held;
      return Response.json({ choices: [] });
    },
  });
  const { provider: p, clock } = provider(fake, { timeoutMs: 30_000, maxRetries: 0 });
  const pending = rejection(p.chat(REQUEST), ProviderError);
  await fake.received(1);
  clock.advance(29_999);
  clock.advance(1);
  const error = await pending;
  assert.equal(error.code, "timeout");
  assert.equal(error.message, `The LLM server at ${new URL(fake.baseUrl).host} did not answer within 30s`);
  release();
  await fake.close();
});

Deno.test("a stream that stalls between chunks times out; steady chunks keep it alive", async () => {
  const fake = FakeLlm.start();
  const encoder = new TextEncoder();
  let sendMore!: (text: string) => void;
  let stall!: () => void;
  fake.enqueue({
    raw: () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            const chunk = (text: string) =>
              controller.enqueue(
                encoder.encode(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`),
              );
            sendMore = chunk;
            stall = () => controller.close();
            chunk("Hel");
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      ),
  });
  const { provider: p, clock } = provider(fake, { timeoutMs: 10_000, maxRetries: 0 });
  const deltas: string[] = [];
  const pending = rejection(p.chat(REQUEST, { onDelta: (text) => deltas.push(text) }), ProviderError);
  await waitFor(() => deltas.length === 1, "the first delta");
  clock.advance(9_000);
  sendMore("lo");
  await waitFor(() => deltas.length === 2, "the second delta");
  clock.advance(9_000); // 18 s since the start, 9 s since the last chunk: still alive
  assert.deepEqual(deltas, ["Hel", "lo"]);
  clock.advance(1_000);
  const error = await pending;
  assert.equal(error.code, "timeout");
  assert.match(error.message, /did not answer within 10s( \(the answer was cut off midway\))?$/);
  stall();
  await fake.close();
});

Deno.test("DeepSeek's prompt cache counts are added up", async () => {
  const fake = FakeLlm.start();
  fake.enqueue(
    {
      reply: "a",
      usage: { prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 },
    },
    {
      reply: "b",
      usage: { prompt_tokens: 120, completion_tokens: 5, prompt_cache_hit_tokens: 100, prompt_cache_miss_tokens: 20 },
    },
  );
  const { provider: p } = provider(fake);
  await p.chat(REQUEST);
  await p.chat(REQUEST);
  const usage = p.usage();
  assert.equal(usage.cacheHitTokens, 164);
  assert.equal(usage.cacheMissTokens, 56);
  assert.equal(usage.promptTokens, 220);
  await fake.close();
});

Deno.test("no key: a clear error with the hint, and no request is sent", async () => {
  const fake = FakeLlm.start();
  const { provider: p } = provider(fake, { apiKey: "" });
  const error = await rejection(p.chat(REQUEST), ProviderError);
  assert.equal(error.code, "no_api_key");
  assert.equal(error.message, "set DEEPSEEK_API_KEY");
  assert.equal(fake.requests.length, 0);
  await fake.close();
});

Deno.test("a cancelled call says so", async () => {
  const fake = FakeLlm.start();
  fake.enqueue({ reply: "late", delayMs: 200 });
  const { provider: p } = provider(fake);
  const controller = new AbortController();
  const pending = p.chat(REQUEST, { signal: controller.signal });
  setTimeout(() => controller.abort(new Error("shutdown")), 20);
  assert.equal((await rejection(pending, ProviderError)).code, "cancelled");
  await fake.close();
});

Deno.test("no server, a plain-text error page, a broken or failing stream: each error names host and cause", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const fake = FakeLlm.start();
  const { provider: nowhere } = provider(fake, { baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  const refused = await rejection(nowhere.chat(REQUEST), ProviderError);
  assert.equal(refused.code, "network");
  assert.equal(refused.retryable, false, "refused: nothing listens, not retried");
  assert.match(refused.message, new RegExp(`^Cannot reach the LLM server at 127\\.0\\.0\\.1:${port}: .*refused`, "i"));

  const { provider: p } = provider(fake, { maxRetries: 0 });
  const host = new URL(fake.baseUrl).host;
  fake.enqueue({ raw: () => new Response("upstream connect error", { status: 503 }) });
  const page = await rejection(p.chat(REQUEST), ProviderError);
  assert.equal(page.code, "server");
  assert.equal(page.message, `The LLM server at ${host} failed (HTTP 503: upstream connect error)`);

  const sse = (text: string) => () => new Response(text, { headers: { "content-type": "text/event-stream" } });
  fake.enqueue({ raw: sse('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: {not json\n\n') });
  const broken = await rejection(p.chat(REQUEST, { onDelta: () => {} }), ProviderError);
  assert.equal(broken.code, "bad_response");
  assert.match(broken.message, /a streamed chunk is not JSON: \{not json$/);
  fake.enqueue({ raw: sse('data: {"error":{"message":"overloaded, try later"}}\n\n') });
  const failing = await rejection(p.chat(REQUEST, { onDelta: () => {} }), ProviderError);
  assert.equal(failing.code, "server");
  assert.equal(failing.message, `The LLM server at ${host} failed midway through the answer: overloaded, try later`);
  // The key goes in the Authorization header of every request, and into no error message.
  assert.equal(fake.requests.length, 3);
  for (const request of fake.requests) assert.equal(request.headers.get("authorization"), `Bearer ${KEY}`);
  for (const error of [refused, page, broken, failing]) assert.ok(!error.message.includes(KEY));
  await fake.close();
});

Deno.test("probe: GET {base_url}/models with the key; a refused key, an outage or no server is the chat's error", async () => {
  const fake = FakeLlm.start({ apiKey: KEY });
  const { provider: p } = provider(fake);
  await p.probe(AbortSignal.timeout(5_000));
  assert.equal(fake.modelRequests, 1);
  assert.equal(fake.requests.length, 0, "no chat request");
  assert.equal(p.usage().requests, 0, "a probe is not counted as a request");

  const { provider: wrongKey } = provider(fake, { apiKey: "sk-wrong-0123456789", keyName: "llm.fallbacks.0.api_key" });
  const refused = await rejection(wrongKey.probe(AbortSignal.timeout(5_000)), ProviderError);
  assert.equal(refused.code, "auth");
  assert.match(
    refused.message,
    /refused the API key \(HTTP 401: Incorrect API key provided\); check llm\.fallbacks\.0\.api_key$/,
  );

  fake.down = 503;
  const down = await rejection(p.probe(AbortSignal.timeout(5_000)), ProviderError);
  assert.equal(down.code, "server");
  fake.down = undefined;

  const { provider: keyless } = provider(fake, { apiKey: "" });
  assert.equal((await rejection(keyless.probe(AbortSignal.timeout(5_000)), ProviderError)).code, "no_api_key");
  assert.equal(fake.modelRequests, 3, "no request without a key");
  await fake.close();

  const { provider: nowhere } = provider(fake, { baseUrl: fake.baseUrl });
  assert.equal((await rejection(nowhere.probe(AbortSignal.timeout(5_000)), ProviderError)).code, "network");
});

Deno.test("a fallback's empty key sends no Authorization header (a local server needs none)", async () => {
  const fake = FakeLlm.start();
  fake.enqueue({ reply: "local" });
  const { provider: local } = provider(fake, { apiKey: "", keyOptional: true });
  assert.equal((await local.chat(REQUEST)).content, "local");
  assert.equal(fake.requests[0]!.headers.get("authorization"), null);
  await local.probe(AbortSignal.timeout(5_000));
  await fake.close();
});

Deno.test("a refused connection fails at once, not retried: nothing listens there, and the breaker's probe will see it back", async () => {
  const fake = FakeLlm.start();
  const { provider: p, clock } = provider(fake);
  await fake.close();
  const error = await rejection(p.chat(REQUEST), ProviderError);
  assert.equal(error.code, "network");
  assert.match(error.message, /Cannot reach the LLM server at 127\.0\.0\.1:\d+: .*Connection refused/);
  assert.equal(error.retryable, false);
  assert.deepEqual(clock.sleeps, [], "no backoff was waited");
  assert.equal(p.usage().retries, 0);
});
