import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { FakeLlm } from "../../tests/support/fake_llm.ts";
import { rejection } from "../../tests/support/rejection.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { OpenAIProvider, type OpenAIProviderOptions } from "./openai_provider.ts";
import type { ChatRequest, Provider } from "./provider.ts";
import { type ChainEvent, type ChainMember, ProviderChain } from "./provider_chain.ts";
import { ProviderError } from "./provider_error.ts";

const KEY = "sk-chain-test-0123456789";
const REQUEST: ChatRequest = {
  messages: [{ role: "system", content: "# persona" }, { role: "user", content: "hi" }],
};
const INTERVAL = 30_000;

function openai(baseUrl: string, clock: FakeClock, extra: Partial<OpenAIProviderOptions> = {}): OpenAIProvider {
  return new OpenAIProvider({
    model: "m",
    baseUrl,
    apiKey: KEY,
    temperature: 0.3,
    maxTokens: 77,
    thinking: false,
    timeoutMs: 5_000,
    maxRetries: 2,
    clock,
    random: () => 0.5,
    logger: getLogger(["test"]),
    missingKeyHint: "set a key",
    ...extra,
  });
}

function member(name: string, provider: Provider, role: "primary" | "fallback" = "fallback"): ChainMember {
  return { name, role, provider, timeoutMs: 5_000 };
}

function chainOf(clock: FakeClock, members: ChainMember[]): { chain: ProviderChain; events: ChainEvent[] } {
  const chain = new ProviderChain({ members, clock, logger: getLogger(["test"]), probeIntervalMs: INTERVAL });
  const events: ChainEvent[] = [];
  chain.onChange((event) => events.push(event));
  return { chain, events };
}

/** A loopback port nothing listens on: connections are refused. */
function refusedUrl(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return `http://127.0.0.1:${port}/v1`;
}

Deno.test("chain: a refused primary — the fallback answers, the primary is down and probed every interval", async () => {
  const clock = new FakeClock();
  const fallback = FakeLlm.start({ apiKey: KEY });
  fallback.enqueue({ reply: "from the fallback" }, { reply: "again from the fallback" });
  const primaryUrl = refusedUrl();
  const { chain, events } = chainOf(clock, [
    member("p@refused", openai(primaryUrl, clock), "primary"),
    member("f@fake", openai(fallback.baseUrl, clock)),
  ]);
  try {
    assert.equal((await chain.chat(REQUEST)).content, "from the fallback");
    assert.equal(chain.model, "m");
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, "provider_down");
    assert.ok(chain.available(), "the fallback answers");
    const [primary, second] = chain.status().providers;
    assert.equal(primary!.state, "down");
    assert.equal(primary!.role, "primary");
    assert.match(primary!.last_error!, /^Cannot reach the LLM server at 127\.0\.0\.1:\d+: .*refused/i);
    assert.equal(primary!.failures, 1);
    assert.equal(primary!.since, new Date(clock.now()).toISOString());
    assert.equal(primary!.next_probe, new Date(clock.now() + INTERVAL).toISOString());
    assert.deepEqual({ ...second, since: "" }, {
      name: "f@fake",
      model: "m",
      role: "fallback",
      state: "up",
      since: "",
      last_error: null,
      failures: 0,
      probes: 0,
      next_probe: null,
    });
    assert.equal((await chain.chat(REQUEST)).content, "again from the fallback");
    assert.equal(chain.status().providers[0]!.failures, 1, "the open breaker skipped the primary");
    assert.equal(chain.usage().requests, 2 + 1, "two answers and the primary's one attempt (refused: not retried)");
    assert.equal(chain.status().budget, null);
  } finally {
    chain.close();
    await fallback.close();
  }
});

Deno.test("chain: a primary answering 503 is asked once per outage; back after a probe, it answers again", async () => {
  const clock = new FakeClock();
  const primary = FakeLlm.start({ apiKey: KEY });
  const fallback = FakeLlm.start({ apiKey: KEY });
  primary.down = 503;
  fallback.enqueue({ reply: "f1" }, { reply: "f2" }, { reply: "f3" }, { reply: "f4" });
  const { chain, events } = chainOf(clock, [
    member("p@fake", openai(primary.baseUrl, clock), "primary"),
    member("f@fake", openai(fallback.baseUrl, clock)),
  ]);
  try {
    assert.equal((await chain.chat(REQUEST)).content, "f1");
    assert.equal(primary.requests.length, 3, "503 keeps its quick retries (2)");
    for (const reply of ["f2", "f3", "f4"]) assert.equal((await chain.chat(REQUEST)).content, reply);
    assert.equal(primary.requests.length, 3, "the open breaker sends nothing to the primary");
    assert.equal(primary.modelRequests, 0, "no probe before the interval");

    clock.advance(INTERVAL);
    await waitFor(() => chain.status().providers[0]!.probes === 1 && primary.modelRequests === 1, "the first probe");
    await waitFor(() => chain.status().providers[0]!.next_probe !== null, "the probe to end");
    assert.equal(chain.status().providers[0]!.state, "down", "still down: the probe got 503");
    assert.match(chain.status().providers[0]!.last_error!, /HTTP 503: scripted outage/);

    primary.down = undefined;
    primary.enqueue({ reply: "the primary again" });
    clock.advance(INTERVAL);
    await waitFor(() => chain.status().providers[0]!.state === "up", "the probe to find the primary back");
    assert.equal(primary.modelRequests, 2);
    assert.equal(primary.requests[0]!.headers.get("authorization"), `Bearer ${KEY}`);
    assert.equal((await chain.chat(REQUEST)).content, "the primary again");
    assert.deepEqual(events.map((event) => event.type), ["provider_down", "provider_up"]);
    assert.deepEqual(events[1], { type: "provider_up", provider: "p@fake" });
  } finally {
    chain.close();
    await primary.close();
    await fallback.close();
  }
});

