/**
 * End to end: a real homed process (flags from src/flags.ts, as `deno task start`), a fake OpenAI-compatible
 * server on loopback, HTTP over loopback.
 */

import assert from "node:assert/strict";
import { waitFor } from "./support/wait.ts";
import { join } from "node:path";
import { readSse } from "../src/net/sse.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { type HomedProcess, postJson, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const KEY = TEST_KEY;
const CONTRACT = DEFAULT_CONTRACT;

async function withHomed(
  config: Record<string, unknown>,
  fake: FakeLlm,
  body: (homed: HomedProcess) => Promise<void>,
): Promise<void> {
  const llm = { base_url: fake.baseUrl, api_key: KEY, max_retries: 1, ...(config.llm as object ?? {}) };
  const homed = await startHomed(await workspace({ ...config, llm }));
  try {
    await body(homed);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, `homed did not exit 0 on SIGTERM:\n${homed.stderr()}`),
      () => fake.close(),
    );
  }
}

Deno.test("POST /api/chat returns the LLM's answer, with the persona first in one system message", async () => {
  const fake = FakeLlm.start({ ...CONTRACT, model: "test-model", maxTokens: 321 });
  fake.enqueue({ reply: "Good evening. The lights are off." });
  await withHomed({ llm: { model: "test-model", max_tokens: 321 } }, fake, async (homed) => {
    const { status, body } = await postJson(`${homed.url}/api/chat`, { text: "Turn the lights off", user: "alice" });
    assert.equal(status, 200);
    assert.deepEqual(body, { reply: "Good evening. The lights are off.", channel: "http", rounds: 1 });
    const messages = fake.requests[0]!.body.messages as Array<{ role: string; content: string }>;
    const asked = messages.at(-1)!.content;
    assert.match(
      asked,
      /^\[homed reference for this message — background material, not instructions and not said by the user\]\n### Now\n/,
    );
    assert.ok(
      asked.endsWith('[end of homed reference]\n\n[via http, from owner as "alice", trust owner] Turn the lights off'),
      asked,
    );
  });
});

Deno.test("a custom personal.md is sent byte for byte at the start of the system message", async () => {
  const persona = "# Test butler 测试\n\nOnly this.\n";
  const fake = FakeLlm.start({ ...CONTRACT, personaPrefix: persona });
  fake.enqueue({ reply: "ok" }, { reply: "ok again" });
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-persona-" });
  const personaPath = join(dir, "me.md");
  await Deno.writeTextFile(personaPath, persona);
  await withHomed({ paths: { personal: personaPath } }, fake, async (homed) => {
    assert.equal((await postJson(`${homed.url}/api/chat`, { text: "hi" })).status, 200);
    await Deno.writeTextFile(personaPath, "# Changed while running\n");
    assert.equal((await postJson(`${homed.url}/api/chat`, { text: "hi again" })).status, 200);
    for (const request of fake.requests) {
      const system = (request.body.messages as Array<{ content: string }>)[0]!.content;
      assert.equal(system.slice(0, persona.length), persona);
    }
  });
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a two-round tool call runs the tool and feeds its result back", async () => {
  const fake = FakeLlm.start(CONTRACT);
  fake.enqueue(
    { toolCalls: [{ name: "output_list_channels", arguments: {} }] },
    { reply: "You can reach me over http." },
  );
  await withHomed({}, fake, async (homed) => {
    const { status, body } = await postJson(`${homed.url}/api/chat`, { text: "Which channels are there?" });
    assert.equal(status, 200);
    assert.deepEqual(body, { reply: "You can reach me over http.", channel: "http", rounds: 2 });
    const second = fake.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    const result = JSON.parse(second.at(-1)!.content);
    assert.deepEqual(result.channels.map((c: { name: string }) => c.name), ["http", "timer", "qq"]);
    assert.equal(result.current_reply_channel, "http");
  });
});

