/**
 * The questions `homed init` asks — the LLM (DeepSeek, a local Ollama, or any OpenAI-compatible URL), its model and
 * key, whether to listen on the LAN, and the household's time zone — answered by flags, at a terminal (the key typed
 * unseen), or by lines piped on standard input (scripted set-up); and what the answers change in the starter config
 * and `homed.env`.
 *
 * @module
 */

import { parseDocument } from "yaml";
import { validTimeZone } from "../config/schema.ts";
import { UsageError } from "./usage_error.ts";

/** The providers init knows by name; anything else is an OpenAI-compatible URL. */
export type ProviderChoice = "deepseek" | "ollama" | "openai";

/** What init learned. */
export interface InitAnswers {
  provider: ProviderChoice;
  baseUrl: string;
  model: string;
  /** The LLM key; empty when there is none (Ollama) or it is to be set later. */
  key: string;
  /** Listen on every interface (then the API and OneBot need tokens). */
  lan: boolean;
  /** The port to listen on (8080 unless `--port` says). */
  port: number;
  /** The household's IANA time zone (`daemon.timezone`): reminders, "today", the usage budget's days. */
  timezone: string;
}

/** Answers given as flags; the rest are asked. */
export interface InitFlags {
  provider?: string | undefined;
  model?: string | undefined;
  lan?: boolean | undefined;
  port?: string | undefined;
  timezone?: string | undefined;
}

/** Asks one question; resolves to the answer, or `undefined` when there is no more input. */
export type Ask = (question: string, options: { secret?: boolean }) => Promise<string | undefined>;

export const DEEPSEEK = { baseUrl: "https://api.deepseek.com/v1", model: "deepseek-v4-flash" } as const;
export const OLLAMA = { baseUrl: "http://127.0.0.1:11434/v1", model: "qwen3:8b" } as const;

/** The environment variable that holds the key of `provider`. */
export function keyVariable(provider: ProviderChoice): string {
  return provider === "deepseek" ? "DEEPSEEK_API_KEY" : "LLM_API_KEY";
}

/**
 * This machine's time zone as the runtime knows it (`TZ`, else `/etc/localtime`), the answer's default.
 *
 * @example
 * ```ts
 * systemTimeZone(); // "Asia/Shanghai" on a machine set to China's time
 * ```
 */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/**
 * Reads a time zone answer: an IANA name (`Asia/Shanghai`, `Europe/Berlin`, `UTC`), spelled as the time zone database
 * does; empty is `fallback`. A `UsageError` names a zone that is not one — an offset such as `+08:00` included, since
 * it knows no summer time.
 *
 * @example
 * ```ts
 * timeZoneOf("asia/shanghai", "UTC"); // "Asia/Shanghai"
 * timeZoneOf("", "Europe/Berlin"); // "Europe/Berlin"
 * // timeZoneOf("Mars/Olympus", "UTC") → UsageError 'timezone: "Mars/Olympus" is not an IANA time zone …'
 * ```
 */
export function timeZoneOf(answer: string, fallback: string): string {
  const zone = answer.trim() || fallback;
  if (!/^[A-Za-z]/.test(zone) || !validTimeZone(zone)) {
    throw new UsageError(
      `timezone: ${JSON.stringify(answer.trim())} is not an IANA time zone such as Asia/Shanghai, Europe/Berlin or UTC`,
    );
  }
  return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
}

