/**
 * Remembered routes follow the person who set them (issue 18, point 11), end to end: a real homed with two people's
 * tokens (the owner and a household member), the fake LLM server scripting `output_set_channel` with `remember:
 * true`, and a simulated QQ implementation standing for the household member's QQ chat. Her route takes only her own
 * replies to her QQ; the owner's HTTP replies stay on HTTP. A route the owner remembers is the source's (everyone's),
 * as before, and a `routes.json` written by an older homed is read as the owner's.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { chatAs, type HomedProcess, startHomed, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const OWNER = "owner-token-0123456789";
const ALICE = "alice-token-0123456789";
const OWNER_QQ = "20002000";
const ALICE_QQ = "30003000";

type Messages = Array<{ role: string; content: string | null }>;

const chat = chatAs;

async function routes(homed: HomedProcess, token: string): Promise<unknown> {
  const response = await fetch(`${homed.url}/api/channels`, { headers: { authorization: `Bearer ${token}` } });
  return (await response.json()).routes;
}

/** The QQ messages the simulator was asked to send, as `[user, text]`. */
function sentOnQq(sim: OneBotSim): Array<[number, string]> {
  return sim.actions.filter((action) => action.action === "send_private_msg").map((action) => [
    action.params.user_id as number,
    (action.params.message as Array<{ data: { text: string } }>).map((segment) => segment.data.text).join(""),
  ]);
}

function lastToolResult(fake: FakeLlm): string {
  const last = (fake.requests.at(-1)!.body.messages as Messages).at(-1)!;
  assert.equal(last.role, "tool");
  return last.content!;
}

async function start(dataDir: string, fake: FakeLlm): Promise<{ homed: HomedProcess; sim: OneBotSim }> {
  const ws = await workspace({
    llm: { base_url: fake.baseUrl, api_key: TEST_KEY },
    daemon: { api_token: OWNER, api_tokens: { alice: { token: ALICE, trust: "household" } }, data_dir: dataDir },
    onebot: { owner: OWNER_QQ, allow_users: [ALICE_QQ], min_send_interval: "0s" },
    // Alice's words are in the owner's recent context, below his trust: the owner lets his own route changes run
    // whatever his turn carries (without this rule they wait for his yes).
    agent: { tool_policy: { output_set_channel: { owner: "allow" } } },
  });
  const homed = await startHomed(ws);
  const sim = await OneBotSim.connect(`${homed.url.replace("http", "ws")}/onebot/v11/ws`, { flavour: "napcat" });
  await waitFor(async () => {
    const status = await (await fetch(`${homed.url}/api/status`, { headers: { authorization: `Bearer ${OWNER}` } }))
      .json();
    return status.services.io.devices.qq.bots.length === 1;
  }, "the QQ simulator connected");
  return { homed, sim };
}

