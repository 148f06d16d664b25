/**
 * The browser harness against a tiny page served here: actions and reads, waits with text, dialogs, evaluation,
 * screenshots, metrics, deadlines that name their selector, a driver that dies mid-call, and a close that leaves no
 * process behind.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type Browser, browserNeed, openBrowser } from "./browser.ts";
import { waitFor } from "./wait.ts";

const need = await browserNeed();

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>harness</title><script src="/app.js" defer></script></head>
<body>
  <button id="greet">Hello</button>
  <p id="later"></p>
  <input id="entry"><ul id="items"></ul>
  <button id="ask">Ask</button><p id="answer"></p>
  <button id="wide">Wide</button><div id="strip" hidden style="width: 2000px; height: 10px"></div>
  <button id="fail">Fail</button>
</body></html>`;

const APP = `
const $ = (id) => document.getElementById(id);
$("greet").onclick = () => {
  $("greet").textContent = "Clicked";
  setTimeout(() => { $("later").textContent = "arrived after 300 ms"; }, 300);
};
$("entry").addEventListener("keydown", (event) => {
  if (event.key !== "Enter") return;
  const item = document.createElement("li");
  item.textContent = $("entry").value;
  $("items").append(item);
  $("entry").value = "";
});
$("ask").onclick = () => { $("answer").textContent = "answer: " + prompt("Your name?"); };
$("wide").onclick = () => { $("strip").hidden = !$("strip").hidden; };
$("fail").onclick = () => { console.error("deliberate console error"); throw new Error("deliberate page error"); };
window.addEventListener("load", () => performance.mark("ready"));
`;

function serve(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/") return new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
    if (path === "/favicon.ico") return new Response(null, { status: 204 });
    if (path === "/app.js") return new Response(APP, { headers: { "content-type": "text/javascript" } });
    return new Response("not found", { status: 404 });
  });
}

/** Runs `fn` with a page at the served site, closing both after. */
async function withPage(fn: (browser: Browser, url: string) => Promise<void>): Promise<void> {
  need.assertAvailable();
  const server = serve();
  const browser = await openBrowser({ width: 375, height: 800, locale: "en-US" });
  try {
    assert.ok(browser, "openBrowser gave no browser");
    await fn(browser, `http://127.0.0.1:${server.addr.port}/`);
  } finally {
    await browser?.close();
    await server.shutdown();
  }
}

/** Whether `pid` runs: exists and is not a zombie (orphans go to PID 1, which in a container may never reap them). */
async function running(pid: number): Promise<boolean> {
  const script = `kill -0 ${pid} && ! grep -qE '^State:[[:space:]]+Z' /proc/${pid}/status`;
  const out = await new Deno.Command("sh", { args: ["-c", script], stdout: "null", stderr: "null" }).output();
  return out.success;
}

Deno.test({
  name: "goto, click and text; waitFor text that comes later; press Enter in an input",
  ignore: need.ignore,
  fn: () =>
    withPage(async ({ page }, url) => {
      assert.deepEqual(await page.goto(url), { status: 200 });
      assert.equal(await page.text("#greet"), "Hello");
      await page.click("#greet");
      assert.equal(await page.text("#greet"), "Clicked");
      await page.waitFor("#later", { text: /after \d+ ms/ });
      await page.waitFor("p", { text: "arrived" });
      await page.fill("#entry", "first");
      await page.press("#entry", "Enter");
      await page.fill("#entry", "second");
      await page.press("#entry", "Enter");
      await page.waitFor("#items li", { text: "second" });
      assert.deepEqual(await page.texts("#items li"), ["first", "second"]);
      assert.equal(await page.count("#items li"), 2);
      assert.equal(await page.count("#nothing"), 0);
      assert.deepEqual(page.consoleErrors, []);
    }),
});

Deno.test({
  name: "a prompt is answered as onDialog says, and recorded",
  ignore: need.ignore,
  fn: () =>
    withPage(async ({ page }, url) => {
      await page.goto(url);
      await page.click("#ask"); // dismissed by default: prompt() returns null
      await page.waitFor("#answer", { text: "answer: null" });
      await page.onDialog("accept", "Ada");
      await page.click("#ask");
      await page.waitFor("#answer", { text: "answer: Ada" });
      assert.deepEqual(page.dialogs, [
        { type: "prompt", message: "Your name?" },
        { type: "prompt", message: "Your name?" },
      ]);
    }),
});

