/**
 * Personal WeChat end to end (issue 40), what the butler says without being asked: a real homed against the strict
 * fake iLink API, a strict fake Home Assistant with a front-door lock, and the fake LLM. The owner's confirmation on
 * WeChat — impossible, and said so, while the owner has not written; then asked on WeChat, a member's yes running
 * nothing and the owner's 是 running the unlock once — and reminders WeChat gives no way to deliver (the member's
 * token used up, a member who never wrote), never dropped silently.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeHomeAssistant } from "./support/fake_home_assistant.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeWeixin } from "./support/fake_weixin.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { waitFor } from "./support/wait.ts";
import {
  deliver,
  guarded,
  homedStatus,
  lastMessage,
  sentTo,
  toolResults,
  waitForSentTo,
  weixinSection,
  weixinStatus,
  WX_MEMBER,
  WX_OWNER,
  WX_QUIET,
} from "./support/weixin_daemon.ts";

const OWNER_CHAT = `weixin:private:${WX_OWNER}`;
const MEMBER_CHAT = `weixin:private:${WX_MEMBER}`;
const QUIET_CHAT = `weixin:private:${WX_QUIET}`;

const entities = [
  { entity_id: "lock.front_door", state: "locked", attributes: { friendly_name: "Front door" } },
];
const unlock = {
  toolCalls: [{
    name: "ha_call_service",
    arguments: { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
  }],
};

/** An ISO time `ms` from now with a +08:00 offset, as the model would write it for a household in Shanghai. */
function inShanghai(ms: number): string {
  return new Date(Date.now() + ms + 8 * 3_600_000).toISOString().replace("Z", "+08:00");
}

