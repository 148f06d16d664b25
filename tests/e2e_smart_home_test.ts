/**
 * Home Assistant end to end: a real homed, a strict fake Home Assistant speaking its WebSocket protocol, the simulated
 * NapCat for the owner's and a guest's QQ, and the fake LLM. The butler switches a light at once; unlocking the door
 * waits for the owner's yes on QQ and runs once; a no, a timeout or a guest's yes runs nothing; Home Assistant
 * restarting is survived; a wrong token is that device's problem only.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeHomeAssistant } from "./support/fake_home_assistant.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { type HomedProcess, startHomed, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const OWNER = "20002000";
const FRIEND = "30003000";
const GUEST = "40004000";
const GROUP = "500050005";
type Messages = Array<{ role: string; content: string }>;
type Action = {
  action: string;
  params: { user_id?: number; message: Array<{ type: string; data: { text?: string } }> };
};

const entities = [
  { entity_id: "light.living_room", state: "off", attributes: { friendly_name: "Living room light" } },
  { entity_id: "lock.front_door", state: "locked", attributes: { friendly_name: "Front door" } },
  { entity_id: "binary_sensor.front_door", state: "off", attributes: { friendly_name: "Front door contact" } },
];

async function homedWith(llm: FakeLlm, ha: FakeHomeAssistant, token = ha.token): Promise<HomedProcess> {
  return await startHomed(
    await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      onebot: { owner: OWNER, allow_users: [FRIEND], allow_groups: [GROUP], min_send_interval: "0s" },
      smart_home: {
        home_assistant: {
          url: ha.url,
          token,
          subscribe: ["binary_sensor.front_door"],
          confirm_timeout: "10s",
        },
      },
    }),
  );
}

const texts = (actions: Action[]) =>
  actions.map((action) => action.params.message.map((s) => s.data.text ?? "").join(""));

Deno.test("a light at once; the door only on the owner's yes on QQ, once; no, timeout and a guest's yes run nothing", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const ha = FakeHomeAssistant.start({ entities, token: "fake-ha-token-0123456789" });
  const homed = await homedWith(llm, ha);
  let sim: OneBotSim | undefined;
  const status = async () => (await (await fetch(`${homed.url}/api/status`)).json()).services.io.devices.ha;
  try {
    await waitFor(async () => (await status())?.state === "connected", "homed connected to Home Assistant");
    sim = await OneBotSim.connect(`${homed.url.replace("http", "ws")}/onebot/v11/ws`);
    const replies = (to = OWNER) =>
      (sim!.actions as unknown as Action[]).filter((a) =>
        a.action === "send_private_msg" && String(a.params.user_id) === to
      );

    // A light: called at once.
    llm.enqueue(
      {
        toolCalls: [{
          name: "ha_call_service",
          arguments: { domain: "light", service: "turn_on", entity_id: "light.living_room" },
        }],
      },
      { reply: "客厅灯开了。" },
    );
    sim.privateMessage(OWNER, "开客厅灯");
    await waitFor(() => replies().length === 1, "the reply");
    assert.deepEqual(ha.calls.map((call) => [call.domain, call.service]), [["light", "turn_on"]]);

    // The door: the owner is asked; nothing happens until the yes, which costs no LLM call and runs once.
    llm.enqueue(
      {
        toolCalls: [{
          name: "ha_call_service",
          arguments: { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
        }],
      },
      { reply: "I asked you to confirm first." },
    );
    sim.privateMessage(OWNER, "开门");
    await waitFor(() => replies().length === 3, "the question and the reply");
    assert.match(texts(replies())[1]!, /^Confirm: .*lock\.front_door.*\? Reply 是 \/ yes within 1 min/);
    assert.equal(ha.calls.length, 1, "not unlocked yet");
    const llmCalls = llm.requests.length;
    sim.privateMessage(OWNER, "是");
    await waitFor(() => ha.calls.length === 2, "the unlock");
    assert.deepEqual([ha.calls[1]!.domain, ha.calls[1]!.service], ["lock", "unlock"]);
    await waitFor(() => replies().length === 4, "the confirmation's answer");
    assert.match(texts(replies())[3]!, /^Done: /);
    assert.equal(llm.requests.length, llmCalls, "the yes went to no model");
    sim.privateMessage(OWNER, "是");
    llm.enqueue({ reply: "Yes to what?" });
    await waitFor(() => replies().length === 5, "a plain answer");
    assert.equal(ha.calls.length, 2, "a second yes runs nothing");

    // A guest may not even ask: the tool is the household's, and the rule is named.
    llm.enqueue(
      {
        toolCalls: [{
          name: "ha_call_service",
          arguments: { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
        }],
      },
      { reply: "I can't do that for you." },
    );
    sim.groupMessage(GROUP, GUEST, `[CQ:at,qq=${sim.selfId}] 开门`);
    await waitFor(() => sim!.actions.filter((a) => a.action === "send_group_msg").length === 1, "the guest answered");
    const guestTool = (llm.requests.at(-1)!.body.messages as Messages).filter((m) => m.role === "tool").at(-1)!;
    assert.match(guestTool.content, /household/);
    assert.equal(replies().length, 5, "the owner was not asked for a guest");

    // A household member asks: the owner is asked on their own QQ; the member's yes is ignored; the owner's "no" leaves it.
    llm.enqueue(
      {
        toolCalls: [{
          name: "ha_call_service",
          arguments: { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
        }],
      },
      { reply: "That needs the owner." },
    );
    sim.privateMessage(FRIEND, "开门");
    await waitFor(() => replies().length === 6 && replies(FRIEND).length === 1, "the owner asked");
    assert.match(texts(replies())[5]!, /\(asked by 30003000 on qq:private:30003000\)\?/);
    llm.enqueue({ reply: "Only the owner can." });
    sim.privateMessage(FRIEND, "yes");
    await waitFor(() => replies(FRIEND).length === 2, "the member's yes answered by the model");
    assert.equal(ha.calls.length, 2, "the member's yes ran nothing");
    llm.enqueue({ reply: "OK, I left it locked." });
    sim.privateMessage(OWNER, "不要");
    await waitFor(() => replies().length === 7, "the owner's no answered by the model");
    sim.privateMessage(OWNER, "是");
    llm.enqueue({ reply: "Nothing is waiting." });
    await waitFor(() => replies().length === 8, "a yes after the no");
    assert.equal(ha.calls.length, 2, "declined: nothing ran");

    // A subscribed entity's change is a device event; Home Assistant restarting is survived.
    ha.setState("binary_sensor.front_door", "on");
    await waitFor(async () => (await status()).events >= 1, "the door event");
    await ha.dropConnections();
    await waitFor(
      async () => (await status()).reconnects >= 1 && (await status()).state === "connected",
      "reconnected",
    );
    await waitFor(() => ha.subscriptions() >= 1, "resubscribed");
    ha.setState("binary_sensor.front_door", "off");
    await waitFor(async () => (await status()).events >= 2, "an event after the restart");

    const audit = await (await fetch(`${homed.url}/api/smart_home/actions`)).json();
    assert.deepEqual(audit.confirmations.map((c: { outcome: string }) => c.outcome), ["declined", "confirmed"]);
    assert.ok(
      audit.actions.some((a: { outcome: string; service: string }) => a.service === "turn_on" && a.outcome === "done"),
    );
  } finally {
    await teardown(
      async () => await sim?.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => ha.close(),
      () => llm.close(),
    );
  }
});

Deno.test("a wrong Home Assistant token is that device's problem only: homed answers, status names the setting", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const ha = FakeHomeAssistant.start({ entities, token: "fake-ha-token-0123456789" });
  const homed = await homedWith(llm, ha, "wrong-token-0123456789");
  try {
    const status = async () => (await (await fetch(`${homed.url}/api/status`)).json()).services.io.devices.ha;
    await waitFor(
      async () => /smart_home\.home_assistant\.token/.test(String((await status())?.last_error)),
      "the error",
    );
    const health = await fetch(`${homed.url}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    assert.ok(!homed.stderr().includes("wrong-token-0123456789"), "the token is never logged");
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => ha.close(),
      () => llm.close(),
    );
  }
});
