/**
 * The questions `homed init` asks — the LLM (DeepSeek, a local Ollama, or any OpenAI-compatible URL), its model and
 * key, and whether to listen on the LAN — answered by flags, at a terminal (the key typed unseen), or by lines piped
 * on standard input (scripted set-up); and what the answers change in the starter config and `homed.env`.
 *
 * @module
 */

import { parseDocument } from "yaml";
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
}

/** Answers given as flags; the rest are asked. */
export interface InitFlags {
  provider?: string | undefined;
  model?: string | undefined;
  lan?: boolean | undefined;
  port?: string | undefined;
}

/** Asks one question; resolves to the answer, or `undefined` when there is no more input. */
export type Ask = (question: string, options: { secret?: boolean }) => Promise<string | undefined>;

export const DEEPSEEK = { baseUrl: "https://api.deepseek.com/v1", model: "deepseek-v4-flash" } as const;
export const OLLAMA = { baseUrl: "http://127.0.0.1:11434/v1", model: "qwen3:8b" } as const;

/** The environment variable that holds the key of `provider`. */
export function keyVariable(provider: ProviderChoice): string {
  return provider === "deepseek" ? "DEEPSEEK_API_KEY" : "LLM_API_KEY";
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
  return { provider, baseUrl, model, key, lan, port };
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
 * };
 * applyAnswers("llm:\n  model: deepseek-v4-flash # kept\n", answers);
 * // "llm:\n  model: qwen3:8b # kept\n  base_url: http://127.0.0.1:11434/v1\n  api_key: ollama\n  thinking: omit\n"
 * ```
 */
export function applyAnswers(text: string, answers: InitAnswers): string {
  const doc = parseDocument(text);
  doc.setIn(["llm", "base_url"], answers.baseUrl);
  doc.setIn(["llm", "model"], answers.model);
  // Ollama takes any non-empty key; the others read theirs from homed.env.
  doc.setIn(["llm", "api_key"], answers.provider === "ollama" ? "ollama" : `\${${keyVariable(answers.provider)}}`);
  // Only DeepSeek knows the "thinking" field; other servers may refuse unknown ones.
  if (answers.provider !== "deepseek") doc.setIn(["llm", "thinking"], "omit");
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
 * const answers: InitAnswers = { ...DEEPSEEK, provider: "deepseek", key: "sk-abc", lan: true, port: 8080 };
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
