/**
 * The daemon's provider step: the configured provider (or the one a test injects), and which one the memory
 * distiller may use.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import { createProvider } from "./create_provider.ts";
import type { Provider } from "./provider.ts";

/** Options of {@link setupProvider}. */
export interface ProviderSetupOptions {
  /** The whole config: the provider reads `llm.*` and, for an adapter, `lua.*`. */
  config: Config;
  clock: Clock;
  random: () => number;
  /** The `llm` logger, the provider's own. */
  logger: Logger;
  /** Where the missing-key warning goes (the daemon's logger). */
  notices: Logger;
  /** What to tell the user when no key is set. */
  missingKeyHint: string;
  /** Replaces the configured provider (benchmarks, agent tests); no warning then, and the distiller uses it. */
  provider?: Provider | undefined;
}

/** What {@link setupProvider} gives the daemon. */
export interface ProviderSetup {
  provider: Provider;
  /** The provider the distiller may call, or undefined for its rule-based fallback (no key). */
  distiller: Provider | undefined;
  /** Releases the provider (an adapter's VM); a no-op for one without `close`. */
  close(): void;
}

/**
 * Makes the provider; warns when chat completions have no key.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { loadConfig } from "../config/load.ts";
 * import { log } from "../log/logging.ts";
 *
 * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const llm = await setupProvider({
 *   config,
 *   clock: systemClock,
 *   random: Math.random,
 *   logger: log("llm"),
 *   notices: log(),
 *   missingKeyHint: "No LLM API key is set: set llm.api_key, then restart homed",
 * });
 * llm.distiller; // undefined while llm.api_key is empty
 * llm.close();
 * ```
 */
export async function setupProvider(options: ProviderSetupOptions): Promise<ProviderSetup> {
  const { config } = options;
  const provider: Provider & { close?(): void } = options.provider ?? await createProvider(config, {
    clock: options.clock,
    random: options.random,
    logger: options.logger,
    missingKeyHint: options.missingKeyHint,
  });
  const keyMissing = config.llm.provider === "openai" && config.llm.api_key === "";
  if (keyMissing && !options.provider) options.notices.warning("{hint}", { hint: options.missingKeyHint });
  return {
    provider,
    // The distiller uses the LLM only when one can answer; otherwise its rule-based fallback.
    distiller: options.provider ?? (keyMissing ? undefined : provider),
    close: () => provider.close?.(),
  };
}
