/**
 * Headless Chromium for end-to-end tests of the web console. playwright-core cannot be imported by Deno without
 * `--allow-all` (it probes `/proc/sys/...` at load), so it runs under Node in `tests/tools/browser_driver.mjs`, and this module
 * talks to that child over stdin/stdout, one JSON line per request, reply or event. The child gets only `PATH` and
 * `HOME`, and needs nothing beyond the test task's `--allow-run=…,node`; playwright-core comes from
 * `tests/tools/node_modules/playwright-core` (`deno task setup`: test-only tools have their own `tests/tools/deno.json`,
 * so `deno task start` never downloads them), Chromium is Debian's `/usr/bin/chromium` (`.ci/run` installs it).
 *
 * Every call has a deadline (10 s unless set): playwright's own timeout is set to it, and this side gives up one
 * second later should the driver hang; a failure names the call and its selector. If the driver dies, pending calls
 * reject saying so. Outside CI a missing node or Chromium makes {@linkcode openBrowser} print why and return
 * `undefined`; under `CI=true` it throws (ARCHITECTURE §8, see `outside_tool.ts`).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { type OutsideNeed, outsideNeed, programRuns, underCi } from "./outside_tool.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
// Beside its own node_modules: Node resolves playwright-core from the driver's folder.
const DRIVER = fileURLToPath(new URL("../tools/browser_driver.mjs", import.meta.url));
const CHROMIUM = "/usr/bin/chromium";
/** How long this side waits beyond a call's own deadline before deciding the driver hangs. */
const GRACE_MS = 1_000;
const STDERR_KEPT = 4_000;

/** How the page is set up. */
export interface BrowserOptions {
  /** Viewport width in CSS pixels (default 1280). */
  readonly width?: number;
  /** Viewport height in CSS pixels (default 800). */
  readonly height?: number;
  /** `navigator.language` and `Accept-Language` (default "en-US"). */
  readonly locale?: string;
  /** Device pixel ratio (default 1). */
  readonly deviceScaleFactor?: number;
  /** A phone: honours `<meta name="viewport">` and has touch (default false). */
  readonly mobile?: boolean;
  /** The default deadline of each call in ms (default 10 000). */
  readonly timeoutMs?: number;
  /** The deadline of starting Node and Chromium in ms (default 30 000). */
  readonly launchTimeoutMs?: number;
}

/** The deadline of one call. */
export interface CallOptions {
  /** In ms; the browser's default (10 s unless {@linkcode BrowserOptions.timeoutMs}) when absent. */
  readonly timeoutMs?: number;
}

/** When a navigation counts as done. */
export interface NavigationOptions extends CallOptions {
  /** Playwright's `waitUntil` (default "load"). */
  readonly waitUntil?: "load" | "domcontentloaded" | "networkidle" | "commit";
}

/** What {@linkcode Page.waitFor} waits for. */
export interface WaitOptions extends CallOptions {
  /** Only elements whose text contains this string (case-sensitive) or matches this RegExp. */
  readonly text?: string | RegExp;
  /** The state the first such element must reach (default "visible"; "hidden" also holds when there is none). */
  readonly state?: "visible" | "attached" | "hidden" | "detached";
}

/** A dialog (`alert`, `confirm`, `prompt`, `beforeunload`) the page opened. */
export interface PageDialog {
  /** "alert", "confirm", "prompt" or "beforeunload". */
  readonly type: string;
  /** The text it showed. */
  readonly message: string;
}

/** What loading the current page cost, since the last {@linkcode Page.goto} or {@linkcode Page.reload}. */
export interface PageMetrics {
  /** Bytes received over the network (bodies as sent, compressed, plus headers), by Chrome's Network domain. */
  readonly transferredBytes: number;
  /** Requests started. */
  readonly requests: number;
  /** Requests not finished yet (open streams such as SSE are not in `transferredBytes`). */
  readonly pendingRequests: number;
  /** The same total as the page sees it (Resource Timing `transferSize`; 0 for responses served from cache). */
  readonly resourceTimingBytes: number;
  /** `domContentLoadedEventEnd`, in ms since navigation start (0 before it). */
  readonly domContentLoadedMs: number;
  /** `loadEventEnd`, in ms since navigation start (0 before it). */
  readonly loadMs: number;
  /** When the page called `performance.mark(readyMark)`, in ms since navigation start; absent if it did not. */
  readonly readyMs?: number;
}

/** A process the driver started (Chromium and its helpers). */
export interface DriverProcess {
  /** Its process id. */
  readonly pid: number;
  /** Its command line, arguments joined by spaces. */
  readonly command: string;
}

