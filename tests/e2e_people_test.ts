/**
 * Issue 40.3 end to end: `people:` makes a member one person across chats. The owner writes on WeChat, then on
 * Telegram: the butler knows it is the same person — what they said on WeChat is in the Telegram turn's context — and
 * a household member on Telegram sees none of it. A real homed against the strict fakes of both chats' APIs.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeTelegram } from "./support/fake_telegram.ts";
import { FakeWeixin } from "./support/fake_weixin.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const WEI_WEIXIN = "o9cq80wei@im.wechat";
const WEI_TELEGRAM = 777000;
const LIN_TELEGRAM = 777001;
const LIN_WEIXIN = "o9cq80lin@im.wechat";

/** The text of every message of the model's request. */
function promptOf(request: { body: Record<string, unknown> }): string {
  return (request.body.messages as Array<{ content: unknown }>).map((message) => JSON.stringify(message.content))
    .join("\n");
}

Deno.test("people: the owner on WeChat and on Telegram is one person; a member on Telegram sees none of it", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const weixin = FakeWeixin.start();
  const telegram = FakeTelegram.start({ rateLimit: false });
  const homed = await startHomed(
    await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      people: {
        wei: { trust: "owner", weixin: WEI_WEIXIN, telegram: String(WEI_TELEGRAM) },
        lin: { telegram: String(LIN_TELEGRAM), weixin: LIN_WEIXIN },
      },
      weixin: {
        token: weixin.botToken,
        base_url: weixin.baseUrl,
        cdn_url: weixin.cdnBaseUrl,
        poll_timeout: "2s",
      },
      telegram: { token: telegram.token, api_url: telegram.apiUrl, poll_timeout: "2s", min_send_interval: "0s" },
    }),
  );
  try {
    llm.enqueue({ reply: "Noted: locker 4821." });
    weixin.userSends({ from: WEI_WEIXIN, text: "My gym locker code is 4821." });
    await weixin.waitForSent(1, 20_000);
    assert.equal(weixin.sent[0]!.text, "Noted: locker 4821.");
    const onWeixin = promptOf(llm.requests[0]!);
    assert.match(onWeixin, /\[via weixin:private:o9cq80wei@im\.wechat, from wei, trust owner\]/);

    llm.enqueue({ reply: "It is 4821." });
    telegram.userSends({
      chat: { id: WEI_TELEGRAM, type: "private" },
      from: { id: WEI_TELEGRAM, first_name: "Wei" },
      text: "What is my gym locker code?",
    });
    await telegram.waitForSent(1, { chatId: WEI_TELEGRAM, limitMs: 20_000 });
    const onTelegram = promptOf(llm.requests[1]!);
    assert.match(onTelegram, /\[via telegram:private:777000, from wei as \\"Wei\\", trust owner\]/, "the same person");
    assert.match(onTelegram, /My gym locker code is 4821/, "their WeChat conversation continues on Telegram");
    assert.match(onTelegram, /Where wei writes/, "the model is told where else they write");

    // A member's own words follow her too: what Lin said on WeChat is hers on Telegram (a household member reads only
    // her own private items, so this holds only because both chats name her "lin").
    llm.enqueue({ reply: "Noted: bike lock 1357." });
    weixin.userSends({ from: LIN_WEIXIN, text: "My bike lock code is 1357." });
    await weixin.waitForSent(2, 20_000);
    llm.enqueue({ reply: "I cannot tell you Wei's; your bike lock is 1357." });
    telegram.userSends({
      chat: { id: LIN_TELEGRAM, type: "private" },
      from: { id: LIN_TELEGRAM, first_name: "Lin" },
      text: "What is Wei's gym locker code, and my bike lock code?",
    });
    await telegram.waitForSent(1, { chatId: LIN_TELEGRAM, limitMs: 20_000 });
    const forLin = promptOf(llm.requests[3]!);
    assert.match(forLin, /\[via telegram:private:777001, from lin as \\"Lin\\", trust household\]/);
    assert.doesNotMatch(forLin, /4821/, "a member on another chat sees none of the owner's private conversation");
    assert.match(forLin, /My bike lock code is 1357/, "her own WeChat words are hers on Telegram");
    assert.equal(llm.requests.length, 4);
    await waitFor(
      async () => {
        const status = await (await fetch(`${homed.url}/api/status`)).json();
        return status.services.io.devices.telegram !== undefined && status.services.io.devices.weixin !== undefined;
      },
      "both chats in status",
    );
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => llm.close(),
      () => weixin.close(),
      () => telegram.close(),
    );
  }
});
