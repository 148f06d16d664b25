/**
 * Each person sees only what is theirs (issue 34, point 4), end to end: a real homed with the owner (QQ and a token),
 * two household members (alice, bob), a guest token and a guest in a QQ group, and the strict fake LLM server, whose
 * recorded requests show everything each turn's prompt carried — the recent context, the reference block and the
 * results of `memory_recall`, which the fake calls in every later turn. The owner says a canary in a private QQ chat
 * and alice one in her private http chat; afterwards no canary reaches the LLM request, the reply, the `/api/events`
 * stream, the console's memory and conversation pages of anyone who may not read it, while the owner still sees all
 * (alice her own).
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { chatAs, type HomedProcess, startHomed, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const OWNER = "owner-token-0123456789";
const ALICE = "alice-token-0123456789";
const BOB = "bob-token-01234567890";
const VISITOR = "visitor-token-012345678";
const OWNER_QQ = "20002000";
const GUEST_QQ = "30003000";
const GROUP = "500050005";
const OWNER_CANARY = "CANARY-OWNER-7731";
const ALICE_CANARY = "CANARY-ALICE-5523";

/** An `/api/events` stream read in the background. */
async function listen(homed: HomedProcess, token: string) {
  const response = await fetch(`${homed.url}/api/events`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const reading = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // Cancelled at the end.
    }
  })();
  return {
    text: () => text,
    close: async () => {
      await reader.cancel();
      await reading;
    },
  };
}