/** Reads the provider answer: a name or a URL; a `UsageError` names a bad one. */
function providerOf(answer: string): { provider: ProviderChoice; baseUrl: string } {
  const word = answer.trim().toLowerCase();
  if (word === "" || word === "deepseek") return { provider: "deepseek", baseUrl: DEEPSEEK.baseUrl };
  if (word === "ollama") return { provider: "ollama", baseUrl: OLLAMA.baseUrl };
  let url: URL;
  try {
    url = new URL(answer.trim());
  } catch {
    throw new UsageError(`provider: ${JSON.stringify(answer)} is not deepseek, ollama or an http(s) URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`provider: ${JSON.stringify(answer)} is not deepseek, ollama or an http(s) URL`);
  }
  return { provider: "openai", baseUrl: url.href.replace(/\/+$/, "") };
}

/**
 * Asks what the flags did not say. At a terminal a bad answer is asked again; from a script it stops init with the
 * reason (a `UsageError` naming the question and the answer).
 *
 * @example
 * ```ts
 * import { terminalAsk } from "./terminal_ask.ts";
 *
 * const { ask, interactive } = terminalAsk();
 * const answers = await gatherAnswers({ provider: "ollama" }, ask, { interactive }); // asks for the rest
 * ```
 */
export async function gatherAnswers(
  flags: InitFlags,
  ask: Ask,
  options: { interactive: boolean },
): Promise<InitAnswers> {
  const retrying = async <T>(question: string, read: (answer: string) => T, secret = false): Promise<T> => {
    for (;;) {
      const answer = (await ask(question, { secret })) ?? "";
      try {
        return read(answer);
      } catch (error) {
        // Only a bad answer is asked again; anything else is a bug to report, not the person's to retry.
        if (!options.interactive || !(error instanceof UsageError)) throw error;
        console.error(`  ${(error as Error).message}; try again.`);
      }
    }
  };
  const { provider, baseUrl } = flags.provider !== undefined
    ? providerOf(flags.provider)
    : await retrying("LLM: deepseek, ollama, or an OpenAI-compatible URL [deepseek]: ", providerOf);
  const defaultModel = provider === "deepseek" ? DEEPSEEK.model : provider === "ollama" ? OLLAMA.model : "";
  const model = flags.model ?? await retrying(
    defaultModel ? `Model [${defaultModel}]: ` : "Model name (as the server lists it): ",
    (answer) => {
      const value = answer.trim() || defaultModel;
      if (!value) throw new UsageError("model: an OpenAI-compatible server needs a model name; none was given");
      return value;
    },
  );
  const key = provider === "ollama" ? "" : await retrying(
    provider === "deepseek"
      ? "DeepSeek API key (typing is hidden; Enter to set it later): "
      : "API key (typing is hidden; Enter if the server needs none): ",
    (answer) => {
      const value = answer.trim();
      if (/[\s'"]/.test(value)) throw new UsageError("key: an API key has no spaces or quotes; check what was pasted");
      return value;
    },
    true,
  );
  const lan = flags.lan ?? await retrying(
    "Listen on the LAN (phones, NapCat on another machine)? API and OneBot tokens are made for you [y/N]: ",
    (answer) => {
      const word = answer.trim().toLowerCase();
      if (["", "n", "no"].includes(word)) return false;
      if (["y", "yes"].includes(word)) return true;
      throw new UsageError(`lan: ${JSON.stringify(answer)} is not yes or no`);
    },
  );
  const port = flags.port === undefined ? 8080 : Number(flags.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new UsageError(`port: ${JSON.stringify(flags.port)} is not a port number (1 to 65535)`);
  }
  const system = systemTimeZone();
  const timezone = flags.timezone !== undefined
    ? timeZoneOf(flags.timezone, system)
    : await retrying(`Time zone of the household [${system}]: `, (answer) => timeZoneOf(answer, system));
  return { provider, baseUrl, model, key, lan, port, timezone };
}

/**
 * Hosted APIs that refuse a request field they do not know (OpenAI: "Unrecognized request argument supplied"; Google's
 * and Groq's OpenAI-compatible APIs, Mistral, Azure OpenAI): `llm.thinking: omit` for them.
 */
const STRICT_HOSTS =
  /(?:^|\.)(?:api\.openai\.com|generativelanguage\.googleapis\.com|api\.groq\.com|api\.mistral\.ai|openai\.azure\.com)$/;

/**
 * What `llm.thinking` init writes for an OpenAI-compatible URL, or `undefined` to keep the starter's `false` (sent as
 * `"thinking": {"type": "disabled"}`). DeepSeek and DeepSeek-compatible servers think by default when the field is
 * left out, and then want their reasoning back in every later request of a tool-call exchange, which homed sends only
 * with `thinking: true` — so leaving it out (`omit`) makes them refuse requests; `false` is what works there, and the
 * local servers (vLLM, llama.cpp, LocalAI, LM Studio, Ollama's `/v1`) ignore a field they do not know. Only the hosted
 * APIs that refuse unknown fields get `omit`; Ollama (`provider: ollama`) too, as before.
 *
 * @example
 * ```ts
 * thinkingFor("https://api.openai.com/v1"); // "omit"
 * thinkingFor("https://api.deepseek.com/v1"); // undefined (false)
 * thinkingFor("http://127.0.0.1:8000/v1"); // undefined (false)
 * ```
 */
export function thinkingFor(baseUrl: string): "omit" | undefined {
  return STRICT_HOSTS.test(new URL(baseUrl).hostname) ? "omit" : undefined;
}

/**
 * The starter config with the answers in it (comments kept).
 *
 * @example
 * ```ts
 * const answers: InitAnswers = {
 *   provider: "ollama",
 *   baseUrl: OLLAMA.baseUrl,
 *   model: OLLAMA.model,
 *   key: "",
 *   lan: false,
 *   port: 8080,
 *   timezone: "Asia/Shanghai",
 * };
 * applyAnswers("llm:\n  model: deepseek-v4-flash # kept\n", answers);
 * // "llm:\n  model: qwen3:8b # kept\n  base_url: http://127.0.0.1:11434/v1\n  api_key: ollama\n  thinking: omit\n
 * //  daemon:\n  timezone: Asia/Shanghai\n"
 * ```
 */
export function applyAnswers(text: string, answers: InitAnswers): string {
  const doc = parseDocument(text);
  doc.setIn(["llm", "base_url"], answers.baseUrl);
  doc.setIn(["llm", "model"], answers.model);
  // Ollama takes any non-empty key; the others read theirs from homed.env.
  doc.setIn(["llm", "api_key"], answers.provider === "ollama" ? "ollama" : `\${${keyVariable(answers.provider)}}`);
  // DeepSeek and servers like it need `false` (the starter's); Ollama and hosted APIs that refuse unknown fields omit it.
  const thinking = answers.provider === "ollama"
    ? "omit"
    : answers.provider === "openai"
    ? thinkingFor(answers.baseUrl)
    : undefined;
  if (thinking !== undefined) doc.setIn(["llm", "thinking"], thinking);
  doc.setIn(["daemon", "timezone"], answers.timezone);
  if (answers.lan || answers.port !== 8080) {
    doc.setIn(["daemon", "listen_addr"], `${answers.lan ? "" : "127.0.0.1"}:${answers.port}`);
  }
  return doc.toString({ lineWidth: 0 });
}

/**
 * The variables init puts in `homed.env`: the key, and for the LAN fresh API and OneBot tokens.
 *
 * @example
 * ```ts
 * const answers: InitAnswers = {
 *   ...DEEPSEEK,
 *   provider: "deepseek",
 *   key: "sk-abc",
 *   lan: true,
 *   port: 8080,
 *   timezone: "Asia/Shanghai",
 * };
 * envEntries(answers, () => "t0k3n");
 * // { DEEPSEEK_API_KEY: "sk-abc", HOMED_API_TOKEN: "t0k3n", ONEBOT_ACCESS_TOKEN: "t0k3n" }
 * ```
 */
export function envEntries(answers: InitAnswers, token: () => string): Record<string, string> {
  return {
    ...(answers.key ? { [keyVariable(answers.provider)]: answers.key } : {}),
    ...(answers.lan ? { HOMED_API_TOKEN: token(), ONEBOT_ACCESS_TOKEN: token() } : {}),
  };
}

/**
 * A random token: 32 bytes, base64url (43 characters).
 *
 * @example
 * ```ts
 * randomToken(); // "q3Jf…"
 * ```
 */
export function randomToken(random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  const bytes = random(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
