/**
 * Memory end to end, as far as it is built: the conversation survives a restart (layer 1 saved in the data dir), and
 * every exchange is journaled as a memory candidate.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

Deno.test("the conversation survives a restart, and every exchange is journaled with its event id", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({ llm: { base_url: fake.baseUrl, api_key: TEST_KEY } });
  fake.enqueue({ reply: "Noted: bins on Tuesday." }, { reply: "On Tuesday." });
  let homed = await startHomed(ws);
  try {
    assert.equal((await postJson(`${homed.url}/api/chat`, { text: "The bins go out on Tuesday" })).status, 200);
    assert.equal(await homed.stop({ keep: true }), 0, homed.stderr());
    homed = await startHomed(ws);
    assert.match(homed.stderr(), /Restored 2 context entries/);
    assert.equal((await postJson(`${homed.url}/api/chat`, { text: "When do the bins go out?" })).status, 200);
    const messages = fake.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(messages.slice(1, 3), [
      { role: "user", content: "[via http, from owner, trust owner] The bins go out on Tuesday" },
      { role: "assistant", content: "Noted: bins on Tuesday." },
    ]);
    assert.equal(await homed.stop({ keep: true }), 0, homed.stderr());
    const journal = (await Deno.readTextFile(join(ws.dir, "data", "memory", "candidates.jsonl"))).trim().split("\n")
      .map((line) => JSON.parse(line));
    assert.deepEqual(journal.map((entry) => [entry.role, entry.sender, entry.text]), [
      ["user", "owner", "The bins go out on Tuesday"],
      ["assistant", "butler", "Noted: bins on Tuesday."],
      ["user", "owner", "When do the bins go out?"],
      ["assistant", "butler", "On Tuesday."],
    ]);
    assert.equal(journal[0].eventId, journal[1].eventId, "both halves of an exchange carry its input event id");
  } finally {
    await teardown(
      () => homed.stop(),
      () => fake.close(),
      () => Deno.remove(ws.dir, { recursive: true }).catch(() => {}),
    );
  }
});

Deno.test("an exchange that left the context is recalled later through memory_recall, with its event id", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({ llm: { base_url: fake.baseUrl, api_key: TEST_KEY }, memory: { context_size: 4 } });
  const homed = await startHomed(ws);
  try {
    fake.enqueue({ reply: "Noted: the spare key is under the blue flowerpot." }, { reply: "Dumplings it is." }, {
      reply: "I will remind you.",
    });
    for (const text of ["The spare key is under the blue flowerpot", "We eat dumplings tonight", "Dentist next week"]) {
      assert.equal((await postJson(`${homed.url}/api/chat`, { text })).status, 200);
    }
    fake.enqueue(
      { toolCalls: [{ name: "memory_recall", arguments: { query: "spare key" } }] },
      { reply: "Under the blue flowerpot." },
    );
    const answer = await postJson(`${homed.url}/api/chat`, { text: "Where did I say the spare key is?" });
    assert.equal(answer.body.reply, "Under the blue flowerpot.");
    const asked = fake.requests[3]!.body.messages as Array<{ role: string; content: string }>;
    assert.ok(
      !asked.some((m) => m.content?.startsWith("[via http, from owner, trust owner] The spare key")),
      "not in the context",
    );
    assert.match(
      asked.at(-1)!.content,
      /### Earlier in this household \(memory; memory_recall for more\)\n> - \S+ owner: The spare key/,
    );
    const result = JSON.parse((fake.requests[4]!.body.messages as Array<{ content: string }>).at(-1)!.content);
    assert.equal(result[0].kind, "document");
    assert.match(result[0].text, /owner: The spare key is under the blue flowerpot/);
    // The exchange said right after it was found by its words too (its context field): it comes along, named.
    assert.equal(result[0].provenance.length, 2);
    assert.match(result[0].text, /\nowner: We eat dumplings tonight/);
    // When and from whom: each message the item came from, its sender, channel and trust.
    assert.deepEqual(
      result[0].from.map((from: Record<string, string>) => [from.sender, from.source, from.trust]),
      [["owner", "http", "owner"], ["owner", "http", "owner"]],
    );
    assert.match(result[0].from[0].time, /^\d{4}-\d{2}-\d{2}T/);
    const status = await (await fetch(`${homed.url}/api/status`)).json();
    assert.ok(status.services.memory.documents >= 1);
    const inspected = await (await fetch(`${homed.url}/api/memory/documents?q=${encodeURIComponent("spare key")}`))
      .json();
    assert.match(inspected.documents[0].summary, /^owner: The spare key is under the blue flowerpot/);
    assert.equal(inspected.documents[0].hits, 1, "recall counted one hit; inspecting does not");
    const bad = await fetch(`${homed.url}/api/memory/documents?q=x&k=0`);
    assert.equal((await bad.json()).error.message, 'Query parameter "k" must be a whole number from 1 to 50, got "0"');
  } finally {
    await teardown(async () => assert.equal(await homed.stop(), 0, homed.stderr()), () => fake.close());
  }
});