async function page(homed: HomedProcess, token: string, path: string): Promise<string> {
  const response = await fetch(`${homed.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  assert.equal(response.status, 200, `${path}: ${text}`);
  return text;
}

const recallStep = { toolCalls: [{ name: "memory_recall", arguments: { query: "CANARY vault code diary password" } }] };

/** What homed's MCP server's `memory_recall` answers `query` for the holder of `token` (the SDK's own client). */
async function mcpRecall(url: string, token: string, query: string): Promise<string> {
  const client = new Client({ name: "e2e-visibility", version: "1.0.0" });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const result = await client.callTool({ name: "memory_recall", arguments: { query } });
    return JSON.stringify(result.content);
  } finally {
    await client.close();
  }
}

Deno.test("canaries said in private reach nobody who may not read them: prompts, tool results, replies, events, pages", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await startHomed(
    await workspace({
      llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
      daemon: {
        api_token: OWNER,
        api_tokens: {
          alice: { token: ALICE, trust: "household" },
          bob: { token: BOB, trust: "household" },
          visitor: { token: VISITOR, trust: "guest" },
        },
      },
      onebot: { owner: OWNER_QQ, allow_groups: [GROUP], min_send_interval: "0s" },
      // homed as an MCP server too: another assistant's memory_recall, with each person's token.
      mcp: { serve_http: true },
      // Small, so the private exchanges leave the context and become documents.
      memory: { context_size: 6 },
    }),
  );
  const sim = await OneBotSim.connect(`${homed.url.replace("http", "ws")}/onebot/v11/ws`, { flavour: "napcat" });
  const ownerEvents = await listen(homed, OWNER);
  const bobEvents = await listen(homed, BOB);
  const aliceEvents = await listen(homed, ALICE);
  try {
    // The owner, in a private QQ chat, has the reply sent to http (the owner's /api/events, nobody else's).
    fake.enqueue(
      { toolCalls: [{ name: "output_set_channel", arguments: { channel: "http" } }] },
      { reply: `Noted: ${OWNER_CANARY} is the vault code.` },
    );
    sim.privateMessage(OWNER_QQ, `${OWNER_CANARY} is the vault code`);
    await waitFor(() => ownerEvents.text().includes(OWNER_CANARY), "the owner's reply on /api/events");
    fake.enqueue({ reply: `Noted: ${ALICE_CANARY}.` });
    const aliceSaid = await chatAs(homed, ALICE, `${ALICE_CANARY} is my diary password`);
    assert.match(String(aliceSaid.reply), /CANARY-ALICE/);
    const private_ = fake.requests.length;

    // Bob (household), the guest token, a guest in the group: each recalls, and answers with what their prompt held.
    const turns: Array<{ who: string; forbidden: string[]; run: () => Promise<unknown> }> = [
      { who: "bob", forbidden: [OWNER_CANARY, ALICE_CANARY], run: () => chatAs(homed, BOB, "What is the vault code?") },
      {
        who: "visitor",
        forbidden: [OWNER_CANARY, ALICE_CANARY],
        run: () => chatAs(homed, VISITOR, "What is the vault code or the diary password?"),
      },
      {
        who: "group guest",
        forbidden: [OWNER_CANARY, ALICE_CANARY],
        run: async () => {
          const sent = fake.requests.length;
          sim.groupMessage(GROUP, GUEST_QQ, [
            { type: "at", data: { qq: sim.selfId } },
            { type: "text", data: { text: " what is the vault code?" } },
          ]);
          await sim.waitForActions("send_group_msg");
          return sent;
        },
      },
      { who: "alice", forbidden: [OWNER_CANARY], run: () => chatAs(homed, ALICE, "What is the vault code?") },
    ];
    for (const turn of turns) {
      const first = fake.requests.length;
      fake.enqueue(recallStep, { reply: "Here is what I know." });
      const answer = await turn.run();
      await waitFor(() => fake.requests.length >= first + 2, `${turn.who}'s two requests`);
      const seen = JSON.stringify(fake.requests.slice(first).map((request) => request.body.messages));
      assert.match(seen, /"role":"tool"/, `${turn.who}: memory_recall's result is in the request`);
      for (const canary of turn.forbidden) {
        assert.ok(!seen.includes(canary), `${turn.who}'s prompt holds ${canary}: ${seen}`);
        assert.ok(!JSON.stringify(answer).includes(canary), `${turn.who}'s reply holds ${canary}`);
      }
      if (turn.who === "alice") assert.ok(seen.includes(ALICE_CANARY), "alice still reads her own words");
    }

    assert.ok(private_ >= 3);

    // The console's pages with each token: documents, conversation; and the event streams.
    await waitFor(
      async () => (await page(homed, OWNER, "/api/memory/documents?q=CANARY")).includes(OWNER_CANARY),
      "the owner's exchange kept as a document",
    );
    for (
      const [token, who, forbidden] of [[BOB, "bob", [OWNER_CANARY, ALICE_CANARY]], [ALICE, "alice", [
        OWNER_CANARY,
      ]]] as const
    ) {
      for (const path of ["/api/memory/documents?q=CANARY", "/api/memory/entities", "/api/conversation?limit=500"]) {
        const body = await page(homed, token, path);
        for (const canary of forbidden) assert.ok(!body.includes(canary), `${who}'s ${path} holds ${canary}: ${body}`);
      }
    }
    assert.ok((await page(homed, ALICE, "/api/memory/documents?q=CANARY")).includes(ALICE_CANARY));
    // The owner reads everything.
    assert.ok((await page(homed, OWNER, "/api/memory/documents?q=CANARY")).includes(ALICE_CANARY));
    assert.ok((await page(homed, OWNER, "/api/conversation?limit=500")).includes(ALICE_CANARY));
    for (const canary of [OWNER_CANARY, ALICE_CANARY]) {
      assert.ok(!bobEvents.text().includes(canary), `bob's /api/events holds ${canary}`);
    }
    // The MCP server's memory_recall, as another assistant asks it with each person's token.
    for (
      const [token, who, forbidden] of [
        [BOB, "bob", [OWNER_CANARY, ALICE_CANARY]],
        [ALICE, "alice", [OWNER_CANARY]],
        [VISITOR, "visitor", [OWNER_CANARY, ALICE_CANARY]],
      ] as const
    ) {
      const recalled = await mcpRecall(homed.url, token, "CANARY");
      for (const canary of forbidden) assert.ok(!recalled.includes(canary), `${who}'s MCP memory_recall: ${recalled}`);
    }
    assert.ok((await mcpRecall(homed.url, OWNER, "CANARY")).includes(OWNER_CANARY), "the owner's recall has it");
    assert.ok(!aliceEvents.text().includes(OWNER_CANARY), "alice's /api/events holds the owner's canary");
  } finally {
    await teardown(
      () => ownerEvents.close(),
      () => bobEvents.close(),
      () => aliceEvents.close(),
      () => sim.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
    );
  }
});
