import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { ownerNoticeElsewhere, undeliverablePolicy } from "./delivery_notices.ts";

const LIN_WEIXIN = "weixin:private:o9lin@im.wechat";

Deno.test("a refused message: tried on the person's other chats, then the owner told on a chat other than the refused one", async () => {
  const told: Array<[string, string]> = [];
  const policy = undeliverablePolicy({
    chatsOf: (channel) => channel === LIN_WEIXIN ? [LIN_WEIXIN, "qq:private:10002"] : [],
    ownerChannels: ["weixin:private:o9wei@im.wechat", "qq:private:10001"],
    send: (channel, text) => (told.push([channel, text]), Promise.resolve()),
    persona: () => "你是管家阿福。",
    logger: getLogger(["test"]),
  });
  assert.deepEqual(policy.elsewhere(LIN_WEIXIN), ["qq:private:10002"]);
  assert.deepEqual(policy.elsewhere("qq:private:10003"), [], "an unlisted recipient has no other chat");
  policy.tell({
    target: "weixin:private:o9wei@im.wechat",
    reason: "WeChat lets the butler write only within a while after the person's last message",
    text: "记得吃药",
    at: "2026-12-05T08:00:00.000Z",
    delivered_on: null,
  });
  await Promise.resolve();
  assert.deepEqual(told.map(([channel]) => channel), ["qq:private:10001"], "not on the chat that refused it");
  assert.match(
    told[0]![1],
    /^没能把消息送到 weixin:private:o9wei@im\.wechat（原因：WeChat lets .*）。内容是：“记得吃药”$/,
  );
});

Deno.test("a chat's trouble is told to the owner on another of their chats, in the persona's language; none, nothing", async () => {
  const told: Array<[string, string]> = [];
  const options = {
    send: (channel: string, text: string) => (told.push([channel, text]), Promise.resolve()),
    persona: () => "You are Alfred, the butler.",
    logger: getLogger(["test"]),
  };
  const tell = ownerNoticeElsewhere({ ...options, ownerChannels: ["weixin:private:o9wei@im.wechat", "qq:private:1"] });
  tell({ en: "WeChat's session expired", zh: "微信登录已失效" }, "weixin");
  ownerNoticeElsewhere({ ...options, ownerChannels: ["weixin:private:o9wei@im.wechat"] })(
    { en: "WeChat's session expired", zh: "微信登录已失效" },
    "weixin",
  );
  await Promise.resolve();
  assert.deepEqual(told, [["qq:private:1", "WeChat's session expired"]], "never on the chat in trouble");
});