Deno.test("WeChat: the owner's confirmation — refused clearly before the owner wrote, then a member's yes runs nothing and the owner's 是 unlocks once; undeliverable reminders are said, never dropped", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const ha = FakeHomeAssistant.start({ entities, token: "fake-ha-token-0123456789" });
  const fake = FakeWeixin.start();
  const homed = await startHomed(
    await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      daemon: { timezone: "Asia/Shanghai" },
      // The schema's fastest pacing: the fake refuses a third send within a second.
      weixin: weixinSection(fake, { min_send_interval: "500ms" }),
      smart_home: { home_assistant: { url: ha.url, token: ha.token, confirm_timeout: "30s" } },
    }),
  );
  await guarded(
    async () => {
      await waitFor(
        async () => (await homedStatus(homed)).services.io.devices.ha?.state === "connected",
        "homed connected to Home Assistant",
      );

      // 1. The owner has never written: WeChat gives no way to ask them. Nothing is sent to them (the fake would
      // refuse it), nothing runs, and the model — so the member — is told why.
      llm.enqueue(unlock, { reply: "我联系不上主人，门没有开。" });
      await deliver(fake, { from: WX_MEMBER, text: "帮我开一下前门" });
      const [refused] = await waitForSentTo(fake, WX_MEMBER, 1);
      assert.equal(refused!.text, "我联系不上主人，门没有开。");
      assert.match(
        toolResults(llm, 1)[0]!,
        /^Not done: ".*lock\.front_door.*" needs the owner's confirmation, but asking on weixin:private:wxid_owner@im\.wechat failed: .*Could not deliver to WeChat user wxid_owner@im\.wechat: .*they have not written to the butler on WeChat yet/,
      );
      assert.match(homed.stderr(), /Could not deliver to WeChat user wxid_owner@im\.wechat/);
      assert.deepEqual(sentTo(fake, WX_OWNER), []);
      assert.equal(ha.calls.length, 0);
      const [question0] = (await homedStatus(homed)).services.io.undeliverable;
      assert.equal(question0?.target, OWNER_CHAT, "the question that could not be asked is in /api/status");
      assert.match(question0.text, /^Confirm: .*lock\.front_door/);
      assert.equal(question0.delivered_on, null);

      // 2. The owner writes; then the member asks again: the owner is asked on WeChat, on the token of their message.
      llm.enqueue({ reply: "主人好。" });
      const [hello] = await deliver(fake, { from: WX_OWNER, text: "你好" });
      await waitForSentTo(fake, WX_OWNER, 1);
      llm.enqueue(unlock, { reply: "已经请主人确认了。" });
      await deliver(fake, { from: WX_MEMBER, text: "帮我开一下前门" });
      const [, question] = await waitForSentTo(fake, WX_OWNER, 2);
      await waitForSentTo(fake, WX_MEMBER, 2);
      assert.match(
        question!.text!,
        /^Confirm: .*lock\.front_door.*\(asked by wxid_member@im\.wechat on weixin:private:wxid_member@im\.wechat\)\? Reply 是 \/ yes within 1 min/,
      );
      assert.equal(question!.contextToken, hello!.token);
      assert.equal(ha.calls.length, 0, "nothing runs before the owner's yes");

      // 3. The member's yes is only words to the model: nothing runs.
      llm.enqueue({ reply: "这要主人确认才行。" });
      await deliver(fake, { from: WX_MEMBER, text: "yes" });
      await waitForSentTo(fake, WX_MEMBER, 3);
      assert.equal(ha.calls.length, 0, "the member's yes ran nothing");

      // 4. The owner's 是: the unlock runs once, no model asked, the answer on the token of the 是.
      const modelCalls = llm.requests.length;
      const [yes] = await deliver(fake, { from: WX_OWNER, text: "是" });
      await waitFor(() => ha.calls.length === 1, "the unlock");
      assert.deepEqual([ha.calls[0]!.domain, ha.calls[0]!.service], ["lock", "unlock"]);
      const [, , done] = await waitForSentTo(fake, WX_OWNER, 3);
      assert.match(done!.text!, /^Done: /);
      assert.equal(done!.contextToken, yes!.token);
      assert.equal(llm.requests.length, modelCalls, "the yes went to no model");
      llm.enqueue({ reply: "没有等你确认的事了。" });
      await deliver(fake, { from: WX_OWNER, text: "是" });
      await waitForSentTo(fake, WX_OWNER, 4);
      assert.equal(ha.calls.length, 1, "a second yes runs nothing");

      // 5. A reminder the member set, due after the member's token is used up (the reply to the request took all ten
      // sends WeChat allows on it): not sent (the fake would refuse it), but in status, in the log, and told to the owner.
      const tenPieces = Array.from({ length: 10 }, (_, i) => `第${i + 1}条：${"记得收衣服，".repeat(250)}`).join(
        "\n\n",
      );
      llm.enqueue(
        { toolCalls: [{ name: "schedule_create", arguments: { text: "提醒他收衣服", at: inShanghai(3_000) } }] },
        { reply: tenPieces },
        { reply: "该收衣服了！" },
      );
      const [remindMe] = await deliver(fake, { from: WX_MEMBER, text: "三秒后提醒我收衣服" });
      const pieces = (await waitForSentTo(fake, WX_MEMBER, 13, 20_000)).slice(3);
      assert.equal(pieces.length, 10);
      assert.ok(pieces.every((piece) => piece.contextToken === remindMe!.token), "all ten on the request's token");
      await waitFor(() => llm.requests.length === modelCalls + 4, "the reminder's turn", { limitMs: 15_000 });
      assert.match(lastMessage(llm, modelCalls + 3), /\[Scheduled by wxid_member@im\.wechat;[^\]]*\] 提醒他收衣服$/);
      await waitFor(
        async () => (await homedStatus(homed)).services.io.undeliverable.length === 2,
        "the undeliverable reminder in /api/status",
      );
      const [undelivered] = (await homedStatus(homed)).services.io.undeliverable;
      assert.equal(undelivered.target, MEMBER_CHAT);
      assert.equal(undelivered.text, "该收衣服了！");
      assert.equal(undelivered.delivered_on, null);
      assert.match(
        undelivered.reason,
        /Could not deliver to WeChat user wxid_member@im\.wechat: .*as much as WeChat allows/,
      );
      assert.match(homed.stderr(), /Could not deliver an output to weixin:private:wxid_member@im\.wechat/);
      const [, , , , told] = await waitForSentTo(fake, WX_OWNER, 5);
      assert.match(told!.text!, /weixin:private:wxid_member@im\.wechat/);
      assert.match(told!.text!, /该收衣服了！/);
      assert.equal(sentTo(fake, WX_MEMBER).length, 13, "nothing more reached the member");
      assert.equal((await weixinStatus(homed)).undeliverable, 2, "the question of step 1 and this reminder");

      // 6. A reminder the owner set for a member who never wrote (another's chat: the owner confirms it first), due
      // when WeChat still gives no way to write to her: the same.
      llm.enqueue(
        {
          toolCalls: [{
            name: "schedule_create",
            arguments: { text: "提醒她喝水", at: inShanghai(4_000), channel: QUIET_CHAT },
          }],
        },
        { reply: "确认后我就设好。" },
        { reply: "记得喝水！" },
      );
      await deliver(fake, { from: WX_OWNER, text: "四秒后提醒 quiet 喝水" });
      const asking = await waitForSentTo(fake, WX_OWNER, 7);
      assert.match(asking[5]!.text!, /^Confirm: schedule_create .*weixin:private:wxid_quiet@im\.wechat/);
      await deliver(fake, { from: WX_OWNER, text: "是" });
      const [toldAgain] = (await waitForSentTo(fake, WX_OWNER, 9, 15_000)).slice(8);
      assert.match(sentTo(fake, WX_OWNER)[7]!.text!, /^Done: /);
      assert.match(toldAgain!.text!, /weixin:private:wxid_quiet@im\.wechat/);
      assert.match(toldAgain!.text!, /记得喝水！/);
      const [quiet, ...older] = (await homedStatus(homed)).services.io.undeliverable;
      assert.equal(older.length, 2);
      assert.equal(quiet.target, QUIET_CHAT);
      assert.match(quiet.reason, /they have not written to the butler on WeChat yet/);
      assert.deepEqual(sentTo(fake, WX_QUIET), []);
      assert.equal((await weixinStatus(homed)).undeliverable, 3);
      assert.deepEqual(fake.refusals, [], "homed never tried a send WeChat would refuse");
    },
    async () => assert.equal(await homed.stop(), 0, homed.stderr()),
    () => fake.close(),
    () => ha.close(),
    () => llm.close(),
  );
});
