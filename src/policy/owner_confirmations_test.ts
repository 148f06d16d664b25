import assert from "node:assert/strict";
import { configSchema } from "../config/schema.ts";
import { withPeople } from "../config/people.ts";
import { ownerChannel, ownerChannels } from "./owner_confirmations.ts";

const TELEGRAM = { token: "123456789:AAabcdefghijklmnopqrstuvwxyz0123456" };

Deno.test("the owner's chats: QQ first, then Telegram, then WeChat (which takes homed's own messages least)", () => {
  const config = configSchema.parse({
    onebot: { owner: "10001" },
    telegram: { ...TELEGRAM, owner: "777000" },
    weixin: { owner: "o9wei@im.wechat" },
  });
  assert.deepEqual(ownerChannels(config), [
    "qq:private:10001",
    "telegram:private:777000",
    "weixin:private:o9wei@im.wechat",
  ]);
  assert.equal(ownerChannel(configSchema.parse({ onebot: { enabled: false, owner: "10001" }, weixin: {} })), undefined);
  const onlyPeople = withPeople(configSchema.parse({
    onebot: { enabled: false },
    telegram: TELEGRAM,
    weixin: {},
    people: { wei: { trust: "owner", telegram: "777000", weixin: "o9wei@im.wechat" } },
  }));
  assert.equal(ownerChannel(onlyPeople), "telegram:private:777000", "people: names the owner on each chat");
});
