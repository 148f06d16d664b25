/**
 * The console's pages as an owner sees them, in headless Chromium on a phone (375 px) and a desktop (1280 px), in
 * English and Chinese, against a real homed with a month of usage, a budget nearly spent, a QQ implementation
 * connected and one refused, reminders, the shipped QQ plugin and a hostile one, a knowledge topic with the butler's
 * markers: the butler's Markdown is drawn (bold, code, lists, links to http(s) only) and nothing anyone wrote becomes
 * markup — `<img onerror>` and `<script>` in a reply, a memory fact, a knowledge topic and a plugin's name stay text,
 * with no element made and no dialog opened; the chat shows no `[via …]` tags and keeps its Send button on a phone's
 * screen; the status page is a dashboard with what needs attention first, each QQ connection and its refusals, and
 * the usage of 30 days as a chart, the automatic backups (the last one, verified, the next, how many kept), the disk's
 * free space and a damaged file set aside at start; the schedules page shows the week ahead as a timeline; plugins have their own page,
 * the skill and the native plugin labelled; the turn inspector's headers stay whole on a desktop; no page scrolls
 * sideways. Screenshots of every page at both widths in both languages go to /tmp/homed-console-shots/.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock } from "./support/fake_clock.ts";
import { log } from "../src/log/logging.ts";
import { openMemory } from "../src/memory/memory.ts";
import { UsageLedger } from "../src/provider/usage_ledger.ts";
import { systemClock } from "../src/clock.ts";
import { takeBackup } from "../src/backup/auto_backup.ts";
import { loadConfig } from "../src/config/load.ts";
import { browserNeed, openBrowser, type Page } from "./support/browser.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { type HomedProcess, REPO, startHomed, workspace } from "./support/homed_process.ts";
import { OneBotSim } from "./support/onebot_sim.ts";
import { teardown } from "./support/teardown.ts";

const OWNER = "owner-token-0123456789";
const QQ_TOKEN = "onebot-token-0123456789";
const QQ_OWNER = "20002000";
const BOT = "10001000";
const SHOTS = "/tmp/homed-console-shots";
const PRICES = { input: 2, input_cache_hit: 0.5, output: 8, currency: "CNY" };
const browsers = await browserNeed();

/** What someone hostile writes, in every place the console shows text from. */
const IMG = '<img src=x onerror="alert(1)">';
const SCRIPT = "<script>alert(2)</script>";

/** The butler's reply streamed into the page: Markdown, and a link that must not become one. */
const MARKDOWN_REPLY = [
  "Here is the **plan** for *tonight*:",
  "",
  "1. Water the `tomatoes`",
  "2. Close the windows",
  "   - the bedroom",
  "   - the kitchen",
  "",
  "See [the guide](https://example.org/garden) — not [this one](javascript:alert(3)).",
  "",
  "```",
  "lights off <b>now</b>",
  "```",
].join("\n");

/** An ISO time `ms` from now with a +08:00 offset, as the model would write it for a household in Shanghai. */
function inShanghai(ms: number): string {
  return new Date(Date.now() + ms + 8 * 3_600_000).toISOString().replace("Z", "+08:00");
}

/**
 * A workspace with a month of usage in usage.db, a hostile fact in memory, and a plugins folder holding the shipped
 * QQ plugin and one whose name and description are HTML.
 */
