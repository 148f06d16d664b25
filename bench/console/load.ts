/**
 * The web console's first load in headless Chromium on loopback: a real homed (a child process with its computed
 * flags, the fake LLM); before each load the browser's cache is emptied (nothing cached, nothing compiled). For each
 * of 20 loads in a running browser, and 5 in a browser just started (its own start-up shows there): the login page
 * (to its form), and a returning person's load (the token and who it was in localStorage, as the console keeps them
 * after a login) to the chat page with its conversation shown — bytes
 * transferred (compressed bodies and headers, Chrome's Network domain; the open `/api/events` stream not counted)
 * and time to interactive (the console's `performance.mark("ready")`, from navigation start). The anchor, in the same
 * run and browser: a one-line HTML page served by `Deno.serve` in this process — what any page costs here.
 *
 * Targets (issue 24): ≤ 150 KB gzipped, ≤ 300 ms.
 *
 * Run: `deno task bench:console` (writes bench/out/console/results.json; `--record`: bench/console/results.json).
 *
 * @module
 */

import { DEFAULT_CONTRACT, TEST_KEY } from "../../tests/support/contract.ts";
import { FakeLlm } from "../../tests/support/fake_llm.ts";
import { startHomed, workspace } from "../../tests/support/homed_process.ts";
import { openBrowser, type Page, type PageMetrics } from "../../tests/support/browser.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const LOADS = 20;
const COLD_LOADS = 5;
const TOKEN = "bench-owner-token-0123456789";

const llm = FakeLlm.start(DEFAULT_CONTRACT);
const homed = await startHomed(
  await workspace({
    llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
    onebot: { enabled: false },
    daemon: { api_token: TOKEN },
  }),
);
const anchor = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  () =>
    new Response("<!doctype html><title>anchor</title><p>anchor</p><script>performance.mark('ready')</script>", {
      headers: { "content-type": "text/html; charset=utf-8" },
    }),
);
// A short conversation for the logged-in load to show.
for (const text of ["Good morning", "What is on today?", "Remind me to water the plants"]) {
  llm.enqueue({ reply: `Noted: ${text}.` });
  const response = await fetch(`${homed.url}/api/chat`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  if (!response.ok) throw new Error(`/api/chat answered ${response.status}: ${await response.text()}`);
  await response.body?.cancel();
}

type Kind = "login page" | "returning person: chat page" | "anchor: a one-line page";
const KINDS: Kind[] = ["login page", "returning person: chat page", "anchor: a one-line page"];
/** Each kind in a warm browser with its cache emptied before each load, and once per fresh browser (cold start). */
const samples = new Map<string, PageMetrics[]>();
const add = (name: string, metrics: PageMetrics) => samples.set(name, [...samples.get(name) ?? [], metrics]);

/** One load of `kind`: the origin opened first (storage set or cleared), the cache emptied, then the page. */
async function load(page: Page, kind: Kind): Promise<PageMetrics> {
  if (kind === "anchor: a one-line page") {
    await page.goto(`http://127.0.0.1:${anchor.addr.port}/healthz`);
    await page.clearCache();
    await page.goto(`http://127.0.0.1:${anchor.addr.port}/`);
    return await page.metrics();
  }
  await page.goto(`${homed.url}/healthz`);
  await page.evaluate("() => localStorage.clear()");
  if (kind === "returning person: chat page") {
    // What the console keeps after a login: the token and who it is.
    await page.setLocalStorage("homed.token", TOKEN);
    await page.setLocalStorage("homed.who", JSON.stringify({ name: "owner", trust: "owner" }));
  }
  await page.clearCache();
  if (kind === "login page") {
    await page.goto(`${homed.url}/`);
    await page.waitFor("#login-form");
  } else {
    await page.goto(`${homed.url}/#chat`);
    await page.waitFor('#page-chat[data-ready="true"]', { state: "attached" });
  }
  return await page.metrics();
}

try {
  for (const kind of KINDS) {
    const browser = await openBrowser({ width: 375, height: 800, mobile: true });
    if (!browser) throw new Error("The benchmark needs node, playwright-core and /usr/bin/chromium");
    try {
      await load(browser.page, kind); // warm-up: the browser's own start, not the page's
      for (let i = 0; i < LOADS; i++) add(kind, await load(browser.page, kind));
    } finally {
      await browser.close();
    }
  }
  for (let i = 0; i < COLD_LOADS; i++) {
    for (const kind of KINDS) {
      const browser = await openBrowser({ width: 375, height: 800, mobile: true });
      if (!browser) throw new Error("The benchmark needs node, playwright-core and /usr/bin/chromium");
      try {
        add(`${kind}, in a browser just started`, await load(browser.page, kind));
      } finally {
        await browser.close();
      }
    }
  }
} finally {
  await homed.stop();
  await llm.close();
  await anchor.shutdown();
}

const round = (value: number) => Math.round(value * 10) / 10;
const rows = Object.fromEntries(
  [...samples].map(([kind, metrics]) => {
    const ready = metrics.map((m) => m.readyMs ?? m.loadMs);
    return [kind, {
      kb_transferred: round(percentile(metrics.map((m) => m.transferredBytes), 50) / 1024),
      requests: percentile(metrics.map((m) => m.requests), 50),
      ready_p50_ms: round(percentile(ready, 50)),
      ready_p90_ms: round(percentile(ready, 90)),
      dom_content_loaded_p50_ms: round(percentile(metrics.map((m) => m.domContentLoadedMs), 50)),
      n: metrics.length,
    }];
  }),
);
const env = await environment();
await writeResults(new URL("./results.json", import.meta.url), { ...env, rows });
console.log(`Console first load in Chromium (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
