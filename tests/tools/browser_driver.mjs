// The Node side of tests/support/browser.ts: drives one headless Chromium page with playwright-core (which cannot be
// imported by Deno without --allow-all). Protocol on stdin/stdout, one JSON object per line:
//   request  {id, op, args}
//   reply    {id, ok: true, value} | {id, ok: false, error}
//   event    {event: "consoleError", text} | {event: "dialog", type, message}   (no id; pushed as they happen)
// Requests run as they arrive (the Deno side awaits each call, so they are in order); the first must be "launch".
// Chromium is launched once per process; the process closes it and exits when stdin closes. Only `evaluate` runs
// caller-supplied code, and it runs in the page, never in Node.

import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

let browser, context, page, cdp, launching;
let dialogAction = "dismiss", promptText = undefined;
let network = { requests: 0, transferredBytes: 0, pending: new Set() };

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function resetNetwork() {
  network = { requests: 0, transferredBytes: 0, pending: new Set() };
}

/** `work`, or a rejection after `timeoutMs` (for page calls that have no timeout of their own, such as evaluate). */
function inTime(work, timeoutMs, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: Timeout ${timeoutMs}ms exceeded.`)), timeoutMs);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** A string, or a serialised RegExp `{source, flags}`, as a RegExp that matches it (strings: as a substring). */
function textPattern(text) {
  if (typeof text === "string") return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(text.source, text.flags);
}

/** This process's descendants (Chromium and its helpers), read from /proc. */
function descendants() {
  const parents = new Map();
  const commands = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // Field 4 (ppid) follows the command in parentheses, which may itself hold spaces or parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(name), ppid);
      commands.set(Number(name), readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim());
    } catch {
      // The process ended while being read.
    }
  }
  const found = [];
  const wanted = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (wanted.has(ppid) && !wanted.has(pid)) {
        wanted.add(pid);
        found.push({ pid, command: commands.get(pid) ?? "" });
        grew = true;
      }
    }
  }
  return found;
}

const ops = {
  async launch({ width, height, locale, deviceScaleFactor, mobile, timeoutMs }) {
    if (browser) throw new Error("already launched");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      timeout: timeoutMs,
    });
    context = await browser.newContext({
      viewport: { width, height },
      locale,
      deviceScaleFactor,
      isMobile: mobile,
      hasTouch: mobile,
    });
    context.setDefaultTimeout(timeoutMs);
    context.setDefaultNavigationTimeout(timeoutMs);
    page = await context.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") send({ event: "consoleError", text: message.text() });
    });
    page.on("pageerror", (error) => send({ event: "consoleError", text: String(error.stack ?? error) }));
    page.on("dialog", (dialog) => {
      send({ event: "dialog", type: dialog.type(), message: dialog.message() });
      const answered = dialogAction === "accept" ? dialog.accept(promptText) : dialog.dismiss();
      answered.catch(() => {}); // the page may be gone
    });
    cdp = await context.newCDPSession(page);
    cdp.on("Network.requestWillBeSent", ({ requestId }) => {
      if (!network.pending.has(requestId)) network.requests++;
      network.pending.add(requestId);
    });
    cdp.on("Network.loadingFinished", ({ requestId, encodedDataLength }) => {
      network.pending.delete(requestId);
      network.transferredBytes += encodedDataLength;
    });
    cdp.on("Network.loadingFailed", ({ requestId }) => network.pending.delete(requestId));
    await cdp.send("Network.enable");
    return { version: browser.version() };
  },

  async goto({ url, waitUntil, timeoutMs }) {
    resetNetwork();
    const response = await page.goto(url, { waitUntil, timeout: timeoutMs });
    return { status: response?.status() ?? null };
  },

  async reload({ waitUntil, timeoutMs }) {
    resetNetwork();
    const response = await page.reload({ waitUntil, timeout: timeoutMs });
    return { status: response?.status() ?? null };
  },

  async fill({ selector, text, timeoutMs }) {
    await page.locator(selector).first().fill(text, { timeout: timeoutMs });
  },

  async click({ selector, timeoutMs }) {
    await page.locator(selector).first().click({ timeout: timeoutMs });
  },

  async press({ selector, key, timeoutMs }) {
    await page.locator(selector).first().press(key, { timeout: timeoutMs });
  },

  async waitFor({ selector, text, state, timeoutMs }) {
    let locator = page.locator(selector);
    if (text !== undefined) locator = locator.filter({ hasText: textPattern(text) });
    await locator.first().waitFor({ state, timeout: timeoutMs });
  },

  async text({ selector, timeoutMs }) {
    return await page.locator(selector).first().textContent({ timeout: timeoutMs });
  },

  async texts({ selector, timeoutMs }) {
    return await inTime(page.locator(selector).allTextContents(), timeoutMs, "locator.allTextContents");
  },

  async count({ selector, timeoutMs }) {
    return await inTime(page.locator(selector).count(), timeoutMs, "locator.count");
  },

  async evaluate({ source, arg, timeoutMs }) {
    // Runs in the page: the function's source, called with the JSON argument.
    return await inTime(page.evaluate(`(${source})(${JSON.stringify(arg ?? null)})`), timeoutMs, "page.evaluate");
  },

  async screenshot({ path, fullPage, timeoutMs }) {
    await page.screenshot({ path, fullPage, timeout: timeoutMs });
  },

  dialog({ action, text }) {
    dialogAction = action;
    promptText = text;
  },

  async setLocalStorage({ key, value, timeoutMs }) {
    const set = page.evaluate(([k, v]) => localStorage.setItem(k, v), [key, value]);
    await inTime(set, timeoutMs, "page.evaluate");
  },

  async clearCache({ timeoutMs }) {
    // The HTTP cache (and with it V8's code cache) and cookies: the next load fetches and compiles everything again.
    await inTime(cdp.send("Network.clearBrowserCache"), timeoutMs, "Network.clearBrowserCache");
    await inTime(cdp.send("Network.clearBrowserCookies"), timeoutMs, "Network.clearBrowserCookies");
  },

  async metrics({ readyMark, timeoutMs }) {
    const measured = page.evaluate((mark) => {
      const navigation = performance.getEntriesByType("navigation")[0];
      const ready = performance.getEntriesByName(mark, "mark")[0];
      let resourceBytes = navigation?.transferSize ?? 0;
      for (const entry of performance.getEntriesByType("resource")) resourceBytes += entry.transferSize;
      return {
        domContentLoadedMs: navigation?.domContentLoadedEventEnd ?? 0,
        loadMs: navigation?.loadEventEnd ?? 0,
        readyMs: ready?.startTime ?? null,
        resourceTimingBytes: resourceBytes,
      };
    }, readyMark);
    const timing = await inTime(measured, timeoutMs, "page.evaluate");
    return {
      ...timing,
      transferredBytes: network.transferredBytes,
      requests: network.requests,
      pendingRequests: network.pending.size,
    };
  },

  processes() {
    return descendants();
  },
};

async function handle(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    send({ id: null, ok: false, error: `not JSON: ${line.slice(0, 200)}` });
    return;
  }
  const { id, op, args } = request;
  try {
    if (!Object.hasOwn(ops, op)) throw new Error(`unknown op ${JSON.stringify(op)}`);
    if (op !== "launch" && !page) throw new Error("the browser is not launched");
    const result = ops[op](args ?? {});
    if (op === "launch") launching = result;
    const value = await result;
    send({ id, ok: true, value: value ?? null });
  } catch (error) {
    send({ id, ok: false, error: String(error?.message ?? error).trimEnd() });
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => void handle(line));
lines.on("close", async () => {
  try {
    await launching?.catch(() => {});
    await browser?.close();
  } finally {
    process.exit(0);
  }
});