/** The one page of a {@linkcode Browser}. Selectors are Playwright's (CSS unless prefixed); actions use the first match. */
export interface Page {
  /** Page errors and `console.error` lines, in the order they came. */
  readonly consoleErrors: readonly string[];
  /** The dialogs the page opened, in order. */
  readonly dialogs: readonly PageDialog[];
  /** Navigates; resolves with the main response's HTTP status (`null` when there was none). */
  goto(url: string, options?: NavigationOptions): Promise<{ status: number | null }>;
  /** Reloads the current page. */
  reload(options?: NavigationOptions): Promise<{ status: number | null }>;
  /** Clears the first matching input and types `text` into it. */
  fill(selector: string, text: string, options?: CallOptions): Promise<void>;
  /** Clicks the first matching element once it is visible, stable and enabled. */
  click(selector: string, options?: CallOptions): Promise<void>;
  /** Focuses the first matching element and presses `key` (Playwright key names: "Enter", "Control+a"). */
  press(selector: string, key: string, options?: CallOptions): Promise<void>;
  /** Waits until the first element matching `selector` (and `text`) reaches `state`. */
  waitFor(selector: string, options?: WaitOptions): Promise<void>;
  /** The `textContent` of the first match, waiting for it to exist. */
  text(selector: string, options?: CallOptions): Promise<string | null>;
  /** The `textContent` of every match now (no waiting). */
  texts(selector: string, options?: CallOptions): Promise<string[]>;
  /** How many elements match now. */
  count(selector: string, options?: CallOptions): Promise<number>;
  /** Calls the function whose source is `fn` in the page, with `arg` (JSON); resolves with its JSON result. */
  evaluate<T = unknown>(fn: string, arg?: unknown, options?: CallOptions): Promise<T>;
  /** Writes a PNG of the viewport (or the whole page) to `path`. */
  screenshot(path: string, options?: CallOptions & { readonly fullPage?: boolean }): Promise<void>;
  /** How later dialogs are answered (until called again; "dismiss" before any call); `promptText` answers prompts. */
  onDialog(action: "accept" | "dismiss", promptText?: string): Promise<void>;
  /** Sets `localStorage[key]` for the current page's origin. */
  setLocalStorage(key: string, value: string, options?: CallOptions): Promise<void>;
  /** Empties the browser's HTTP cache (and so its compiled-code cache) and cookies; `localStorage` stays. */
  clearCache(options?: CallOptions): Promise<void>;
  /** Network bytes and timings of the current page; `readyMark` names a `performance.mark` (default "ready"). */
  metrics(options?: CallOptions & { readonly readyMark?: string }): Promise<PageMetrics>;
}

/** A headless Chromium with one page, run by a Node child; close it (or `await using`) to end both. */
export interface Browser extends AsyncDisposable {
  /** The page. */
  readonly page: Page;
  /** The Node driver's process id. */
  readonly pid: number;
  /** Chromium's version ("156.0.8078.114"). */
  readonly version: string;
  /** The processes the driver runs now (Chromium's). */
  processes(): Promise<DriverProcess[]>;
  /** Closes Chromium and the driver and waits for both; never throws. Safe to call twice. */
  close(): Promise<void>;
}

interface Pending {
  readonly what: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  readonly timer: ReturnType<typeof setTimeout>;
}

type Message =
  | { id: number | null; ok: true; value: unknown }
  | { id: number | null; ok: false; error: string }
  | { event: "consoleError"; text: string }
  | { event: "dialog"; type: string; message: string };

let need: Promise<OutsideNeed> | undefined;

/**
 * Whether a browser can run here (node on PATH, `tests/tools/node_modules/playwright-core` installed, `/usr/bin/chromium`
 * executable); probed once. Use its `ignore` for `Deno.test`.
 *
 * @example
 * ```ts
 * const browsers = await browserNeed();
 * Deno.test({ name: "the console loads", ignore: browsers.ignore, fn: async () => {
 *   browsers.assertAvailable();
 * } });
 * ```
 */
export function browserNeed(): Promise<OutsideNeed> {
  need ??= outsideNeed("a headless browser (node, playwright-core, chromium)", async () => {
    const node = await programRuns("node", ["--version"]);
    if (node !== undefined) return node;
    try {
      await Deno.stat(`${ROOT}tests/tools/node_modules/playwright-core/package.json`);
    } catch {
      return "tests/tools/node_modules/playwright-core is missing (run deno task setup)";
    }
    // Through sh: the test task may run node and sh, not chromium, and may not read /usr/bin.
    return await programRuns("sh", ["-c", `test -x ${CHROMIUM}`]) === undefined
      ? undefined
      : `${CHROMIUM} is missing (apt-get install chromium)`;
  });
  return need;
}

