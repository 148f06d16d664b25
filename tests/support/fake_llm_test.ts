import assert from "node:assert/strict";
import { checkRequest, FakeLlm } from "./fake_llm.ts";

const system = { role: "system", content: "# Persona\nmore" };
const user = { role: "user", content: "hi" };
const call = (id: string) => ({ id, type: "function", function: { name: "t", arguments: "{}" } });

Deno.test("the contract check catches every kind of bad request", () => {
  const expect = {
    personaPrefix: "# Persona",
    thinking: false as const,
    model: "m",
    maxTokens: 5,
    contextWindow: 1_000,
  };
  const good = { model: "m", max_tokens: 5, thinking: { type: "disabled" }, messages: [system, user] };
  assert.deepEqual(checkRequest(good, expect), []);
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ ...good, messages: [user] }, /expected exactly one system message, got 0/],
    [{ ...good, messages: [system, system, user] }, /expected exactly one system message, got 2/],
    [{ ...good, messages: [user, system, user] }, /first message is user, not system/],
    [{ ...good, messages: [{ role: "system", content: "other" }, user] }, /does not begin with the persona/],
    [
      { ...good, messages: [system, user, { role: "tool", tool_call_id: "x", content: "r" }] },
      /answers tool_call_id x, which is not pending/,
    ],
    [
      {
        ...good,
        messages: [system, user, { role: "assistant", content: null, tool_calls: [call("a"), call("b")] }, {
          role: "tool",
          tool_call_id: "a",
          content: "r",
        }, user],
      },
      /comes before results for b/,
    ],
    [
      { ...good, messages: [system, user, { role: "assistant", content: null, tool_calls: [call("a")] }] },
      /no results for tool calls a/,
    ],
    [{ ...good, messages: [system, user, { role: "assistant", content: "x" }] }, /last message is assistant/],
    [
      {
        ...good,
        messages: [system, user, {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "j", type: "function", function: { name: "t", arguments: "{not json" } }],
        }, { role: "tool", tool_call_id: "j", content: "r" }],
      },
      /tool_call j has arguments that are not a JSON object/,
    ],
    [{ ...good, thinking: undefined }, /thinking is undefined, expected \{"type":"disabled"\}/],
    [{ ...good, model: "other" }, /model is other/],
    [{ ...good, max_tokens: 9 }, /max_tokens is 9/],
    [{ ...good, tools: [{ type: "function", function: { name: "a.b" } }] }, /bad tool declaration/],
    [
      { ...good, max_tokens: 5, messages: [system, { role: "user", content: "x".repeat(3_500) }] },
      /maximum context length is 1000 tokens; the request has 1\d{3} in the prompt plus 5 for the reply/,
    ],
  ];
  for (const [body, pattern] of cases) {
    const problems = checkRequest(body, expect);
    assert.ok(problems.some((p) => pattern.test(p)), `${pattern}: ${problems.join(" | ")}`);
  }
});

Deno.test("a violating request is answered 400, recorded, and fails close()", async () => {
  const fake = FakeLlm.start({ thinking: false });
  fake.enqueue({ reply: "never sent" });
  const response = await fetch(`${fake.baseUrl}/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", messages: [system, user] }),
  });
  assert.equal(response.status, 400);
  assert.match((await response.json()).error.message, /thinking is undefined/);
  assert.equal(fake.violations.length, 1);
  assert.equal(fake.remaining, 1, "the scripted answer is kept for a valid request");
  await assert.rejects(fake.close(), /the fake LLM saw requests that break the contract/);
});

Deno.test("an unscripted request is a violation, not a silent answer", async () => {
  const fake = FakeLlm.start();
  const response = await fetch(`${fake.baseUrl}/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", messages: [system, user] }),
  });
  assert.equal(response.status, 400);
  await response.body?.cancel();
  assert.match(fake.violations[0]!, /the script is empty/);
  fake.violations.length = 0;
  await fake.close();
});

Deno.test("close fails on scripted answers nobody asked for", async () => {
  const fake = FakeLlm.start();
  fake.enqueue({ reply: "never asked" });
  await assert.rejects(fake.close(), /1 scripted answer\(s\) were never asked for/);
});

Deno.test("a request with a wrong API key is a violation, answered 401", async () => {
  const fake = FakeLlm.start({ apiKey: "sk-right-0000000000" });
  fake.enqueue({ reply: "for the right key" });
  const response = await fetch(`${fake.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-wrong" },
    body: JSON.stringify({ messages: [system, user] }),
  });
  assert.equal(response.status, 401);
  await response.body?.cancel();
  await assert.rejects(fake.close(), /request #1: sent with a wrong API key/);
});
