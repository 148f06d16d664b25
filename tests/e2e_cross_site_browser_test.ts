/**
 * The cross-site attack as a browser makes it: a page on another origin, open in the owner's Chromium, posts to a
 * token-less homed on loopback (where every caller would be the owner) — a `text/plain` fetch to the OpenAI door
 * ("unlock the front door", then "yes"), and a form to `/api/chat` — the "simple" requests a browser sends without a
 * preflight. Nothing reaches the model or Home Assistant.
 */

import assert from "node:assert/strict";
import { browserNeed, openBrowser } from "./support/browser.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeHomeAssistant } from "./support/fake_home_assistant.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const browsers = await browserNeed();

/** The attacker's page: two fetches the browser sends without a preflight, then a form posted into an iframe. */
function attackPage(homed: string): string {
  const door = `${homed}/v1/chat/completions`;
  const body = (text: string) => JSON.stringify({ model: "homed", messages: [{ role: "user", content: text }] });
  return `<!doctype html><title>cute cats</title>
<iframe name="sink"></iframe>
<form id="f" method="post" action="${homed}/api/chat" target="sink"><input name="text" value="unlock the front door"></form>
<script>
(async () => {
  const results = [];
  for (const text of [${JSON.stringify(body("unlock the front door"))}, ${JSON.stringify(body("yes"))}]) {
    try {
      const response = await fetch(${JSON.stringify(door)}, { method: "POST", mode: "no-cors", body: text,
        headers: { "content-type": "text/plain" } });
      results.push(response.type);
    } catch (error) {
      results.push("error " + error);
    }
  }
  document.querySelector("iframe").addEventListener("load", () => {
    document.body.dataset.done = results.join(",");
  }, { once: true });
  document.getElementById("f").submit();
})();
</script>`;
}

Deno.test({
  name:
    "a page on another origin in the owner's Chromium cannot talk to a token-less homed: door, form and yes refused",
  ignore: browsers.ignore,
  fn: async () => {
    browsers.assertAvailable();
    const llm = FakeLlm.start(DEFAULT_CONTRACT);
    const ha = FakeHomeAssistant.start({
      entities: [{ entity_id: "lock.front_door", state: "locked", attributes: { friendly_name: "Front door" } }],
      token: "fake-ha-token-0123456789",
    });
    const homed = await startHomed(
      await workspace({
        llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
        onebot: { enabled: false },
        daemon: { openai_api: true },
        smart_home: { home_assistant: { url: ha.url, token: ha.token } },
      }),
    );
    // Another origin on loopback: the same host, another port.
    const evil = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response(attackPage(homed.url), { headers: { "content-type": "text/html; charset=utf-8" } }),
    );
    const browser = await openBrowser();
    assert.ok(browser);
    try {
      const { page } = browser;
      await page.goto(`http://127.0.0.1:${evil.addr.port}/`);
      await page.waitFor("body[data-done]", { state: "attached", timeoutMs: 15_000 });
      // The browser sent them (opaque responses: the page reads nothing either way)…
      assert.equal(await page.evaluate<string>("() => document.body.dataset.done"), "opaque,opaque");
      // …and homed ran no turn for them.
      assert.equal(llm.requests.length, 0, "no request reached the model");
      assert.deepEqual(ha.calls, [], "nothing was unlocked");
      // a client that is no web page (curl, an app) still gets answers: the door works.
      llm.enqueue({ reply: "你好" });
      const direct = await fetch(`${homed.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "homed", messages: [{ role: "user", content: "hi" }] }),
      });
      assert.equal(direct.status, 200, await direct.clone().text());
      assert.equal((await direct.json()).choices[0].message.content, "你好");
    } finally {
      await teardown(
        () => browser.close(),
        () => evil.shutdown(),
        async () => assert.equal(await homed.stop(), 0, homed.stderr()),
        () => ha.close(),
        () => llm.close(),
      );
    }
  },
});
