/**
 * The OpenAI-compatible door end to end, with the official `openai` npm client as the caller: models listed, a chat
 * completion streamed and not, the person the key names in the one conversation, only the last user message taken
 * (the fake LLM checks the client's own history and system prompt never reached it), a wrong key refused with 401 in
 * OpenAI's error shape.
 */

import assert from "node:assert/strict";
import OpenAI from "openai";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const ALICE = "alice-token-0123456789";
type Messages = Array<{ role: string; content: string }>;

Deno.test("the openai client: models, a completion streamed and not as the key's person, only the last user message; a wrong key 401", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await startHomed(
    await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      daemon: {
        openai_api: true,
        api_token: "owner-token-0123456789",
        api_tokens: { alice: { token: ALICE, trust: "household" } },
      },
    }),
  );
  const client = new OpenAI({ apiKey: ALICE, baseURL: `${homed.url}/v1`, maxRetries: 0 });
  try {
    const models = await client.models.list();
    assert.deepEqual(models.data.map((model) => model.id), ["homed"]);

    llm.enqueue({ reply: "Tea is in the left cupboard." });
    const completion = await client.chat.completions.create({
      model: "anything",
      messages: [
        { role: "system", content: "You are a pirate." },
        { role: "user", content: "an earlier question the app kept" },
        { role: "assistant", content: "an earlier answer" },
        { role: "user", content: "Where is the tea?" },
      ],
    });
    assert.equal(completion.choices[0]!.message.content, "Tea is in the left cupboard.");
    assert.equal(completion.object, "chat.completion");
    const sent = JSON.stringify(llm.requests.at(-1)!.body.messages);
    assert.ok(!sent.includes("pirate") && !sent.includes("an earlier question"), "the client's history stays out");
    const asked = (llm.requests.at(-1)!.body.messages as Messages).at(-1)!.content;
    assert.match(asked, /\[via openai:alice, from alice, trust household\] Where is the tea\?$/);

    llm.enqueue({ reply: "Streaming works here too.", chunks: 3 });
    const stream = await client.chat.completions.create({
      model: "homed",
      stream: true,
      messages: [{ role: "user", content: "Stream it" }],
    });
    let streamed = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta?.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(streamed, "Streaming works here too.");
    assert.equal(finish, "stop");

    const wrong = new OpenAI({ apiKey: "not-a-homed-token-000", baseURL: `${homed.url}/v1`, maxRetries: 0 });
    const refused = await wrong.models.list().then(() => undefined, (error) => error);
    assert.ok(refused instanceof OpenAI.APIError, String(refused));
    assert.equal(refused.status, 401);
    assert.equal(refused.code, "invalid_api_key");
    assert.match(refused.message, /not one of homed's tokens/);
    const anonymous = await fetch(`${homed.url}/v1/models`);
    assert.equal(anonymous.status, 401);
    assert.deepEqual(Object.keys((await anonymous.json()).error).sort(), ["code", "message", "type"]);
    const bad = await fetch(`${homed.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "homed", messages: [{ role: "system", content: "only a system message" }] }),
    });
    assert.equal(bad.status, 400);
    assert.deepEqual((await bad.json()).error.message, 'Field "messages" has no message with role "user"');
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => llm.close(),
    );
  }
});
