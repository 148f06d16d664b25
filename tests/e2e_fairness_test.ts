/**
 * Fairness end to end: a real homed, a real LLM fake over loopback. While one guest's turn is in flight, 20 more
 * guest chats and then one of the owner's are queued: the owner's is the very next turn, not the 22nd; and a sender
 * who already has as many messages waiting as one sender may is refused with 429, naming the bound.
 */

import assert from "node:assert/strict";
import { TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { waitFor } from "./support/wait.ts";

const OWNER = "owner-token-0123456789";
const VISITOR = "visitor-token-012345678";

function chat(url: string, token: string, text: string): Promise<Response> {
  return fetch(`${url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ text }),
  });
}

/** The user text of the turn a recorded LLM request answers (in the last user message, after its reference block). */
function askedIn(body: Record<string, unknown>): string {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.filter((message) => message.role === "user").at(-1);
  // The reference block before the text may quote earlier turns: the text itself is the last mention.
  return [...String(last?.content ?? "").matchAll(/guest \d+|owner: lights off/g)].at(-1)?.[0] ?? "";
}

Deno.test("the owner's message behind 20 guest chats is the next turn; a sender's lane is bounded with 429", async () => {
  const fake = FakeLlm.start({ apiKey: TEST_KEY });
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  // The first turn's LLM call waits until every other chat is queued; the rest answer at once.
  fake.enqueue({ raw: async () => (await held, replyOf("first")) });
  for (let i = 0; i < 21; i++) fake.enqueue({ raw: () => replyOf(`answer ${i}`) });
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY, max_retries: 0 },
    onebot: { enabled: false },
    daemon: { api_token: OWNER, api_tokens: { visitor: { token: VISITOR, trust: "guest" } } },
    io: { max_waiting_per_sender: 20 },
  });
  const homed = await startHomed(ws);
  try {
    const responses: Array<Promise<Response>> = [chat(homed.url, VISITOR, "guest 0")];
    await fake.received(1);
    for (let i = 1; i <= 20; i++) responses.push(chat(homed.url, VISITOR, `guest ${i}`));
    await waitFor(async () => {
      const status = await (await fetch(`${homed.url}/api/status`, { headers: { authorization: `Bearer ${OWNER}` } }))
        .json();
      return JSON.stringify(status).includes('"queued_inputs":20');
    }, "20 guest chats queued");
    // The guest's lane is full: one more is refused at once, naming the bound.
    const refused = await chat(homed.url, VISITOR, "guest 21");
    assert.equal(refused.status, 429);
    assert.deepEqual((await refused.json()).error, {
      code: "too_many_waiting",
      message: "visitor already has 20 messages waiting; wait for the butler to answer them",
    });
    responses.push(chat(homed.url, OWNER, "owner: lights off"));
    await waitFor(async () => {
      const status = await (await fetch(`${homed.url}/api/status`, { headers: { authorization: `Bearer ${OWNER}` } }))
        .json();
      return JSON.stringify(status).includes('"queued_inputs":21');
    }, "the owner's chat queued too");
    release();
    const statuses = await Promise.all(responses.map(async (response) => {
      const answer = await response;
      await answer.body?.cancel();
      return answer.status;
    }));
    assert.deepEqual(statuses, Array(22).fill(200));
    const order = fake.requests.map((request) => askedIn(request.body));
    assert.equal(order[0], "guest 0", "the turn in flight");
    assert.equal(
      order[1],
      "owner: lights off",
      `the owner's turn came next, not after the guests: ${order.join(", ")}`,
    );
    assert.deepEqual(
      order.slice(2).sort((a, b) => Number(a.split(" ")[1]) - Number(b.split(" ")[1])),
      Array.from({ length: 20 }, (_, i) => `guest ${i + 1}`),
      "then every guest chat, once",
    );
  } finally {
    release(); // a failed assertion must not leave the held LLM request (and so the fake's close) waiting for ever
    await homed.stop();
    await fake.close();
  }
});

function replyOf(text: string): Response {
  return Response.json({
    id: "chatcmpl-fair",
    object: "chat.completion",
    created: 0,
    model: "deepseek-chat",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  });
}
