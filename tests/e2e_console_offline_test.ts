/**
 * The console while no model answers, in headless Chromium on a phone: the banner above every page says so (in the
 * page's language, with why and what still works); a command answered locally shows in the turn inspector as "local
 * intent". A real homed whose LLM server refuses connections.
 */

import assert from "node:assert/strict";
import { browserNeed, openBrowser } from "./support/browser.ts";
import { TEST_KEY } from "./support/contract.ts";
import { freePort, postJson, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const OWNER = "owner-token-0123456789";
const browsers = await browserNeed();

Deno.test({
  name:
    "no model answering: the console's banner says so and what still works; a local turn is marked in the inspector",
  ignore: browsers.ignore,
  fn: async () => {
    browsers.assertAvailable();
    const refused = `http://127.0.0.1:${freePort()}/v1`;
    const homed = await startHomed(
      await workspace({
        llm: { base_url: refused, api_key: TEST_KEY },
        onebot: { enabled: false },
        daemon: { api_token: OWNER, timezone: "Asia/Shanghai" },
      }),
    );
    const browser = await openBrowser({ width: 375, height: 800, mobile: true, locale: "zh-CN" });
    assert.ok(browser);
    try {
      const headers = { authorization: `Bearer ${OWNER}` };
      // The first message finds the model gone (its breaker opens); the time is answered without it.
      const time = await postJson(`${homed.url}/api/chat`, { text: "现在几点" }, headers);
      assert.equal(time.status, 200, JSON.stringify(time.body));
      assert.match(String(time.body.reply), /^现在是 \d+月\d+日 星期. \d\d:\d\d。$/);
      await waitFor(async () => {
        const status = await (await fetch(`${homed.url}/api/status`, { headers })).json();
        return status.llm.providers[0].state === "down";
      }, "the primary shown down");

      const page = browser.page;
      await page.goto(`${homed.url}/`);
      await page.waitFor("#login-form");
      await page.fill("#token", OWNER);
      await page.press("#token", "Enter");
      await page.waitFor('#page-chat[data-ready="true"]', { state: "attached" });
      await page.waitFor("#model-banner p", {
        text: /现在没有模型可用（.*Connection refused.*）。设备开关、状态查询、提醒和报时仍在本地可用。/,
      });

      await page.click('a[data-page="turns"]');
      await page.waitFor('#page-turns[data-ready="true"]', { state: "attached" });
      await page.waitFor(".turn .badge", { text: "本地" });
      await page.click(".turn");
      await page.waitFor("#turn-detail p.status", {
        text: /本地意图：HassGetCurrentTime \(zh\.yaml:\d+\)——未调用模型/,
      });

      await page.click("#lang-toggle");
      await page.waitFor("#model-banner p", {
        text: /No model is answering \(.*\)\. Devices, states, reminders and the time still work locally\./,
      });
      // The first load asks /api/whoami without a token (homed may need none): its 401 is expected.
      const errors = page.consoleErrors.filter((line) => !/favicon|status of 401/.test(line));
      assert.deepEqual(errors, []);
    } finally {
      await teardown(
        () => browser.close(),
        async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      );
    }
  },
});
