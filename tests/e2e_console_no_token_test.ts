/**
 * The console of a homed with no token set (loopback only, every caller the owner), in headless Chromium: it asks for
 * no token — `/api/whoami` answers without one — and goes straight to the chat, signed in as the owner. With a token
 * set, the login page still comes first.
 */

import assert from "node:assert/strict";
import { browserNeed, openBrowser } from "./support/browser.ts";
import { TEST_KEY } from "./support/contract.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const browsers = await browserNeed();

Deno.test({
  name: "no token set: the console asks for none and opens the chat as the owner; with a token it asks",
  ignore: browsers.ignore,
  fn: async () => {
    browsers.assertAvailable();
    const llm = { base_url: "http://127.0.0.1:9/v1", api_key: TEST_KEY };
    const open = await startHomed(await workspace({ llm, onebot: { enabled: false } }));
    const guarded = await startHomed(
      await workspace({ llm, onebot: { enabled: false }, daemon: { api_token: "owner-token-0123456789" } }),
    );
    const browser = await openBrowser({ width: 375, height: 800, mobile: true, locale: "en-US" });
    assert.ok(browser);
    try {
      const page = browser.page;
      await page.goto(`${open.url}/`);
      await page.waitFor('#page-chat[data-ready="true"]', { state: "attached" });
      await page.waitFor("#login", { state: "hidden" });
      await page.waitFor("#whoami", { text: /owner/ });
      const stored = await page.evaluate<string | null>("() => localStorage.getItem('homed.token')");
      assert.equal(stored, null, "no token was made up or kept");

      await page.goto(`${guarded.url}/`);
      await page.waitFor("#login-form");
      await page.waitFor("#app", { state: "hidden" });
      const errors = page.consoleErrors.filter((line) => !/favicon|401/.test(line));
      assert.deepEqual(errors, []);
    } finally {
      await teardown(
        () => browser.close(),
        async () => assert.equal(await open.stop(), 0, open.stderr()),
        async () => assert.equal(await guarded.stop(), 0, guarded.stderr()),
      );
    }
  },
});