/**
 * Starts the driver and Chromium with one page. Resolves to `undefined`, having printed why, when node or Chromium
 * is missing outside CI; under `CI=true` that throws instead.
 *
 * @example
 * ```ts
 * await using browser = await openBrowser({ width: 375, height: 800, locale: "en-US" });
 * if (browser) {
 *   const { page } = browser;
 *   await page.goto("http://127.0.0.1:8080/");
 *   await page.fill("#message", "lights off");
 *   await page.press("#message", "Enter");
 *   await page.waitFor(".reply", { text: /done/ });
 *   const overflow = await page.evaluate<number>("() => document.documentElement.scrollWidth");
 * }
 * ```
 */
export async function openBrowser(options: BrowserOptions = {}): Promise<Browser | undefined> {
  const available = await browserNeed();
  if (available.missing !== undefined) {
    if (underCi()) available.assertAvailable();
    console.log(`no browser: ${available.missing}`);
    return undefined;
  }
  const driver = new Driver(options.timeoutMs ?? 10_000);
  try {
    const { version } = await driver.call("launch", "launch()", {
      width: options.width ?? 1280,
      height: options.height ?? 800,
      locale: options.locale ?? "en-US",
      deviceScaleFactor: options.deviceScaleFactor ?? 1,
      mobile: options.mobile ?? false,
    }, options.launchTimeoutMs ?? 30_000) as { version: string };
    return new ChromiumBrowser(driver, version);
  } catch (error) {
    await driver.close();
    throw error;
  }
}