async function preparedWorkspace(llmUrl: string) {
  // The primary's name as homed counts it (`<model>@<host>`), so the earlier days are costed at its prices.
  const primary = `deepseek-v4-flash@${new URL(llmUrl).host}`;
  const ws = await workspace({
    llm: { base_url: llmUrl, api_key: TEST_KEY, prices: PRICES, budget: { daily: 0.1 } },
    onebot: { owner: QQ_OWNER, access_token: QQ_TOKEN, min_send_interval: "0s" },
    daemon: { api_token: OWNER, timezone: "Asia/Shanghai" },
  });
  const data = join(ws.dir, "data");
  await Deno.mkdir(data, { recursive: true });
  // 29 days of earlier usage, a different amount each day (none on Sundays).
  const clock = new FakeClock(Date.now() - 29 * 86_400_000);
  const ledger = UsageLedger.open({
    path: join(data, "usage.db"),
    clock,
    timezone: "Asia/Shanghai",
    prices: PRICES,
    provider: primary,
  });
  for (let day = 0; day < 29; day++) {
    if (new Date(clock.now()).getUTCDay() !== 0) {
      const prompt = 4_000 + ((day * 7_919) % 23_000);
      const hit = Math.round(prompt * (0.3 + (day % 5) / 10));
      for (let request = 0; request < 1 + (day % 4); request++) {
        ledger.record({
          promptTokens: prompt,
          completionTokens: 300 + day * 20,
          totalTokens: prompt + 300 + day * 20,
          cacheHitTokens: hit,
          cacheMissTokens: prompt - hit,
        }, primary);
      }
    }
    ledger.flush();
    clock.advance(86_400_000);
  }
  ledger.close();
  // A fact whose subject and value are HTML.
  const memory = await openMemory({ dir: join(data, "memory"), clock: systemClock, logger: log("memory") });
  memory.graph().record({
    subject: { name: `spare key ${IMG}`, type: "thing" },
    predicate: "location",
    object: `under the mat ${SCRIPT}`,
    time: Date.now() - 3_600_000,
    provenance: [],
    single: true,
  });
  await memory.close();
  // The shipped QQ plugin, and a plugin whose name and description are HTML.
  const plugins = join(ws.dir, "plugins");
  await Deno.mkdir(join(plugins, "qq"), { recursive: true });
  for (const file of ["SKILL.md", "skill.json"]) {
    await Deno.copyFile(join(REPO, "plugins", "qq", file), join(plugins, "qq", file));
  }
  await Deno.mkdir(join(plugins, "notes"));
  await Deno.writeTextFile(
    join(plugins, "notes", "SKILL.md"),
    `---\nname: ${JSON.stringify(`notes ${IMG}`)}\ndescription: ${
      JSON.stringify(`Keeps notes ${SCRIPT}`)
    }\n---\n\nNotes.\n`,
  );
  // One automatic backup already taken (the list homed reads at start), and a routes.json cut in half, which homed
  // sets aside at start (issue 38): the status page's backups and storage card shows both.
  const loaded = await loadConfig({ flag: ws.configPath, readEnv: (name) => ws.env[name], cwd: ws.dir });
  await takeBackup({ loaded, now: () => Date.now() - 3_600_000, version: "test", timezone: "Asia/Shanghai" });
  await Deno.writeTextFile(join(data, "routes.json"), '{"http": "qq:pri');
  return ws;
}

/** No page may scroll sideways. */
async function assertNoSidewaysScroll(page: Page, where: string): Promise<void> {
  const [scroll, client] = await page.evaluate<[number, number]>(
    "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]",
  );
  assert.ok(scroll <= client, `${where}: the page is ${scroll} px wide on a ${client} px screen`);
}

/** Nothing anyone wrote became an element: no handler attribute, no inline script, no image of the payload. */
async function assertNothingInjected(page: Page, where: string): Promise<void> {
  const found = await page.evaluate<string[]>(
    `() => [...document.querySelectorAll("[onerror], script:not([src]), img[src='x'], a[href^='javascript']")]
      .map((el) => el.outerHTML)`,
  );
  assert.deepEqual(found, [], `${where}: markup made from text`);
  assert.deepEqual(page.dialogs, [], `${where}: a dialog opened`);
}

async function openPage(page: Page, name: string): Promise<void> {
  await page.click(`a[data-page="${name}"]`);
  await page.waitFor(`#page-${name}[data-ready="true"]`, { state: "attached", timeoutMs: 15_000 });
}

async function shot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot(join(SHOTS, `${name}.png`), { fullPage: true });
}

const ownerGet = async (homed: HomedProcess, path: string) =>
  await (await fetch(`${homed.url}${path}`, { headers: { authorization: `Bearer ${OWNER}` } })).json();