Deno.test("a household member's remembered route takes only her own replies; the owner's stay where he asked", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const root = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-e2e-routes-" });
  const dataDir = join(root, "data");
  let { homed, sim } = await start(dataDir, fake);
  try {
    // Alice, on HTTP, asks for her replies to go to her QQ chat from now on.
    fake.enqueue(
      { toolCalls: [{ name: "output_set_channel", arguments: { channel: `qq:private:${ALICE_QQ}`, remember: true } }] },
      { reply: "From now on your replies go to your QQ." },
    );
    assert.deepEqual(await chat(homed, ALICE, "Send my replies to my QQ from now on"), {
      reply: "From now on your replies go to your QQ.",
      channel: `qq:private:${ALICE_QQ}`,
      rounds: 2,
    });

    // The owner's next HTTP message is answered on HTTP, not in Alice's QQ chat.
    fake.enqueue({ reply: "Yes, the heating is on." });
    assert.deepEqual(await chat(homed, OWNER, "Is the heating on?"), {
      reply: "Yes, the heating is on.",
      channel: "http",
      rounds: 1,
    });
    assert.equal(
      lastToolResultOf(fake, 1),
      `The reply will go to qq:private:${ALICE_QQ}; from now on, replies to alice's messages from http go there ` +
        "(only alice's: a route for everyone on http is the owner's to set)",
    );

    // Alice's own next message still goes to her QQ.
    fake.enqueue({ reply: "Tomorrow it will rain." });
    assert.deepEqual(await chat(homed, ALICE, "And the weather tomorrow?"), {
      reply: "Tomorrow it will rain.",
      channel: `qq:private:${ALICE_QQ}`,
      rounds: 1,
    });
    assert.deepEqual(sentOnQq(sim), [
      [Number(ALICE_QQ), "From now on your replies go to your QQ."],
      [Number(ALICE_QQ), "Tomorrow it will rain."],
    ]);
    const aliceRoute = { source: "http", sender: "alice", channel: `qq:private:${ALICE_QQ}`, origin: "runtime" };
    assert.deepEqual(await routes(homed, OWNER), [aliceRoute]);
    assert.equal(
      await Deno.readTextFile(join(dataDir, "routes.json")),
      `${
        JSON.stringify({ version: 2, routes: {}, senders: { http: { alice: `qq:private:${ALICE_QQ}` } } }, null, 2)
      }\n`,
    );

    // The owner remembers a route: it is the source's, for everyone on http who set none of their own.
    fake.enqueue(
      { toolCalls: [{ name: "output_set_channel", arguments: { channel: `qq:private:${OWNER_QQ}`, remember: true } }] },
      { reply: "Your replies go to QQ now." },
    );
    assert.equal((await chat(homed, OWNER, "Send replies to my QQ from now on")).channel, `qq:private:${OWNER_QQ}`);
    assert.equal(
      lastToolResult(fake),
      `The reply will go to qq:private:${OWNER_QQ}; http now routes there`,
    );
    fake.enqueue({ reply: "It is 9 o'clock." }, { reply: "Dinner is at 7." });
    assert.equal((await chat(homed, OWNER, "What time is it?")).channel, `qq:private:${OWNER_QQ}`);
    assert.equal((await chat(homed, ALICE, "When is dinner?")).channel, `qq:private:${ALICE_QQ}`, "her own route wins");
    assert.deepEqual(sentOnQq(sim).slice(2), [
      [Number(OWNER_QQ), "Your replies go to QQ now."],
      [Number(OWNER_QQ), "It is 9 o'clock."],
      [Number(ALICE_QQ), "Dinner is at 7."],
    ]);
    const ownerRoute = { source: "http", channel: `qq:private:${OWNER_QQ}`, origin: "runtime" };
    assert.deepEqual(await routes(homed, OWNER), [ownerRoute, aliceRoute]);

    // Both survive a restart.
    await sim.close();
    assert.equal(await homed.stop({ keep: true }), 0, homed.stderr());
    ({ homed, sim } = await start(dataDir, fake));
    assert.deepEqual(await routes(homed, ALICE), [ownerRoute, aliceRoute]);
  } finally {
    await teardown(
      () => sim.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
      () => Deno.remove(root, { recursive: true }),
    );
  }
});

Deno.test("a routes.json from an older homed is the owner's: its routes still apply to everyone on the source", async () => {
  const fake = FakeLlm.start(DEFAULT_CONTRACT);
  const root = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-e2e-routes-" });
  const dataDir = join(root, "data");
  await Deno.mkdir(dataDir);
  await Deno.writeTextFile(join(dataDir, "routes.json"), `{\n  "http": "qq:private:${OWNER_QQ}"\n}\n`);
  const { homed, sim } = await start(dataDir, fake);
  try {
    assert.deepEqual(await routes(homed, OWNER), [
      { source: "http", channel: `qq:private:${OWNER_QQ}`, origin: "runtime" },
    ]);
    fake.enqueue({ reply: "Good morning." }, { reply: "Hello, Alice." });
    assert.equal((await chat(homed, OWNER, "Good morning")).channel, `qq:private:${OWNER_QQ}`);
    assert.equal((await chat(homed, ALICE, "Hello")).channel, `qq:private:${OWNER_QQ}`);
    assert.deepEqual(sentOnQq(sim), [[Number(OWNER_QQ), "Good morning."], [Number(OWNER_QQ), "Hello, Alice."]]);
  } finally {
    await teardown(
      () => sim.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => fake.close(),
      () => Deno.remove(root, { recursive: true }),
    );
  }
});

/** The tool result the `index`-th request (0-based) ended with. */
function lastToolResultOf(fake: FakeLlm, index: number): string {
  const last = (fake.requests[index]!.body.messages as Messages).at(-1)!;
  assert.equal(last.role, "tool");
  return last.content!;
}