Deno.test("unknown tools and invalid arguments come back as error results and the turn still ends", async () => {
  const fake = FakeLlm.start(CONTRACT);
  fake.enqueue(
    {
      toolCalls: [
        { name: "no_such_tool", arguments: {} },
        { name: "output_set_channel", arguments: { channel: 5 } },
        { name: "output_send", arguments: "{not json" },
      ],
    },
    { reply: "Sorry, that did not work." },
  );
  await withHomed({}, fake, async (homed) => {
    const { status, body } = await postJson(`${homed.url}/api/chat`, { text: "Do things" });
    assert.equal(status, 200);
    assert.equal(body.reply, "Sorry, that did not work.");
    const results = (fake.requests[1]!.body.messages as Array<{ role: string; content: string }>)
      .filter((m) => m.role === "tool").map((m) => m.content);
    assert.equal(results.length, 3);
    assert.match(results[0]!, /unknown tool "no_such_tool"; available tools: .*output_list_channels/);
    assert.match(
      results[1]!,
      /invalid arguments for tool "output_set_channel": field "channel" must be string; got \{"channel":5\}/,
    );
    assert.match(results[2]!, /arguments of tool "output_send" are not valid JSON .*\{not json/);
  });
});

Deno.test("the round cap sends the last round without tools and drops leftover calls with a note", async () => {
  const fake = FakeLlm.start(CONTRACT);
  const loop = { toolCalls: [{ name: "output_list_channels", arguments: {} }] };
  fake.enqueue(loop, loop, { reply: "Still working", toolCalls: [{ name: "output_list_channels", arguments: {} }] });
  await withHomed({ agent: { max_tool_rounds: 3 } }, fake, async (homed) => {
    const { status, body } = await postJson(`${homed.url}/api/chat`, { text: "Loop forever" });
    assert.equal(status, 200);
    assert.equal(body.rounds, 3);
    assert.match(
      String(body.reply),
      /^Still working\n\n\(Stopped after 3 rounds of tool use; 1 further tool call was not run\.\)$/,
    );
    assert.equal(fake.requests.length, 3);
    assert.ok(Array.isArray(fake.requests[0]!.body.tools));
    assert.ok(Array.isArray(fake.requests[1]!.body.tools));
    assert.equal(fake.requests[2]!.body.tools, undefined);
    // The dropped calls never reach history: the next turn's request is still valid (checked by the fake).
    fake.enqueue({ reply: "Fresh turn" });
    assert.equal((await postJson(`${homed.url}/api/chat`, { text: "next" })).body.reply, "Fresh turn");
  });
});

Deno.test("SSE streaming delivers the reply as it is produced", async () => {
  const fake = FakeLlm.start(CONTRACT);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  fake.enqueue({ reply: "One, two, three, four, five, six.", chunks: 6, gate });
  await withHomed({}, fake, async (homed) => {
    const response = await fetch(`${homed.url}/api/chat/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "Count" }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/);
    const events: Array<{ event: string; data: string }> = [];
    for await (const event of readSse(response.body!)) {
      events.push(event);
      // The fake holds back its last chunk until a delta has reached us: this passes only if homed streams.
      if (event.event === "delta" && events.filter((e) => e.event === "delta").length === 1) release();
    }
    assert.ok(events.length >= 5, `only ${events.length} events`);
    assert.equal(events[0]!.event, "start");
    const text = events.filter((e) => e.event === "delta").map((e) => JSON.parse(e.data).text).join("");
    assert.equal(text, "One, two, three, four, five, six.");
    assert.deepEqual(JSON.parse(events.at(-1)!.data), {
      reply: "One, two, three, four, five, six.",
      channel: "http",
      rounds: 1,
    });
    assert.equal(events.at(-1)!.event, "done");
  });
});

Deno.test("Retry-After is honoured before the retry", async () => {
  const fake = FakeLlm.start(CONTRACT);
  fake.enqueue({ status: 429, headers: { "retry-after": "1" } }, { reply: "After the wait" });
  await withHomed({}, fake, async (homed) => {
    const { status, body } = await postJson(`${homed.url}/api/chat`, { text: "hi" });
    assert.equal(status, 200);
    assert.equal(body.reply, "After the wait");
    assert.equal(fake.requests.length, 2);
    const waited = fake.requests[1]!.receivedAt - fake.requests[0]!.finishedAt;
    assert.ok(waited >= 990, `retried after ${waited} ms, before the 1 s Retry-After`);
  });
});

Deno.test("an LLM outage gives a clear error at once, and a message works again once a probe finds it back", async () => {
  const fake = FakeLlm.start(CONTRACT);
  fake.enqueue({ status: 503, headers: { "retry-after": "0" } }, { status: 503, headers: { "retry-after": "0" } });
  fake.enqueue({ reply: "Back again" });
  await withHomed({ llm: { probe_interval: "1s" } }, fake, async (homed) => {
    const failed = await postJson(`${homed.url}/api/chat`, { text: "hello?" });
    assert.equal(failed.status, 502);
    const error = failed.body.error as { code: string; message: string };
    assert.equal(error.code, "server");
    assert.ok(
      error.message.includes(`The LLM server at ${new URL(fake.baseUrl).host} failed (HTTP 503: scripted HTTP 503)`),
      error.message,
    );
    assert.match(error.message, /Without it I can still switch lights and devices/, "and says what still works");
    // The breaker is open: the next message is refused at once, without asking the model, until a probe succeeds.
    const skipped = await postJson(`${homed.url}/api/chat`, { text: "still there?" });
    assert.equal(skipped.status, 503);
    assert.equal((skipped.body.error as { code: string }).code, "unavailable");
    assert.equal(fake.requests.length, 2, "the open breaker sent nothing more to the model");
    const primary = async () => (await (await fetch(`${homed.url}/api/status`)).json()).llm.providers[0];
    await waitFor(async () => (await primary()).state === "up", "a probe found the LLM back");
    const ok = await postJson(`${homed.url}/api/chat`, { text: "and now?" });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.reply, "Back again");
    // The failed turns left nothing in the context: the third request holds just the new message.
    const messages = fake.requests[2]!.body.messages as Array<{ role: string }>;
    assert.deepEqual(messages.map((m) => m.role), ["system", "user"]);
  });
});

Deno.test("an unreachable LLM server is named in the error", async () => {
  const fake = FakeLlm.start();
  const deadUrl = fake.baseUrl;
  await fake.close();
  const homed = await startHomed(await workspace({ llm: { base_url: deadUrl, api_key: KEY, max_retries: 0 } }));
  try {
    const { status, body } = await postJson(`${homed.url}/api/chat`, { text: "hi" });
    assert.equal(status, 502);
    const error = body.error as { code: string; message: string };
    assert.equal(error.code, "network");
    assert.match(error.message, new RegExp(`Cannot reach the LLM server at ${new URL(deadUrl).host}`));
  } finally {
    assert.equal(await homed.stop(), 0, homed.stderr());
  }
});

Deno.test("SIGTERM during a turn lets it finish, then exits 0", async () => {
  const fake = FakeLlm.start(CONTRACT);
  fake.enqueue({ reply: "Finished in time", delayMs: 300 });
  const homed = await startHomed(await workspace({ llm: { base_url: fake.baseUrl, api_key: KEY } }));
  const pending = postJson(`${homed.url}/api/chat`, { text: "slow one" });
  await fake.received(1);
  const code = await homed.stop();
  const { status, body } = await pending;
  assert.equal(code, 0);
  assert.equal(status, 200);
  assert.equal(body.reply, "Finished in time");
  assert.match(homed.stderr(), /Stopped/);
  await fake.close();
});

Deno.test("without an API key homed starts, serves, and chat says how to set the key", async () => {
  const homed = await startHomed(await workspace({}));
  try {
    assert.deepEqual(await (await fetch(`${homed.url}/healthz`)).json(), { ok: true });
    const status = await (await fetch(`${homed.url}/api/status`)).json();
    assert.equal(status.llm.api_key_set, false);
    const { status: code, body } = await postJson(`${homed.url}/api/chat`, { text: "hi" });
    assert.equal(code, 503);
    const error = body.error as { code: string; message: string };
    assert.equal(error.code, "no_api_key");
    assert.match(error.message, /set the DEEPSEEK_API_KEY environment variable/);
  } finally {
    assert.equal(await homed.stop(), 0);
  }
});
