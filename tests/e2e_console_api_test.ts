/**
 * The endpoints the console's status and turn-inspector pages read, through a running homed: the turns with their
 * requests (system sections, reference sections, tools, response, cache analysis), usage per day costed at
 * `llm.prices`, the newest log lines masked, the conversation; each refused below its trust with a message naming
 * the trust needed and the caller.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const OWNER = "owner-token-0123456789";
const ALICE = "alice-token-0123456789";
const GUS = "guest-token-0123456789";

Deno.test("console API: turns with their requests, usage costed per day, log lines masked, the conversation; trust enforced", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await startHomed(
    await workspace({
      llm: {
        base_url: llm.baseUrl,
        api_key: TEST_KEY,
        prices: { input: 2, input_cache_hit: 0.5, output: 8, currency: "CNY" },
      },
      onebot: { enabled: false },
      daemon: {
        api_token: OWNER,
        api_tokens: { alice: { token: ALICE, trust: "household" }, gus: { token: GUS, trust: "guest" } },
      },
    }),
  );
  const get = (path: string, token = OWNER) =>
    fetch(`${homed.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const chat = async (text: string, token = OWNER) => {
    const response = await fetch(`${homed.url}/api/chat`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ text }),
    });
    return await response.json();
  };
  try {
    llm.enqueue({
      reply: "Good morning.",
      usage: { prompt_tokens: 900, completion_tokens: 20, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 900 },
    });
    assert.equal((await chat("Good morning")).reply, "Good morning.");
    llm.enqueue({
      toolCalls: [{ name: "output_list_channels", arguments: "{}" }],
      usage: {
        prompt_tokens: 1000,
        completion_tokens: 10,
        prompt_cache_hit_tokens: 768,
        prompt_cache_miss_tokens: 232,
      },
    }, {
      reply: "You have the http channel.",
      usage: {
        prompt_tokens: 1100,
        completion_tokens: 12,
        prompt_cache_hit_tokens: 1024,
        prompt_cache_miss_tokens: 76,
      },
    });
    assert.equal((await chat("Which channels do I have?")).reply, "You have the http channel.");

    const turns = (await (await get("/api/turns")).json()).turns;
    assert.equal(turns.length, 2);
    assert.equal(turns[0].text, "Which channels do I have?");
    assert.equal(turns[0].rounds, 2);
    assert.equal(turns[0].prompt_tokens, 2100);
    assert.equal(turns[0].cost, (308 * 2 + 1792 * 0.5 + 22 * 8) / 1e6);
    const detail = await (await get(`/api/turns/${turns[0].id}`)).json();
    assert.equal(detail.requests.length, 2);
    const [round1, round2] = detail.requests;
    assert.equal(round1.system_sections[0].title, "Persona");
    assert.ok(round1.system_sections.some((section: { title: string }) => section.title === "Tools and channels"));
    assert.ok(round1.reference_sections.some((section: { title: string }) => section.title === "Now"));
    assert.ok(round1.tools.includes("output_list_channels"));
    assert.deepEqual(round2.tools, round1.tools, "one view of the tools for the whole turn");
    assert.equal(round1.history.messages, 2, "the first exchange is history now");
    assert.equal(round1.cache.miss_reason, undefined, "the system message and history were kept");
    assert.equal(round1.cache.hit_tokens, 768);
    assert.equal(round2.response.content, "You have the http channel.");
    assert.equal(round2.messages.at(-1).role, "tool");
    const first = await (await get(`/api/turns/${turns[1].id}`)).json();
    assert.match(first.requests[0].cache.miss_reason, /first request since homed started/);
    // What the inspector shows is what the fake LLM received.
    assert.equal(round2.messages.length, (llm.requests.at(-1)!.body.messages as unknown[]).length);

    const usage = await (await get("/api/usage", ALICE)).json();
    assert.equal(usage.currency, "CNY");
    assert.equal(usage.days.length, 1);
    assert.equal(usage.days[0].requests, 3);
    assert.equal(usage.days[0].prompt_tokens, 3000);
    assert.equal(usage.days[0].cache_hit_share, Math.round(1792 / 3000 * 1000) / 1000);
    assert.equal(usage.days[0].cost, (1208 * 2 + 1792 * 0.5 + 42 * 8) / 1e6);
    assert.deepEqual(usage.vision, { calls: 0, failures: 0 });

    // The owner's turns on http are the owner's private chat (issue 34.4): a household member's page holds none.
    assert.deepEqual((await (await get("/api/conversation", ALICE)).json()).entries, []);
    const conversation = (await (await get("/api/conversation", OWNER)).json()).entries;
    assert.deepEqual(conversation.map((entry: { role: string }) => entry.role), [
      "user",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    assert.equal(conversation[3].tool_calls[0].name, "output_list_channels");
    assert.equal(conversation[4].tool_call_id, conversation[3].tool_calls[0].id);
    assert.equal(conversation[0].source, "http");

    const logs = (await (await get("/api/logs?n=500")).json()).lines;
    assert.ok(logs.some((line: { message: string }) => line.message.includes("Listening on")), JSON.stringify(logs));
    assert.ok(!JSON.stringify(logs).includes(OWNER) && !JSON.stringify(logs).includes(TEST_KEY));

    const refusals: Array<[string, string, RegExp]> = [
      ["/api/turns", ALICE, /The turn inspector needs trust owner; this request came from "alice" \(trust household\)/],
      ["/api/logs", ALICE, /Log lines need trust owner; this request came from "alice"/],
      ["/api/usage", GUS, /Usage figures need trust household or owner; this request came from "gus" \(trust guest\)/],
      ["/api/conversation", GUS, /The conversation needs trust household or owner; this request came from "gus"/],
    ];
    for (const [path, token, message] of refusals) {
      const response = await get(path, token);
      assert.equal(response.status, 403, path);
      assert.match((await response.json()).error.message, message);
    }
    const unknown = await get("/api/turns/no-such-turn");
    assert.equal(unknown.status, 404);
    assert.match((await unknown.json()).error.message, /No recent turn "no-such-turn"/);
    const bad = await get("/api/logs?n=5000");
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /"n" must be a whole number from 1 to 500, got "5000"/);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => llm.close(),
    );
  }
});

Deno.test("config: a bad llm.prices value names the key and the value", async () => {
  const ws = await workspace({
    llm: { prices: { input: -1, input_cache_hit: 0, output: 1 } },
    onebot: { enabled: false },
  });
  const failed = await startHomed(ws).then(() => undefined, (error: Error) => error.message);
  assert.match(failed ?? "", /llm\.prices\.input/);
  assert.match(failed ?? "", /-1/);
  await Deno.remove(ws.dir, { recursive: true });
});
