/**
 * The console's People page (issue 39.2) in headless Chromium on a phone (375 px), in English and Chinese, against a
 * real homed whose memory holds facts about alice (one said by the owner in private, one with HTML in it): the owner
 * sees every member and alice's facts by kind with their sources, corrects one (it shows as superseded, saying by
 * what) and forgets another; alice sees only her own page, without the owner's private fact and without the buttons;
 * nothing anyone wrote becomes markup; no page scrolls sideways. Screenshots go to /tmp/homed-console-shots/.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { systemClock } from "../src/clock.ts";
import { log } from "../src/log/logging.ts";
import { openMemory } from "../src/memory/memory.ts";
import { browserNeed, openBrowser, type Page } from "./support/browser.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const OWNER = "owner-token-0123456789";
const ALICE = "alice-token-0123456789";
const IMG = '<img src=x onerror="alert(1)">';
const SHOTS = "/tmp/homed-console-shots";
const browsers = await browserNeed();

/** A workspace whose memory holds four facts about alice: hers (one with HTML), and one the owner said in private. */
async function preparedWorkspace(llmUrl: string) {
  const ws = await workspace({
    llm: { base_url: llmUrl, api_key: TEST_KEY },
    daemon: { api_token: OWNER, api_tokens: { alice: { token: ALICE, trust: "household" } } },
  });
  const memory = await openMemory({
    dir: join(ws.dir, "data", "memory"),
    clock: systemClock,
    logger: log("memory"),
  });
  const alice = { subject: { name: "alice", type: "person" }, single: false, time: Date.now() - 3_600_000 };
  const hers = { saidBy: "alice", trust: "household" as const };
  const heardAlice = (event: string) => [{ event, source: "http", sender: "alice", trust: "household" as const }];
  memory.graph().record({
    ...alice,
    ...hers,
    predicate: "allergic to",
    object: "peanuts",
    provenance: ["e1"],
    heard: heardAlice("e1"),
  });
  memory.graph().record({
    ...alice,
    ...hers,
    predicate: "likes",
    object: `strawberries ${IMG}`,
    provenance: ["e2"],
    heard: heardAlice("e2"),
  });
  memory.graph().record({
    ...alice,
    ...hers,
    predicate: "likes",
    object: "green tea",
    provenance: ["e3"],
    heard: heardAlice("e3"),
  });
  memory.graph().record({
    ...alice,
    predicate: "takes medicine",
    object: "cetirizine",
    provenance: ["e4"],
    saidBy: "owner",
    trust: "owner",
    heard: [{ event: "e4", source: "http", sender: "owner", trust: "owner" }],
  });
  await memory.close();
  return ws;
}

async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.fill("#token", token);
  await page.press("#token", "Enter");
  await page.waitFor('#page-chat[data-ready="true"]', { state: "attached" });
  await page.click('a[data-page="people"]');
  await page.waitFor('#page-people[data-ready="true"]', { state: "attached", timeoutMs: 15_000 });
  await page.waitFor(".profile h3", { text: "alice" });
}

async function assertClean(page: Page, where: string): Promise<void> {
  const found = await page.evaluate<string[]>(
    `() => [...document.querySelectorAll("[onerror], script:not([src]), img[src='x']")].map((el) => el.outerHTML)`,
  );
  assert.deepEqual(found, [], `${where}: markup made from text`);
  const [scroll, client] = await page.evaluate<[number, number]>(
    "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]",
  );
  assert.ok(scroll <= client, `${where}: the page is ${scroll} px wide on a ${client} px screen`);
}

Deno.test({
  name: "the People page on a phone: the owner corrects and forgets; a member sees only her own page",
  ignore: browsers.ignore,
  fn: async () => {
    browsers.assertAvailable();
    const llm = FakeLlm.start(DEFAULT_CONTRACT);
    const homed = await startHomed(await preparedWorkspace(llm.baseUrl));
    const browser = await openBrowser({ width: 375, height: 800, mobile: true, locale: "en-US", timeoutMs: 15_000 });
    assert.ok(browser);
    const { page } = browser;
    try {
      await signIn(page, homed.url, OWNER);
      assert.deepEqual(await page.texts(".people-list .person"), ["owner · 0", "alice · 4"]);
      await page.waitFor('.profile [data-kind="health"] .fact', { text: "peanuts" });
      assert.deepEqual(await page.texts(".profile-kind h3"), ["Health", "Preferences"]);
      assert.match((await page.text('.profile [data-kind="preferences"]')) ?? "", /strawberries <img src=x/);
      await assertClean(page, "owner's people page");
      await Deno.mkdir(SHOTS, { recursive: true });
      await page.screenshot(join(SHOTS, "people-en.png"), { fullPage: true });
      // Correct "green tea" to "oolong": the old fact shows as superseded, by what and by whom.
      await page.onDialog("accept", "oolong");
      const green = '.profile .fact:has(.object:text-is("green tea"))';
      await page.click(`${green} .fact-correct`);
      await page.waitFor(".profile .fact.closed", { text: "oolong" });
      assert.match((await page.text(".profile .fact.closed")) ?? "", /Superseded .* by “oolong” corrected by owner/);
      // Forget "peanuts".
      await page.onDialog("accept");
      await page.click('.profile .fact:has(.object:text-is("peanuts")) .fact-forget');
      await page.waitFor('.profile .fact:has(.object:text-is("peanuts"))', { state: "detached" });
      assert.match((await page.text('.profile [data-kind="health"]')) ?? "", /cetirizine/);
      // In Chinese.
      await page.click("#lang-toggle");
      await page.waitFor('#nav a[data-page="people"]', { text: "家人" });
      await page.click('a[data-page="people"]');
      await page.waitFor(".profile-kind h3", { text: "健康" });
      await assertClean(page, "owner's people page in Chinese");
      await page.screenshot(join(SHOTS, "people-zh.png"), { fullPage: true });

      // Alice: her own page only, without the owner's private fact and without the buttons.
      await page.click("#logout");
      await signIn(page, homed.url, ALICE);
      assert.deepEqual(await page.texts(".people-list .person"), ["alice · 2"]);
      const own = (await page.text(".profile")) ?? "";
      assert.doesNotMatch(own, /cetirizine/);
      assert.equal(await page.count(".fact-correct, .fact-forget"), 0);
      await assertClean(page, "alice's people page");
    } finally {
      await teardown(
        () => browser.close(),
        async () => assert.equal(await homed.stop(), 0, homed.stderr()),
        () => llm.close(),
      );
    }
  },
});
