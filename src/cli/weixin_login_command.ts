/**
 * `homed weixin login`: WeChat's QR login on the terminal. It prints the QR code (and its link, to copy), says each
 * change of state in plain words — waiting, scanned, expired and renewed (at most 3 times), confirmed — keeps the bot
 * token in the data dir (0600, never printed), names the WeChat id of who scanned (and suggests it as `weixin.owner`
 * when that is empty), and asks a running homed to pick up the new token now (`POST /api/weixin/recheck`). Ctrl-C
 * stops it and nothing is kept.
 *
 * @module
 */

import { type Clock, systemClock } from "../clock.ts";
import type { LoadedConfig } from "../config/load.ts";
import {
  loadWeixinLogin,
  saveWeixinLogin,
  type WeixinCredentials,
  weixinDir,
  weixinLogin,
  WeixinLoginError,
  type WeixinLoginStep,
} from "../devices/kinds.ts";
import { qrTerminal } from "../text/qr_code.ts";
import { escapeForTerminal } from "../text/terminal_text.ts";
import type { CommandLine } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { homedUrl, probeHomed } from "./homed_probe.ts";
import { EXIT_FAILED, EXIT_REFUSED, fail, print } from "./output.ts";
import { checkRights } from "./rights_check.ts";
import { UsageError } from "./usage_error.ts";

/** The exit code of a login stopped with Ctrl-C (128 + SIGINT, as shells report it). */
export const EXIT_INTERRUPTED = 130;

/** New QR codes after the first one expires, as the official client. */
const MAX_REFRESHES = 3;

/** How long the running homed gets to answer the re-check. */
const RECHECK_MS = 5_000;

/** Options of {@link runWeixinLogin}. */
export interface WeixinLoginRun {
  loaded: LoadedConfig;
  /** Progress and results (standard output). */
  out(text: string): void;
  /** The failure, one line (standard error). */
  err(text: string): void;
  /** Ctrl-C. */
  signal?: AbortSignal;
  /** Colours for the QR code (white on black), for a terminal. */
  colors?: boolean;
  clock?: Clock;
  /** For the running homed (its `/healthz` and the re-check). */
  fetcher?: typeof fetch;
  /** Shortest time between two status polls (default 1 s). */
  pollEveryMs?: number;
}

/**
 * Why `homed weixin login` cannot run on this config, naming the section and what to add; undefined when it can.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * weixinMissing(loaded); // "the config /etc/homed/homed.yaml has no weixin: section …" when WeChat is off
 * ```
 */
export function weixinMissing(loaded: LoadedConfig): string | undefined {
  if (loaded.config.weixin) return undefined;
  const where = loaded.location.path ? `the config ${loaded.location.path}` : "the embedded default config";
  return `${where} has no weixin: section, so WeChat is off: add the line \`weixin: {}\` to it (the defaults: ` +
    "base_url https://ilinkai.weixin.qq.com; the owner is set after the login), then run `homed weixin login` again";
}

/**
 * Runs the login to its end and says how it went; resolves to the exit code: 0 logged in (the token kept), 1 failed
 * (expired too often, the service refused, the network), {@link EXIT_INTERRUPTED} stopped, 2 no `weixin:` section.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * const code = await runWeixinLogin({ loaded, out: (text) => console.log(text), err: (text) => console.error(text) });
 * ```
 */
export async function runWeixinLogin(options: WeixinLoginRun): Promise<number> {
  const { loaded, out } = options;
  const missing = weixinMissing(loaded);
  const weixin = loaded.config.weixin;
  if (missing !== undefined || !weixin) {
    options.err(`weixin login: ${missing}`);
    return EXIT_REFUSED;
  }
  const dataDir = loaded.config.daemon.data_dir;
  const baseUrl = weixin.base_url.replace(/\/+$/, "");
  const earlier = await loadWeixinLogin(dataDir).catch(() => undefined);
  out(`Logging in to WeChat at ${baseUrl}.\n`);
  let credentials: WeixinCredentials;
  try {
    credentials = await weixinLogin({
      baseUrl,
      clock: options.clock ?? systemClock,
      onStep: (step) => out(stepText(step, options.colors ?? false)),
      localTokens: earlier ? [earlier.botToken] : [],
      maxRefreshes: MAX_REFRESHES,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.pollEveryMs === undefined ? {} : { pollEveryMs: options.pollEveryMs }),
    });
  } catch (error) {
    if (options.signal?.aborted) {
      options.err("weixin login: stopped; nothing was kept (the last login, if any, stays)");
      return EXIT_INTERRUPTED;
    }
    const why = error instanceof Deno.errors.NotCapable
      ? `homed may not reach that host (${(error as Error).message}): run it with the flags ` +
        "`homed flags --mode weixin` prints for a config whose weixin.base_url names it"
      : (error as Error).message;
    options.err(`weixin login: ${error instanceof WeixinLoginError ? why : `the login failed: ${why}`}`);
    return EXIT_FAILED;
  }
  await saveWeixinLogin(dataDir, credentials);
  out(`The bot token is kept in ${weixinDir(dataDir)}/account.json (only you can read it).\n`);
  out(ownerText(loaded, credentials));
  if (weixin.token !== "") {
    out(
      "Note: weixin.token is set in the config, and homed uses it before this login: remove it to use the new one.\n",
    );
  }
  out(await recheck(loaded, options.fetcher ?? fetch));
  return 0;
}