function env(): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ["PATH", "HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/** The Node child and the requests in flight to it. */
class Driver {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending = new Map<number, Pending>();
  readonly #done: Promise<unknown>;
  #nextId = 1;
  #stderr = "";
  #exited: string | undefined;
  #closing: Promise<void> | undefined;
  readonly consoleErrors: string[] = [];
  readonly dialogs: PageDialog[] = [];

  constructor(readonly defaultTimeoutMs: number) {
    this.#child = new Deno.Command("node", {
      args: [DRIVER],
      clearEnv: true,
      env: env(),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    const stdout = this.#readLines();
    const stderr = this.#readStderr();
    this.#done = Promise.all([stdout, stderr, this.#child.status]).then(([, , status]) => {
      this.#exited = `the browser driver (node, pid ${this.pid}) exited with code ${status.code}` +
        (status.signal ? ` (${status.signal})` : "") + (this.#stderr ? `; its stderr: ${this.#stderr.trim()}` : "");
      for (const [id, pending] of this.#pending) {
        this.#pending.delete(id);
        clearTimeout(pending.timer);
        pending.reject(new Error(`browser: ${pending.what} failed: ${this.#exited}`));
      }
    });
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** Sends `op`; `what` names it in errors ("click(\"#send\")"). */
  call(op: string, what: string, args: Record<string, unknown>, timeoutMs = this.defaultTimeoutMs): Promise<unknown> {
    if (this.#exited !== undefined || this.#closing) {
      return Promise.reject(new Error(`browser: ${what} failed: ${this.#exited ?? "the browser is closed"}`));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`browser: ${what} failed: no answer within ${timeoutMs} ms (+${GRACE_MS} ms grace)`));
      }, timeoutMs + GRACE_MS);
      this.#pending.set(id, { what, resolve, reject, timer });
      const line = JSON.stringify({ id, op, args: { ...args, timeoutMs } }) + "\n";
      this.#writer.write(new TextEncoder().encode(line)).catch((error: Error) => {
        if (!this.#pending.delete(id)) return;
        clearTimeout(timer);
        reject(new Error(`browser: ${what} failed: cannot write to the driver (${error.message})`));
      });
    });
  }

  async #readLines(): Promise<void> {
    let buffered = "";
    for await (const chunk of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim()) this.#receive(line);
      }
    }
  }

  async #readStderr(): Promise<void> {
    for await (const chunk of this.#child.stderr.pipeThrough(new TextDecoderStream())) {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_KEPT);
    }
  }

  #receive(line: string): void {
    let message: Message;
    try {
      message = JSON.parse(line);
    } catch {
      this.#stderr = (this.#stderr + `(stdout) ${line}\n`).slice(-STDERR_KEPT);
      return;
    }
    if ("event" in message) {
      if (message.event === "consoleError") this.consoleErrors.push(message.text);
      else this.dialogs.push({ type: message.type, message: message.message });
      return;
    }
    const pending = message.id === null ? undefined : this.#pending.get(message.id);
    if (!pending || message.id === null) return; // given up on already
    this.#pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.ok) pending.resolve(message.value);
    else pending.reject(new Error(`browser: ${pending.what} failed: ${message.error}`));
  }

  /** Closes the driver's stdin (it then closes Chromium and exits) and waits; kills it if it lingers. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#writer.close().catch(() => {});
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), 10_000));
      if (await Promise.race([this.#done, late]) === "late") {
        for (const signal of ["SIGTERM", "SIGKILL"] as const) {
          try {
            this.#child.kill(signal);
          } catch {
            // already gone
          }
          const killed = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), 3_000));
          if (await Promise.race([this.#done, killed]) !== "late") break;
        }
      }
      clearTimeout(timer);
      await this.#done;
    })();
    return this.#closing;
  }
}

class ChromiumPage implements Page {
  constructor(readonly driver: Driver) {}

  get consoleErrors(): readonly string[] {
    return this.driver.consoleErrors;
  }

  get dialogs(): readonly PageDialog[] {
    return this.driver.dialogs;
  }

  #call<T>(op: string, what: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<T> {
    return this.driver.call(op, what, args, options.timeoutMs) as Promise<T>;
  }

  goto(url: string, options: NavigationOptions = {}): Promise<{ status: number | null }> {
    return this.#call("goto", `goto(${JSON.stringify(url)})`, { url, waitUntil: options.waitUntil }, options);
  }

  reload(options: NavigationOptions = {}): Promise<{ status: number | null }> {
    return this.#call("reload", "reload()", { waitUntil: options.waitUntil }, options);
  }

  async fill(selector: string, text: string, options?: CallOptions): Promise<void> {
    await this.#call("fill", `fill(${JSON.stringify(selector)})`, { selector, text }, options);
  }

  async click(selector: string, options?: CallOptions): Promise<void> {
    await this.#call("click", `click(${JSON.stringify(selector)})`, { selector }, options);
  }

  async press(selector: string, key: string, options?: CallOptions): Promise<void> {
    const what = `press(${JSON.stringify(selector)}, ${JSON.stringify(key)})`;
    await this.#call("press", what, { selector, key }, options);
  }

  async waitFor(selector: string, options: WaitOptions = {}): Promise<void> {
    const { text, state = "visible" } = options;
    const wire = text instanceof RegExp ? { source: text.source, flags: text.flags } : text;
    const what = `waitFor(${JSON.stringify(selector)}, ${JSON.stringify({ text: text?.toString(), state })})`;
    await this.#call("waitFor", what, { selector, text: wire, state }, options);
  }

  text(selector: string, options?: CallOptions): Promise<string | null> {
    return this.#call("text", `text(${JSON.stringify(selector)})`, { selector }, options);
  }

  texts(selector: string, options?: CallOptions): Promise<string[]> {
    return this.#call("texts", `texts(${JSON.stringify(selector)})`, { selector }, options);
  }

  count(selector: string, options?: CallOptions): Promise<number> {
    return this.#call("count", `count(${JSON.stringify(selector)})`, { selector }, options);
  }

  evaluate<T = unknown>(fn: string, arg?: unknown, options?: CallOptions): Promise<T> {
    const shown = fn.length > 80 ? `${fn.slice(0, 77)}...` : fn;
    return this.#call("evaluate", `evaluate(${JSON.stringify(shown)})`, { source: fn, arg }, options);
  }

  async screenshot(path: string, options: CallOptions & { readonly fullPage?: boolean } = {}): Promise<void> {
    const what = `screenshot(${JSON.stringify(path)})`;
    await this.#call("screenshot", what, { path, fullPage: options.fullPage ?? false }, options);
  }

  onDialog(action: "accept" | "dismiss", promptText?: string): Promise<void> {
    // Applied by the driver as soon as it reads the line, so even without `await` it precedes the next call.
    const sent = this.#call<void>("dialog", `onDialog(${JSON.stringify(action)})`, { action, text: promptText });
    sent.catch(() => {}); // a caller who does not await it learns of a dead driver from the next call
    return sent;
  }

  async clearCache(options?: CallOptions): Promise<void> {
    await this.#call("clearCache", "clearCache()", {}, options);
  }

  async setLocalStorage(key: string, value: string, options?: CallOptions): Promise<void> {
    await this.#call("setLocalStorage", `setLocalStorage(${JSON.stringify(key)})`, { key, value }, options);
  }

  async metrics(options: CallOptions & { readonly readyMark?: string } = {}): Promise<PageMetrics> {
    const raw = await this.#call<PageMetrics & { readyMs: number | null }>("metrics", "metrics()", {
      readyMark: options.readyMark ?? "ready",
    }, options);
    const { readyMs, ...rest } = raw;
    return readyMs === null ? rest : { ...rest, readyMs };
  }
}

class ChromiumBrowser implements Browser {
  readonly page: Page;

  constructor(readonly driver: Driver, readonly version: string) {
    this.page = new ChromiumPage(driver);
  }

  get pid(): number {
    return this.driver.pid;
  }

  processes(): Promise<DriverProcess[]> {
    return this.driver.call("processes", "processes()", {}) as Promise<DriverProcess[]>;
  }

  close(): Promise<void> {
    return this.driver.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
