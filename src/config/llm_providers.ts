/**
 * The LLM providers a config names, in the order they are tried: the primary (`llm.*`), then each of
 * `llm.fallbacks`, with what a fallback leaves out taken from the primary and each one's name. Read by the config's
 * cross-field rules (names are unique), by `homed flags` (each one's host and adapter are rights) and by the provider
 * setup.
 *
 * @module
 */

import type { Config } from "./schema.ts";

/** One provider as configured, complete. */
export interface LlmProviderConfig {
  /** `name`, or `<model>@<host>`: how status, logs and errors name it. */
  name: string;
  role: "primary" | "fallback";
  /** Where it is configured: `llm` or `llm.fallbacks.<n>` (errors name its keys under it). */
  key: string;
  provider: "openai" | "lua";
  model: string;
  base_url: string;
  api_key: string;
  adapter: string;
  temperature: number;
  max_tokens: number;
  thinking: boolean | "omit";
  /** Idle timeout in ms. */
  timeout: number;
  max_retries: number;
  prices: Config["llm"]["prices"];
}

/**
 * The default name of a provider: `<model>@<host[:port]>`.
 *
 * @example
 * ```ts
 * providerName("llama3", "http://127.0.0.1:11434/v1"); // "llama3@127.0.0.1:11434"
 * providerName("deepseek-v4-flash", "https://api.deepseek.com/v1"); // "deepseek-v4-flash@api.deepseek.com"
 * ```
 */
export function providerName(model: string, baseUrl: string): string {
  let host = baseUrl;
  try {
    host = new URL(baseUrl).host;
  } catch { /* the schema checked it; the text as is */ }
  return `${model}@${host}`;
}

/**
 * The primary and the fallbacks, in order.
 *
 * @example
 * ```ts
 * import { parseConfig } from "./load.ts";
 *
 * const { config } = parseConfig({
 *   text: "llm:\n  fallbacks:\n    - { model: llama3, base_url: 'http://127.0.0.1:11434/v1' }\n",
 *   location: { path: undefined, origin: "embedded defaults" },
 *   readEnv: () => undefined,
 *   cwd: "/",
 * });
 * llmProviders(config).map((provider) => provider.name);
 * // ["deepseek-v4-flash@api.deepseek.com", "llama3@127.0.0.1:11434"]
 * ```
 */
export function llmProviders(config: Pick<Config, "llm">): LlmProviderConfig[] {
  const { llm } = config;
  const primary: LlmProviderConfig = {
    name: providerName(llm.model, llm.base_url),
    role: "primary",
    key: "llm",
    provider: llm.provider,
    model: llm.model,
    base_url: llm.base_url,
    api_key: llm.api_key,
    adapter: llm.adapter,
    temperature: llm.temperature,
    max_tokens: llm.max_tokens,
    thinking: llm.thinking,
    timeout: llm.timeout,
    max_retries: llm.max_retries,
    prices: llm.prices,
  };
  return [
    primary,
    ...llm.fallbacks.map((fallback, index): LlmProviderConfig => ({
      name: fallback.name ?? providerName(fallback.model, fallback.base_url),
      role: "fallback",
      key: `llm.fallbacks.${index}`,
      provider: fallback.provider,
      model: fallback.model,
      base_url: fallback.base_url,
      api_key: fallback.api_key,
      adapter: fallback.adapter,
      temperature: fallback.temperature ?? llm.temperature,
      max_tokens: fallback.max_tokens ?? llm.max_tokens,
      thinking: fallback.thinking ?? llm.thinking,
      timeout: fallback.timeout ?? llm.timeout,
      max_retries: fallback.max_retries ?? llm.max_retries,
      prices: fallback.prices,
    })),
  ];
}
