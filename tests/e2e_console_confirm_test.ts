/**
 * The owner's yes in the web console, end to end: a real homed, the strict fake Home Assistant, the simulated NapCat
 * for the owner's and a member's QQ, the fake LLM, and headless Chromium on a phone-sized screen logged in with the
 * owner's token. A member asks on QQ to unlock the front door; the call is held, and the console shows it live as a
 * card (what, who asked, where, time left); Approve runs it — Home Assistant receives exactly one unlock. A second
 * held unlock is denied on its card: nothing runs. The Actions page lists both calls, newest first, with who asked
 * where, the turn's trust, the rule, and how the owner decided. Screenshots go to /tmp/homed-console-shots/.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { browserNeed, openBrowser, type Page } from "./support/browser.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeHomeAssistant } from "./support/fake_home_assistant.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const OWNER_TOKEN = "owner-token-0123456789";
const OWNER = "20002000";
const MEMBER = "30003000";
const SHOTS = "/tmp/homed-console-shots";
const browsers = await browserNeed();

type Action = { action: string; params: { user_id?: number; message: Array<{ data: { text?: string } }> } };

const entities = [{ entity_id: "lock.front_door", state: "locked", attributes: { friendly_name: "Front door" } }];

async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot(join(SHOTS, `${name}.png`), { fullPage: true });
}

Deno.test({
  name:
    "the console: a member's unlock waits as a live card; Approve runs it once, Deny runs nothing; Actions lists both",
  ignore: browsers.ignore,
  fn: async () => {
    browsers.assertAvailable();
    const llm = FakeLlm.start(DEFAULT_CONTRACT);
    const ha = FakeHomeAssistant.start({ entities, token: "fake-ha-token-0123456789" });
    const homed = await startHomed(
      await workspace({
        llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
        daemon: { api_token: OWNER_TOKEN },
        onebot: { owner: OWNER, allow_users: [MEMBER], min_send_interval: "0s" },
        smart_home: { home_assistant: { url: ha.url, token: ha.token, confirm_timeout: "1m" } },
      }),
    );
    const get = async (path: string) =>
      await (await fetch(`${homed.url}${path}`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } })).json();
    let sim: OneBotSim | undefined;
    const browser = await openBrowser({ width: 375, height: 800, mobile: true, locale: "en-US" });
    assert.ok(browser);
    const { page } = browser;
    try {
      await waitFor(async () => (await get("/api/status")).services.io.devices.ha?.state === "connected", "HA");
      sim = await OneBotSim.connect(`${homed.url.replace("http", "ws")}/onebot/v11/ws`);
      const to = (user: string) =>
        (sim!.actions as unknown as Action[])
          .filter((a) => a.action === "send_private_msg" && String(a.params.user_id) === user)
          .map((a) => a.params.message.map((s) => s.data.text ?? "").join(""));
      const unlocks = () => ha.calls.filter((call) => call.domain === "lock" && call.service === "unlock");
      /** The member asks to open the door; the model calls the unlock, which is held; returns the question's id. */
      const memberAsks = async (n: number): Promise<string> => {
        llm.enqueue(
          {
            toolCalls: [{
              name: "ha_call_service",
              arguments: { domain: "lock", service: "unlock", entity_id: "lock.front_door" },
            }],
          },
          { reply: "I asked the owner." },
        );
        sim!.privateMessage(MEMBER, "开一下前门");
        await waitFor(() => to(MEMBER).length === n && to(OWNER).length === n, "the member's answer and the question");
        const question = to(OWNER).at(-1)!;
        assert.match(question, /^Confirm: .*lock\.unlock.*\(asked by 30003000 on qq:private:30003000\)/);
        return /\/confirm ([0-9a-f]{4,8})/.exec(question)![1]!;
      };

      // The owner has the console open on the phone.
      await page.goto(`${homed.url}/`);
      await page.fill("#token", OWNER_TOKEN);
      await page.press("#token", "Enter");
      await page.waitFor('#page-chat[data-ready="true"]', { state: "attached" });

      // 1. The member's unlock appears as a card, live (nobody reloads); Approve runs it exactly once.
      const first = await memberAsks(1);
      assert.equal(unlocks().length, 0, "held, not run");
      const card = `.confirmation[data-id="${first}"]`;
      await page.waitFor(card, { text: "lock.front_door" });
      const text = (await page.text(card)) ?? "";
      assert.match(text, /Unlock|unlock/);
      assert.match(text, /30003000/, `who asked: ${text}`);
      assert.match(text, /qq:private:30003000/, `where: ${text}`);
      assert.match(text, /household/, `their trust: ${text}`);
      assert.match(text, /\d+:\d\d/, `time left: ${text}`);
      const [scroll, client] = await page.evaluate<[number, number]>(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]",
      );
      assert.ok(scroll <= client, `the card fits the phone: ${scroll} px on ${client} px`);
      await shot(page, "confirm-card");
      await page.click(`${card} .confirmation-approve`);
      await waitFor(() => unlocks().length === 1, "the one unlock");
      await page.waitFor(card, { state: "detached" });
      await page.waitFor("#confirmations-status", { text: "lock.front_door" });
      assert.equal(unlocks().length, 1);
      assert.deepEqual(unlocks()[0]!.entity_ids, ["lock.front_door"]);

      // 2. A second unlock, denied in Chinese: nothing runs.
      const second = await memberAsks(2);
      await page.click("#lang-toggle");
      const card2 = `.confirmation[data-id="${second}"]`;
      await page.waitFor(card2, { text: "lock.front_door" });
      assert.match((await page.text(`${card2} .confirmation-deny`)) ?? "", /拒绝/);
      await shot(page, "confirm-card-zh");
      await page.click(`${card2} .confirmation-deny`);
      await page.waitFor(card2, { state: "detached" });
      assert.deepEqual((await get("/api/confirmations")).pending, []);
      assert.equal(unlocks().length, 1, "the denied unlock did not run");
      const audit = await get("/api/smart_home/actions");
      assert.deepEqual(
        audit.confirmations.map((
          c: { id: string; outcome: string; decidedOn: string },
        ) => [c.id, c.outcome, c.decidedOn]),
        [[second, "declined", "console"], [first, "confirmed", "console"]],
      );

      // 3. The Actions page: both held calls, newest first, who asked where, the rule, and the owner's decision.
      await page.click("#lang-toggle");
      await page.click('a[data-page="actions"]');
      await page.waitFor('#page-actions[data-ready="true"]', { state: "attached" });
      const rows = await page.texts("#page-actions .action");
      assert.equal(rows.length, 2, rows.join("\n"));
      for (const row of rows) {
        assert.match(row, /ha_call_service/);
        assert.match(row, /30003000/);
        assert.match(row, /qq:private:30003000/);
        assert.match(row, /a sensitive action/);
      }
      assert.match(rows[0]!, /Denied/, `newest first: ${rows[0]}`);
      assert.match(rows[1]!, /Approved/, rows[1]);
      assert.match(rows[1]!, /console/);
      await shot(page, "actions");
      // The first load asks /api/whoami without a token (homed may need none): its 401 is expected.
      assert.deepEqual(page.consoleErrors.filter((line) => !/favicon|status of 401/.test(line)), []);
    } finally {
      await teardown(
        () => browser.close(),
        () => sim?.close(),
        async () => assert.equal(await homed.stop(), 0, homed.stderr()),
        () => ha.close(),
        () => llm.close(),
      );
    }
  },
});
