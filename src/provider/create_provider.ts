/**
 * Picks the provider `llm.provider` (and each of `llm.fallbacks`' `provider`) names — the one place that does:
 * `openai` (chat completions over `fetch`) or `lua` (a LuaAdapter script).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { type LlmProviderConfig, llmProviders } from "../config/llm_providers.ts";
import type { Config } from "../config/schema.ts";
import { LuaError } from "../lua/lua_error.ts";
import { LuaProvider } from "./lua_provider.ts";
import { OpenAIProvider } from "./openai_provider.ts";
import type { Provider } from "./provider.ts";

/** What a provider needs besides the config. */
export interface ProviderContext {
  clock: Clock;
  random: () => number;
  logger: Logger;
  /** What to tell the user when no key is set (chat completions only). */
  missingKeyHint: string;
}

/**
 * The configured provider. An adapter that cannot be read or does not compile fails here, naming the file and line.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { loadConfig } from "../config/load.ts";
 * import { log } from "../log/logging.ts";
 *
 * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const provider = await createProvider(config, {
 *   clock: systemClock,
 *   random: Math.random,
 *   logger: log("llm"),
 *   missingKeyHint: "No LLM API key is set: set llm.api_key, then restart homed",
 * });
 * provider.model; // "deepseek-v4-flash" with the defaults
 * provider.close?.();
 * ```
 */
export function createProvider(config: Config, context: ProviderContext): Promise<Provider & { close?(): void }> {
  return createLlmProvider(llmProviders(config)[0]!, config.lua, context);
}

/**
 * One provider of the chain (`llmProviders`: the primary or a fallback). A fallback's empty key sends no
 * `Authorization` header (a local server); the primary's fails every call with `no_api_key` and the hint. An
 * adapter that cannot be read or does not compile fails here, naming its key, the file and the line.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { loadConfig } from "../config/load.ts";
 * import { llmProviders } from "../config/llm_providers.ts";
 * import { log } from "../log/logging.ts";
 *
 * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const [primary, ...fallbacks] = llmProviders(config);
 * const local = fallbacks[0] && await createLlmProvider(fallbacks[0], config.lua, {
 *   clock: systemClock,
 *   random: Math.random,
 *   logger: log("llm"),
 *   missingKeyHint: `No LLM API key is set for ${primary!.name}`,
 * });
 * local?.close?.();
 * ```
 */
export async function createLlmProvider(
  settings: LlmProviderConfig,
  lua: Config["lua"],
  context: ProviderContext,
): Promise<Provider & { close?(): void }> {
  const common = {
    model: settings.model,
    baseUrl: settings.base_url,
    apiKey: settings.api_key,
    temperature: settings.temperature,
    maxTokens: settings.max_tokens,
    timeoutMs: settings.timeout,
    maxRetries: settings.max_retries,
    clock: context.clock,
    random: context.random,
    logger: context.logger,
    keyName: `${settings.key}.api_key`,
  };
  if (settings.provider === "openai") {
    return new OpenAIProvider({
      ...common,
      thinking: settings.thinking,
      missingKeyHint: context.missingKeyHint,
      keyOptional: settings.role === "fallback",
    });
  }
  const key = `${settings.key}.adapter`;
  try {
    return await LuaProvider.open({
      ...common,
      adapter: settings.adapter,
      adapterKey: key,
      limits: { timeMs: lua.time_limit, memoryBytes: lua.memory_limit },
    });
  } catch (error) {
    if (error instanceof LuaError) {
      throw new Error(
        `${key}: ${settings.adapter} ${
          error.kind === "syntax" ? "does not compile" : "failed to load"
        }: ${error.message}`,
        { cause: error },
      );
    }
    throw error;
  }
}
