import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { rejection } from "../../tests/support/rejection.ts";
import { CallRunner, type Reply } from "./call_runner.ts";
import { ProviderError } from "./provider_error.ts";

function runner(host: string, clock = new FakeClock()): CallRunner {
  return new CallRunner({
    host,
    timeoutMs: 5_000,
    maxRetries: 2,
    clock,
    random: () => 0.5,
    logger: getLogger(["test"]),
  });
}

Deno.test("one request goes out as given on every attempt; only a 2xx answer reaches the reader", async () => {
  const seen: Array<{ method: string; type: string | null; body: string }> = [];
  const statuses = [503, 200];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    seen.push({ method: request.method, type: request.headers.get("content-type"), body: await request.text() });
    const status = statuses.shift()!;
    return status === 200 ? Response.json({ text: "hi" }) : new Response("busy", { status });
  });
  const host = `127.0.0.1:${server.addr.port}`;
  const calls = runner(host);
  const replies: Reply[] = [];
  const answer = await calls.exchange(
    { url: `http://${host}/chat`, method: "PUT", headers: { "content-type": "text/plain" }, body: "ping" },
    {},
    async (reply) => {
      replies.push(reply);
      const { text } = await reply.response.json();
      return { content: text, toolCalls: [], finishReason: "stop" };
    },
  );
  assert.equal(answer.content, "hi");
  assert.deepEqual(seen, [
    { method: "PUT", type: "text/plain", body: "ping" },
    { method: "PUT", type: "text/plain", body: "ping" },
  ]);
  assert.equal(replies.length, 1, "the 503 was the runner's to map and retry");
  assert.equal(replies[0]!.onDelta, undefined);
  assert.deepEqual([calls.usage().requests, calls.usage().retries, calls.usage().errors], [2, 1, 0]);

  // A reader's own ProviderError is final when it is not retryable, and counted.
  statuses.push(200);
  const refused = await rejection(
    calls.exchange({ url: `http://${host}/chat`, method: "POST", headers: {} }, {}, async (reply) => {
      await reply.response.body?.cancel();
      throw new ProviderError("bad_response", "unusable");
    }),
    ProviderError,
  );
  assert.equal(refused.message, "unusable");
  assert.deepEqual([calls.usage().requests, calls.usage().errors], [3, 1]);
  await server.shutdown();
});

Deno.test("failFast: a long Retry-After fails at once, a short one and a 5xx are still retried", async () => {
  const answers: Array<{ status: number; retryAfter?: string }> = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    await request.body?.cancel();
    const next = answers.shift() ?? { status: 200 };
    return next.status === 200 ? Response.json({ text: "hi" }) : new Response("wait", {
      status: next.status,
      headers: next.retryAfter ? { "retry-after": next.retryAfter } : {},
    });
  });
  const host = `127.0.0.1:${server.addr.port}`;
  const clock = new FakeClock();
  const calls = runner(host, clock);
  const send = (failFast: boolean) =>
    calls.exchange({ url: `http://${host}/chat`, method: "POST", headers: {} }, { failFast }, async (reply) => {
      const { text } = await reply.response.json();
      return { content: text, toolCalls: [], finishReason: "stop" };
    });
  answers.push({ status: 429, retryAfter: "20" });
  const limited = await rejection(send(true), ProviderError);
  assert.equal(limited.code, "rate_limited");
  assert.equal(limited.retryable, false);
  assert.deepEqual(clock.sleeps, [], "no wait");
  answers.push({ status: 429, retryAfter: "2" }, { status: 503 });
  assert.equal((await send(true)).content, "hi");
  assert.equal(clock.sleeps.length, 2, "a short Retry-After and a 5xx keep their retries");
  answers.push({ status: 429, retryAfter: "20" });
  assert.equal((await send(false)).content, "hi");
  assert.equal(clock.sleeps.at(-1), 20_000, "without failFast the wait is honoured");
  await server.shutdown();
});