Deno.test("chain: 402 (no balance) fails over at once; 429 after its retries; a bad request never fails over", async () => {
  const clock = new FakeClock();
  const primary = FakeLlm.start({ apiKey: KEY });
  const fallback = FakeLlm.start({ apiKey: KEY });
  try {
    primary.enqueue({ status: 402, body: { error: { message: "Insufficient Balance" } } });
    fallback.enqueue({ reply: "paid by the fallback" });
    let { chain } = chainOf(clock, [
      member("p@fake", openai(primary.baseUrl, clock), "primary"),
      member("f@fake", openai(fallback.baseUrl, clock)),
    ]);
    assert.equal((await chain.chat(REQUEST)).content, "paid by the fallback");
    assert.equal(primary.requests.length, 1, "402 is not retried");
    assert.match(
      chain.status().providers[0]!.last_error!,
      /refused to serve this account \(HTTP 402: Insufficient Balance\)/,
    );
    chain.close();

    primary.enqueue({ status: 429, headers: { "retry-after": "0" } }, { status: 429, headers: { "retry-after": "0" } });
    primary.enqueue({ status: 429, headers: { "retry-after": "0" } });
    fallback.enqueue({ reply: "not rate limited" });
    ({ chain } = chainOf(clock, [
      member("p@fake", openai(primary.baseUrl, clock), "primary"),
      member("f@fake", openai(fallback.baseUrl, clock)),
    ]));
    assert.equal((await chain.chat(REQUEST)).content, "not rate limited");
    assert.equal(primary.requests.length, 1 + 3);
    chain.close();

    primary.enqueue({ status: 400, body: { error: { message: "messages[1]: unknown role" } } });
    ({ chain } = chainOf(clock, [
      member("p@fake", openai(primary.baseUrl, clock), "primary"),
      member("f@fake", openai(fallback.baseUrl, clock)),
    ]));
    const refused = await rejection(chain.chat(REQUEST), ProviderError);
    assert.equal(refused.code, "bad_request");
    assert.equal(fallback.requests.length, 2, "the fallback was not asked");
    assert.equal(chain.status().providers[0]!.state, "up", "a bad request is no outage");
    chain.close();
  } finally {
    await primary.close();
    await fallback.close();
  }
});