/** One step in plain words (the QR code drawn for a new code). */
function stepText(step: WeixinLoginStep, colors: boolean): string {
  switch (step.state) {
    case "qrcode": {
      const head = step.attempt === 1
        ? "Scan this QR code with WeChat on your phone and confirm there (the account that scans is the one the " +
          "butler talks with):"
        : `A new QR code (${step.attempt} of ${MAX_REFRESHES + 1}):`;
      if (step.content === "") return `${head}\n(the service gave no link to draw: run the login again)\n`;
      return `${head}\n\n${qrTerminal(step.content, { colors }).join("\n")}\n\n` +
        `Or open this link in WeChat: ${escapeForTerminal(step.content)}\n`;
    }
    case "wait":
      return "Waiting for the scan…\n";
    case "scanned":
      return "Scanned: confirm the login on the phone.\n";
    case "expired":
      return step.refreshes <= MAX_REFRESHES
        ? `The QR code expired without a scan (${step.refreshes} of ${MAX_REFRESHES} renewals).\n`
        : "The QR code expired again.\n";
    case "redirect":
      return `The service moved the login to ${escapeForTerminal(step.host)}.\n`;
    case "confirmed":
      return `Confirmed: logged in as the WeChat bot ${escapeForTerminal(step.botId || "(no id given)")}.\n`;
  }
}

/** Who scanned, and what to put in the config so that they are answered. */
function ownerText(loaded: LoadedConfig, credentials: WeixinCredentials): string {
  const owner = loaded.config.weixin?.owner ?? "";
  const user = escapeForTerminal(credentials.userId);
  if (user === "") return "The service did not say who scanned the code.\n";
  if (owner === credentials.userId) return `The person who scanned is ${user}, the owner (weixin.owner).\n`;
  if (loaded.config.weixin?.allow_users.includes(credentials.userId)) {
    return `The person who scanned is ${user}, a member the butler answers (weixin.allow_users or people:).\n`;
  }
  if (owner !== "") {
    return `The person who scanned is ${user}; weixin.owner is ${escapeForTerminal(owner)} (to answer both, add ` +
      "the other to weixin.allow_users or people:).\n";
  }
  const where = loaded.location.path ?? "the config";
  return `The person who scanned is ${user}. weixin.owner is empty, so nobody is answered on WeChat yet: to have ` +
    `the butler answer them as the owner, set in ${where}:\n\n  weixin:\n    owner: "${user}"\n\n` +
    "(or name them in people: with weixin: their id) and restart homed.\n";
}

/** Asks a running homed to pick up the new token now; says what happened (never fails the login). */
async function recheck(loaded: LoadedConfig, fetcher: typeof fetch): Promise<string> {
  const url = homedUrl(loaded);
  if (url === undefined || !(await probeHomed(url, fetcher)).homed) {
    return "homed is not running here: it uses the new token when it starts.\n";
  }
  const token = loaded.config.daemon.api_token;
  let status: number;
  try {
    // A JSON body: the API takes no other POST (its guard answers 415 to a bodiless one).
    const response = await fetcher(`${url}/api/weixin/recheck`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: "{}",
      signal: AbortSignal.timeout(RECHECK_MS),
    });
    await response.body?.cancel();
    status = response.status;
  } catch (error) {
    return `homed runs at ${url} but could not be asked to re-check (${(error as Error).message}): it picks up ` +
      "the token at its next re-check (within 10 minutes) or when restarted.\n";
  }
  if (status >= 200 && status < 300) return `The running homed (${url}) picks up the new token now.\n`;
  if (status === 404) {
    return `homed runs at ${url} without WeChat (it started before the weixin: section was added): restart it.\n`;
  }
  const hint = status === 401 || status === 403 ? ": is daemon.api_token the running homed's?" : "";
  return `homed runs at ${url} but refused the re-check (HTTP ${status}${hint}); it picks up the token at its ` +
    "next re-check (within 10 minutes) or when restarted.\n";
}

/**
 * `homed weixin login [--config FILE]`: the config, the rights of `--mode weixin`, then {@link runWeixinLogin} with
 * Ctrl-C (and SIGTERM) stopping it.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await weixinCli(parseCommandLine(["weixin", "login", "--config", "/etc/homed/homed.yaml"]));
 * ```
 */
export async function weixinCli(line: CommandLine): Promise<void> {
  if (line.action !== "login") {
    throw new UsageError(`homed weixin takes one action, login (got ${JSON.stringify(line.action || "none")})`);
  }
  const { loaded, denied } = await loadCommandConfig(line.options.config, line.layout);
  const missing = weixinMissing(loaded);
  if (missing !== undefined) fail(`weixin login: ${missing}`, EXIT_REFUSED);
  checkRights(loaded, "weixin", denied);
  const stopping = new AbortController();
  const stop = () => stopping.abort(new Error("stopped"));
  const signals = ["SIGINT", "SIGTERM"] as const;
  for (const signal of signals) Deno.addSignalListener(signal, stop);
  let code: number;
  try {
    code = await runWeixinLogin({
      loaded,
      out: print,
      err: (text) => console.error(`homed: ${text}`),
      signal: stopping.signal,
      colors: Deno.stdout.isTerminal(),
    });
  } finally {
    for (const signal of signals) Deno.removeSignalListener(signal, stop);
  }
  if (code !== 0) Deno.exit(code);
}