Deno.test({
  name: "evaluate measures the page's width before and after a wide element appears; errors are collected",
  ignore: need.ignore,
  fn: () =>
    withPage(async ({ page }, url) => {
      await page.goto(url);
      const width = "() => document.documentElement.scrollWidth";
      assert.equal(await page.evaluate<number>(width), 375);
      await page.click("#wide");
      assert.ok(await page.evaluate<number>(width) >= 2000);
      assert.equal(await page.evaluate<number>("(n) => n * 2", 21), 42);
      await page.click("#fail");
      await waitFor(() => page.consoleErrors.length === 2, "the console error and the page error");
      assert.equal(page.consoleErrors[0], "deliberate console error");
      assert.match(page.consoleErrors[1]!, /deliberate page error/);
    }),
});

Deno.test({
  name: "screenshot writes a PNG; localStorage survives a reload; metrics count the bytes and timings",
  ignore: need.ignore,
  fn: () =>
    withPage(async ({ page }, url) => {
      await page.goto(url);
      const path = await Deno.makeTempFile({ suffix: ".png" });
      try {
        await page.screenshot(path, { fullPage: true });
        const bytes = await Deno.readFile(path);
        assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      } finally {
        await Deno.remove(path);
      }
      await page.setLocalStorage("homed.theme", "dark");
      await page.reload();
      assert.equal(await page.evaluate("() => localStorage.getItem('homed.theme')"), "dark");
      await page.goto(url);
      let metrics = await page.metrics();
      await waitFor(async () => (metrics = await page.metrics()).pendingRequests === 0, "the favicon's request to end");
      assert.equal(metrics.requests, 3, JSON.stringify(metrics)); // the page, app.js, favicon.ico
      const bodies = PAGE.length + APP.length; // favicon.ico: 204, no body
      assert.ok(metrics.transferredBytes > bodies, JSON.stringify(metrics)); // and each response's headers
      assert.ok(metrics.transferredBytes < bodies + 3 * 300, JSON.stringify(metrics));
      assert.ok(metrics.domContentLoadedMs > 0 && metrics.loadMs >= metrics.domContentLoadedMs);
      assert.ok(metrics.readyMs !== undefined && metrics.readyMs >= metrics.domContentLoadedMs);
    }),
});

Deno.test({
  name: "a selector that never appears fails within its deadline, naming the call and the selector",
  ignore: need.ignore,
  fn: () =>
    withPage(async ({ page }, url) => {
      await page.goto(url);
      for (
        const attempt of [
          () => page.waitFor("#missing", { timeoutMs: 300 }),
          () => page.click("#missing", { timeoutMs: 300 }),
        ]
      ) {
        const started = performance.now();
        await assert.rejects(attempt(), (error: Error) => {
          assert.match(error.message, /^browser: (waitFor|click)\("#missing"/);
          assert.match(error.message, /300\s?ms/);
          return true;
        });
        const tookMs = performance.now() - started;
        assert.ok(tookMs >= 300 && tookMs < 1_300, `took ${tookMs} ms`);
      }
      await page.waitFor("#strip", { state: "hidden", timeoutMs: 300 }); // hidden, so no wait
      assert.equal(await page.text("#greet"), "Hello"); // the page still works after a failed call
    }),
});

Deno.test({
  name: "close ends the driver and every Chromium process and removes the profile",
  ignore: need.ignore,
  fn: async () => {
    need.assertAvailable();
    const browser = await openBrowser();
    assert.ok(browser);
    assert.match(browser.version, /^\d+\.\d+/);
    await browser.page.goto("about:blank");
    const processes = await browser.processes();
    const main = processes.find((process) => process.command.includes("--user-data-dir="));
    assert.ok(main, JSON.stringify(processes));
    const profile = /--user-data-dir=(\S+)/.exec(main.command)![1]!;
    await Deno.stat(profile);
    await browser.close();
    await browser.close(); // twice is harmless
    for (const pid of [browser.pid, ...processes.map((process) => process.pid)]) {
      assert.equal(await running(pid), false, `process ${pid} still runs`);
    }
    await assert.rejects(Deno.stat(profile), Deno.errors.NotFound);
    await assert.rejects(browser.page.text("body"), /browser: text\("body"\) failed: .*closed|exited/);
  },
});

Deno.test({
  name: "a driver killed mid-call rejects the pending call naming it; Chromium goes with it",
  ignore: need.ignore,
  fn: async () => {
    need.assertAvailable();
    const browser = await openBrowser();
    assert.ok(browser);
    try {
      const processes = await browser.processes();
      const waiting = browser.page.waitFor("#never", { timeoutMs: 5_000 });
      await new Deno.Command("sh", { args: ["-c", `kill -9 ${browser.pid}`] }).output();
      await assert.rejects(waiting, /browser: waitFor\("#never".*exited with code/);
      for (const { pid } of processes) {
        await waitFor(async () => !(await running(pid)), `Chromium process ${pid} to end`, { limitMs: 5_000 });
      }
    } finally {
      await browser.close();
    }
  },
});