Deno.test("chain: a hung primary costs one idle timeout, not its retries, then the fallback answers", async () => {
  const clock = new FakeClock();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn); // accepted, never answered
  })();
  const fallback = FakeLlm.start({ apiKey: KEY });
  fallback.enqueue({ reply: "the fallback, after one idle timeout" });
  const hungUrl = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/v1`;
  const { chain } = chainOf(clock, [
    member("p@hung", openai(hungUrl, clock, { maxRetries: 2, timeoutMs: 5_000 }), "primary"),
    member("f@fake", openai(fallback.baseUrl, clock)),
  ]);
  try {
    const started = clock.now();
    const answer = chain.chat(REQUEST);
    await waitFor(() => held.length === 1, "the primary to accept the request");
    await clock.timersArmed(1);
    clock.advance(5_000);
    assert.equal((await answer).content, "the fallback, after one idle timeout");
    assert.equal(clock.now() - started, 5_000, "one idle timeout and no backoff");
    assert.equal(held.length, 1, "the timeout was not retried");
    const primary = chain.status().providers[0]!;
    assert.equal(primary.state, "down");
    assert.match(primary.last_error!, /did not answer within 5s/);
  } finally {
    chain.close();
    for (const conn of held) conn.close();
    listener.close();
    await accepting.catch(() => {});
    await fallback.close();
  }
});

Deno.test("chain: all down — unavailable naming each and why, nothing sent while they are down; back with a probe", async () => {
  const clock = new FakeClock();
  const fallback = FakeLlm.start({ apiKey: KEY });
  fallback.down = 503;
  const primaryUrl = refusedUrl();
  const { chain, events } = chainOf(clock, [
    member("p@refused", openai(primaryUrl, clock, { maxRetries: 0 }), "primary"),
    member("f@fake", openai(fallback.baseUrl, clock, { maxRetries: 0 })),
  ]);
  try {
    const none = await rejection(chain.chat(REQUEST), ProviderError);
    assert.equal(none.code, "unavailable");
    const fallbackHost = new URL(fallback.baseUrl).host;
    assert.match(
      none.message,
      new RegExp(
        `^No model is answering: p@refused: Cannot reach the LLM server at 127\\.0\\.0\\.1:\\d+: .* \\(probing every 30s\\); ` +
          `f@fake: The LLM server at ${fallbackHost} failed \\(HTTP 503: scripted outage \\(HTTP 503\\)\\) \\(probing every 30s\\)$`,
      ),
    );
    assert.deepEqual(events.map((event) => event.type), ["provider_down", "provider_down", "lost"]);
    assert.equal(chain.available(), false);
    assert.equal(chain.reason(), none.message, "why no model answers, before asking one");
    const again = await rejection(chain.chat(REQUEST), ProviderError);
    assert.equal(again.code, "unavailable");
    assert.equal(fallback.requests.length, 1, "nothing is sent while every breaker is open");

    fallback.down = undefined;
    fallback.enqueue({ reply: "the house keeps a model" });
    clock.advance(INTERVAL);
    await waitFor(() => chain.available(), "the fallback's probe to succeed");
    assert.equal(chain.reason(), undefined);
    assert.deepEqual(events.slice(3), [
      { type: "provider_up", provider: "f@fake" },
      { type: "back", provider: "f@fake" },
    ]);
    assert.equal((await chain.chat(REQUEST)).content, "the house keeps a model");
    await waitFor(() => chain.status().providers[0]!.next_probe !== null, "the primary's probe to end");
    assert.equal(chain.status().providers[0]!.state, "down", "the refused primary stays down");
    assert.equal(chain.status().providers[0]!.probes, 1);
  } finally {
    chain.close();
    await fallback.close();
  }
});

Deno.test("chain of one: always asked, its own error passed on (as before the chain); status and events still kept", async () => {
  const clock = new FakeClock();
  const only = FakeLlm.start({ apiKey: KEY });
  only.enqueue({ status: 503 }, { reply: "back" });
  const { chain, events } = chainOf(clock, [
    member("p@fake", openai(only.baseUrl, clock, { maxRetries: 0 }), "primary"),
  ]);
  try {
    const failed = await rejection(chain.chat(REQUEST), ProviderError);
    assert.equal(failed.code, "server");
    assert.equal(
      failed.message,
      `The LLM server at ${new URL(only.baseUrl).host} failed (HTTP 503: scripted HTTP 503)`,
    );
    assert.equal(chain.status().providers[0]!.state, "down");
    assert.equal(chain.available(), false);
    assert.equal((await chain.chat(REQUEST)).content, "back", "the next message is still sent");
    assert.deepEqual(events.map((event) => event.type), ["provider_down", "lost", "provider_up", "back"]);
    assert.equal(clock.pendingTimers, 0, "no probe is left scheduled");
  } finally {
    chain.close();
    await only.close();
  }
});

Deno.test("chain: a stream that showed text and then broke is not handed on; a cancelled call is passed on as it is", async () => {
  const clock = new FakeClock();
  const primary = FakeLlm.start({ apiKey: KEY });
  const fallback = FakeLlm.start({ apiKey: KEY });
  const sse =
    'data: {"choices":[{"index":0,"delta":{"content":"Hal"}}]}\n\ndata: {"error":{"message":"overloaded"}}\n\n';
  primary.enqueue({ raw: () => new Response(sse, { headers: { "content-type": "text/event-stream" } }) });
  const { chain } = chainOf(clock, [
    member("p@fake", openai(primary.baseUrl, clock), "primary"),
    member("f@fake", openai(fallback.baseUrl, clock)),
  ]);
  try {
    let shown = "";
    const cut = await rejection(chain.chat(REQUEST, { onDelta: (text) => shown += text }), ProviderError);
    assert.equal(shown, "Hal");
    assert.match(cut.message, /the answer was cut off midway/);
    assert.equal(fallback.requests.length, 0);
    assert.equal(chain.status().providers[0]!.state, "down", "a server failing midway is down all the same");

    fallback.enqueue({ reply: "late", delayMs: 200 });
    const controller = new AbortController();
    const pending = chain.chat(REQUEST, { signal: controller.signal });
    await fallback.received(1);
    controller.abort(new Error("turn over"));
    assert.equal((await rejection(pending, ProviderError)).code, "cancelled");
    assert.equal(chain.status().providers[1]!.state, "up", "a cancelled call says nothing about the provider");
  } finally {
    chain.close();
    await primary.close();
    await fallback.close();
  }
});
