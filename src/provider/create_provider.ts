/**
 * Picks the provider `llm.provider` names — the one place that does: `openai` (chat completions over `fetch`) or
 * `lua` (a LuaAdapter script).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
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
export async function createProvider(config: Config, context: ProviderContext): Promise<Provider & { close?(): void }> {
  const { llm, lua } = config;
  const common = {
    model: llm.model,
    baseUrl: llm.base_url,
    apiKey: llm.api_key,
    temperature: llm.temperature,
    maxTokens: llm.max_tokens,
    timeoutMs: llm.timeout,
    maxRetries: llm.max_retries,
    clock: context.clock,
    random: context.random,
    logger: context.logger,
  };
  if (llm.provider === "openai") {
    return new OpenAIProvider({ ...common, thinking: llm.thinking, missingKeyHint: context.missingKeyHint });
  }
  try {
    return await LuaProvider.open({
      ...common,
      adapter: llm.adapter,
      limits: { timeMs: lua.time_limit, memoryBytes: lua.memory_limit },
    });
  } catch (error) {
    if (error instanceof LuaError) {
      throw new Error(
        `llm.adapter: ${llm.adapter} ${
          error.kind === "syntax" ? "does not compile" : "failed to load"
        }: ${error.message}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}
