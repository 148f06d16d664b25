/**
 * End to end: the house keeps a model when the cloud model fails. A real homed process with a primary that answers
 * 503 (its every request counted) and a fallback, both fake OpenAI-compatible servers on loopback; no timed
 * assertions — every wait is for something to happen.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

Deno.test("a primary answering 503: the fallback answers, the primary is skipped while down, and used again once it is back", async () => {
  const primary = FakeLlm.start(DEFAULT_CONTRACT);
  const fallback = FakeLlm.start({ ...DEFAULT_CONTRACT, model: "llama3" });
  primary.down = 503;
  const homed = await startHomed(
    await workspace({
      llm: {
        base_url: primary.baseUrl,
        api_key: TEST_KEY,
        max_retries: 1,
        probe_interval: "1s",
        fallbacks: [{ model: "llama3", base_url: fallback.baseUrl, api_key: TEST_KEY }],
      },
    }),
  );
  const chat = async (text: string) => {
    const { status, body } = await postJson(`${homed.url}/api/chat`, { text });
    assert.equal(status, 200, JSON.stringify(body));
    return body.reply;
  };
  const llmStatus = async () => (await (await fetch(`${homed.url}/api/status`)).json()).llm;
  try {
    fallback.enqueue({ reply: "The fallback answers." });
    assert.equal(await chat("Is anyone there?"), "The fallback answers.");
    const asked = primary.requests.length;
    assert.equal(asked, 2, "the primary was asked once, and retried once (llm.max_retries)");

    for (const n of [1, 2, 3]) {
      fallback.enqueue({ reply: `Fallback answer ${n}.` });
      assert.equal(await chat(`Message ${n}`), `Fallback answer ${n}.`);
    }
    assert.equal(primary.requests.length, asked, "the next three messages sent nothing to the primary");

    const down = await llmStatus();
    assert.equal(down.model, "deepseek-v4-flash");
    assert.deepEqual(
      down.providers.map((p: { name: string; role: string; state: string }) => [p.name, p.role, p.state]),
      [
        [`deepseek-v4-flash@${new URL(primary.baseUrl).host}`, "primary", "down"],
        [`llama3@${new URL(fallback.baseUrl).host}`, "fallback", "up"],
      ],
    );
    assert.match(down.providers[0].last_error, /HTTP 503: scripted outage/);
    assert.equal(down.budget, null);
    assert.equal(down.usage.requests, asked + 4);

    // The primary comes back: within one probe interval a probe finds it, and the next message goes to it.
    primary.down = undefined;
    primary.enqueue({ reply: "The primary is back." });
    await waitFor(async () => (await llmStatus()).providers[0].state === "up", "the probe to find the primary back");
    assert.ok(primary.modelRequests >= 1, "a probe asked GET /models");
    assert.equal(await chat("And now?"), "The primary is back.");
    assert.equal(primary.requests.length, asked + 1);
    // The primary got the whole conversation, the fallback's answers included.
    const messages = primary.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    assert.ok(messages.some((message) => message.content === "Fallback answer 3."));
    assert.equal(fallback.requests.length, 4);
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => primary.close(),
      () => fallback.close(),
    );
  }
});