async function ownerSend(homed: HomedProcess, method: string, path: string, body: unknown) {
  const response = await fetch(`${homed.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${OWNER}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  assert.ok(response.ok, JSON.stringify(answer));
  return answer;
}

/** The chat: tags gone, hostile text kept as text, a streamed Markdown reply drawn, Send on the screen. */
async function checkChat(page: Page, llm: FakeLlm, phone: boolean): Promise<void> {
  await page.waitFor('.msg[data-role="assistant"]', { text: "as text." });
  const mine = await page.texts('.msg[data-role="user"] .msg-text');
  assert.ok(mine.length > 0 && mine.every((text) => !text.includes("[via ")), `tags shown: ${mine}`);
  assert.ok(mine.some((text) => text.startsWith("Show me some HTML")), `the text as written: ${mine}`);
  const replies = await page.texts('.msg[data-role="assistant"] .msg-text');
  assert.ok(replies.some((text) => text.includes(IMG) && text.includes(SCRIPT)), `kept as text: ${replies}`);
  await assertNothingInjected(page, "chat history");
  if (!phone) return;

  llm.enqueue({ reply: MARKDOWN_REPLY, chunks: 5 });
  await page.fill("#chat-input", "What is the plan?");
  await page.press("#chat-input", "Enter");
  const last = '.msg[data-role="assistant"]:last-child .msg-text';
  await page.waitFor(`${last} pre`, { state: "attached" });
  assert.equal(await page.text(`${last} strong`), "plan");
  assert.equal(await page.text(`${last} em`), "tonight");
  assert.equal(await page.text(`${last} ol > li code`), "tomatoes");
  assert.equal(await page.count(`${last} ol > li`), 2);
  assert.deepEqual(await page.texts(`${last} ol ul > li`), ["the bedroom", "the kitchen"]);
  const link = await page.evaluate<Record<string, string | null>>(
    `() => { const a = document.querySelector(${JSON.stringify(`${last} a`)});
      return { href: a.getAttribute("href"), rel: a.getAttribute("rel"), target: a.getAttribute("target"), count: String(document.querySelectorAll(${
      JSON.stringify(`${last} a`)
    }).length) }; }`,
  );
  assert.deepEqual(link, {
    href: "https://example.org/garden",
    rel: "noopener noreferrer",
    target: "_blank",
    count: "1",
  });
  assert.match((await page.text(last)) ?? "", /not this one\./, "a javascript: link is its text only");
  assert.equal(await page.text(`${last} pre`), "lights off <b>now</b>");
  await assertNothingInjected(page, "streamed reply");
  // On a phone the Send button is on the screen, below the conversation.
  const [bottom, height] = await page.evaluate<[number, number]>(
    "() => [document.querySelector('#chat-send').getBoundingClientRect().bottom, innerHeight]",
  );
  assert.ok(bottom <= height, `Send is at ${bottom} px on a ${height} px screen`);
}

/** The status dashboard: problems first, the model with its budget, each QQ connection, the usage chart. */
async function checkStatus(page: Page, phone: boolean, zh: boolean): Promise<void> {
  await page.waitFor("#problems .problem");
  const problems = await page.texts("#problems .problem");
  assert.ok(problems.some((text) => text.includes(zh ? "令牌错误" : "wrong token")), `${problems}`);
  assert.ok(problems.some((text) => text.includes(zh ? "预算快用完了" : "nearly used up")), `${problems}`);
  // Problems first: right under the page's head, above every card, and on the first screen.
  const order = await page.evaluate<number[]>(
    `() => ["#problems", ".dash-grid", "#dash-usage"].map((s) => document.querySelector(s).getBoundingClientRect().top)`,
  );
  assert.ok(order[0]! < order[1]! && order[1]! < order[2]!, `order: ${order}`);
  assert.ok(order[0]! < 400, `the problems start at ${order[0]} px`);
  const connection = `.qq-connection[data-self-id="${BOT}"]`;
  await page.waitFor(connection);
  assert.match(
    (await page.text(connection)) ?? "",
    zh ? /已连接[\s\S]*QQ 10001000[\s\S]*通用/ : /connected[\s\S]*QQ 10001000[\s\S]*universal/,
  );
  assert.match(
    (await page.text('.qq-refused li[data-reason="wrong_token"]')) ?? "",
    zh ? /令牌错误 ×1/ : /wrong token ×1/,
  );
  assert.equal(await page.count("#dash-model meter"), 1, "the daily budget as a meter");
  assert.equal(await page.count("#usage-chart .bar"), 30);
  assert.ok((await page.count("#usage-chart .bar rect.bar-in")) >= 20, "a month of bars");
  await checkStorageCard(page, zh);
  assert.equal(await page.count("#status-raw[open]"), 0, "the raw JSON is a click away");
  assert.match((await page.text("#status-raw pre")) ?? "", /"services"/);
  if (phone) assert.ok((await page.evaluate<number>("() => document.documentElement.scrollHeight")) > 0);
}

/** The backups and storage card: the last backup verified, the next, how many kept, free space, the file set aside. */
async function checkStorageCard(page: Page, zh: boolean): Promise<void> {
  await page.waitFor("#dash-storage");
  const card = (await page.text("#dash-storage")) ?? "";
  assert.match(card, zh ? /备份与存储/ : /Backups and storage/);
  assert.match((await page.text("#dash-storage .backup-last")) ?? "", /\d+(\.\d)? (B|KB|MB)$/, card);
  assert.match(card, zh ? /已校验/ : /verified/);
  assert.match((await page.text("#dash-storage .backup-next")) ?? "", /\d/, "the next backup's time");
  assert.match((await page.text("#dash-storage .backup-kept")) ?? "", zh ? /里的 1 份/ : /^1 archives in \//);
  assert.match((await page.text("#dash-storage .disk-free")) ?? "", zh ? /^剩 .+，共 .+B$/ : /^.+B free of .+B$/);
  assert.equal(await page.count("#dash-storage meter"), 1, "the disk's use as a meter");
  const setAside = (await page.text('#dash-storage .set-aside-file[data-file$="routes.json"]')) ?? "";
  assert.match(setAside, /routes\.json\.damaged-\d{4}-/);
  assert.match(setAside, zh ? /配置文件里的路由/ : /the config's routes/, "what homed started with, in the language");
  assert.match((await page.text("#dash-storage")) ?? "", /homed restore --latest/);
  const problems = await page.texts("#problems .problem");
  assert.ok(
    problems.some((text) => text.includes("routes.json") && text.includes(zh ? "已损坏" : "damaged")),
    `${problems}`,
  );
}

/** The schedules page: the week ahead, today first, with the reminder in two days and the daily one each day. */
async function checkSchedules(page: Page): Promise<void> {
  await page.waitFor("#schedule-timeline");
  assert.equal(await page.count("#schedule-timeline .tl-day"), 7);
  const days = await page.evaluate<Array<[string, string]>>(
    `() => [...document.querySelectorAll("#schedule-timeline .tl-day")].map((day) => [day.getAttribute("data-day"), day.textContent])`,
  );
  const watering = days.filter(([, text]) => text.includes("Water the tomatoes"));
  assert.equal(watering.length, 1, `the one reminder on one day: ${JSON.stringify(days)}`);
  const news = days.filter(([, text]) => text.includes("Morning news"));
  assert.ok(news.length >= 6, `the daily one on each day: ${news.length}`);
  assert.ok((await page.count("#schedule-timeline .tl-dot")) >= 7);
}

/** The plugins page: the QQ plugin once, its skill and native parts labelled and both usable; HTML names as text. */
async function checkPlugins(page: Page, zh: boolean): Promise<void> {
  const qq = '.plugin[data-name="qq"]';
  await page.waitFor(qq);
  assert.equal(await page.count(qq), 1);
  const kinds = await page.texts(`${qq} .plugin-kind`);
  assert.deepEqual(
    kinds,
    zh ? ["技能（SKILL.md）", "内置插件（skill.json，homed 自带的设备）"] : [
      "Skill (SKILL.md)",
      "Native plugin (skill.json, a device built into homed)",
    ],
  );
  const text = (await page.text(qq)) ?? "";
  assert.doesNotMatch(text, /cannot be used|无法使用|不可用/, "the shipped plugin loads with QQ on");
  assert.match(text, zh ? /homed 自己的 onebot 设备已开启/ : /homed's own onebot device is on/);
  if (zh) assert.match(text, /在 QQ 上与家人交流/, "the shipped plugin described in Chinese");
  assert.match((await page.text("#plugins")) ?? "", /notes <img src=x onerror="alert\(1\)">/);
  await assertNothingInjected(page, "plugins");
}

Deno.test({
  name:
    "the console's pages on a phone and a desktop, in English and Chinese: Markdown, no markup from text, the dashboard, pictures",
  ignore: browsers.ignore,
  fn: async () => {
    browsers.assertAvailable();
    const llm = FakeLlm.start(DEFAULT_CONTRACT);
    const homed = await startHomed(await preparedWorkspace(llm.baseUrl));
    const ws = homed.url.replace("http", "ws");
    const sims: OneBotSim[] = [];
    try {
      // The shipped QQ plugin with QQ on through onebot.enabled (the default) is no problem at start.
      assert.doesNotMatch(homed.stderr(), /Plugins: qq:/);
      // QQ: one implementation connected, one refused for a wrong token.
      sims.push(await OneBotSim.connect(`${ws}/onebot/v11/ws`, { token: QQ_TOKEN, selfId: BOT }));
      await assert.rejects(OneBotSim.connect(`${ws}/onebot/v11/ws`, { token: "wrong-token-000000000", selfId: BOT }));
      // A reply with HTML in it, two reminders, and a request that spends most of the day's budget.
      llm.enqueue({ reply: `Here is ${IMG} and ${SCRIPT} as text.` });
      await ownerSend(homed, "POST", "/api/chat", { text: `Show me some HTML ${IMG}` });
      llm.enqueue(
        {
          toolCalls: [
            { name: "schedule_create", arguments: { text: "Water the tomatoes", at: inShanghai(2 * 86_400_000) } },
            { name: "schedule_create", arguments: { text: "Morning news", cron: "30 7 * * *" } },
          ],
        },
        {
          reply: "Both are set.",
          usage: {
            prompt_tokens: 42_000,
            completion_tokens: 200,
            prompt_cache_miss_tokens: 42_000,
            prompt_cache_hit_tokens: 0,
          },
        },
      );
      await ownerSend(homed, "POST", "/api/chat", {
        text: "Remind me to water the tomatoes, and the news every morning",
      });
      assert.equal((await ownerGet(homed, "/api/schedules")).schedules.length, 2);
      // Knowledge the butler learned (its marker), with HTML and Markdown in it.
      await ownerSend(homed, "PUT", "/api/knowledge/topics/garden-notes", {
        markdown: [
          "# Garden notes",
          "",
          "<!-- learned by homed 2026-12-01 -->",
          "## Watering",
          "Water the tomatoes at **dawn**, twice a week. <!-- an aside -->",
          "",
          `- never at noon ${IMG}`,
          `- ${SCRIPT}`,
          "",
          "[a link](javascript:alert(4))",
        ].join("\n"),
      });

      for (const { width, phone } of [{ width: 375, phone: true }, { width: 1280, phone: false }]) {
        const browser = await openBrowser({ width, height: 800, mobile: phone, locale: "en-US", timeoutMs: 15_000 });
        assert.ok(browser);
        const { page } = browser;
        try {
          await page.goto(`${homed.url}/`);
          await page.fill("#token", OWNER);
          await page.press("#token", "Enter");
          await page.waitFor('#page-chat[data-ready="true"]', { state: "attached" });
          assert.equal(await page.count('a[data-page="plugins"]'), 1, "plugins are in the nav");
          for (const zh of [false, true]) {
            const lang = zh ? "zh" : "en";
            if (zh) {
              await page.click("#lang-toggle");
              await page.waitFor('#nav a[data-page="plugins"]', { text: "插件" });
            }
            for (
              const name of [
                "chat",
                "status",
                "memory",
                "knowledge",
                "schedules",
                "plugins",
                "system",
                "actions",
                "turns",
              ]
            ) {
              await openPage(page, name);
              const where = `${name} at ${width} px (${lang})`;
              if (name === "chat") await checkChat(page, llm, phone && !zh);
              if (name === "status") await checkStatus(page, phone, zh);
              if (name === "memory") {
                await page.click(".entity");
                await page.waitFor("#facts .fact", { text: "under the mat" });
                assert.match((await page.text("#facts .fact")) ?? "", /under the mat <script>alert\(2\)<\/script>/);
                assert.match(
                  (await page.text(".entity-detail h3")) ?? "",
                  /spare key <img src=x onerror="alert\(1\)">/,
                );
              }
              if (name === "knowledge") {
                await page.click('.topic[data-topic="garden-notes"]');
                await page.waitFor("#knowledge-view strong", { text: "dawn" });
                const view = (await page.text("#knowledge-view")) ?? "";
                assert.doesNotMatch(view, /<!--|learned by homed|an aside/, "comments are not shown");
                assert.match(view, /never at noon <img src=x onerror="alert\(1\)">/);
                assert.equal(await page.count("#knowledge-view .learned-badge"), 1, "the learned section marked");
                assert.equal(await page.count("#knowledge-view a"), 0, "a javascript: link is text");
              }
              if (name === "schedules") await checkSchedules(page);
              if (name === "plugins") await checkPlugins(page, zh);
              if (name === "turns") {
                await page.click(".turn");
                await page.waitFor("#turn-detail .system-section");
                if (!phone) {
                  // A header breaks between its words at most, never within one (it wrapped a letter a line).
                  const headers = await page.evaluate<Array<[string, number, number]>>(`() =>
                    [...document.querySelectorAll("#turns-table th")].map((th) => {
                      const range = document.createRange();
                      range.selectNodeContents(th);
                      const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
                      return [th.textContent, lines, th.textContent.trim().split(/\\s+/).length];
                    })`);
                  for (const [text, lines, words] of headers) {
                    assert.ok(lines <= words, `"${text}" takes ${lines} lines for ${words} words`);
                  }
                }
              }
              await assertNothingInjected(page, where);
              await assertNoSidewaysScroll(page, where);
              await shot(page, `${name}-${width}-${lang}`);
            }
          }
          // Chromium logs every refused request itself: the first load asks /api/whoami without a token (homed may
          // need none) and is refused with a 401, as expected.
          const errors = page.consoleErrors.filter((line) => !/favicon|status of 401/.test(line));
          assert.deepEqual(errors, []);
        } finally {
          await browser.close();
        }
      }
    } finally {
      await teardown(
        ...sims.map((sim) => () => sim.close()),
        async () => assert.equal(await homed.stop(), 0, homed.stderr()),
        () => llm.close(),
      );
    }
  },
});
