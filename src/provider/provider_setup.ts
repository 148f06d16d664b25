/**
 * The daemon's provider step: the configured providers — the primary and `llm.fallbacks` — each counted in the usage
 * ledger under its name, behind one {@link ProviderChain} with their breakers and the primary's budget (or the one
 * provider a test injects, in the primary's place), and which provider the memory distiller may use.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { llmProviders } from "../config/llm_providers.ts";
import type { Config } from "../config/schema.ts";
import { Budget, hasLimits } from "./budget.ts";
import { createLlmProvider } from "./create_provider.ts";
import { metered } from "./metered_provider.ts";
import type { Provider } from "./provider.ts";
import { type ChainMember, ProviderChain } from "./provider_chain.ts";
import type { UsageLedger } from "./usage_ledger.ts";

/** Options of {@link setupProvider}. */
export interface ProviderSetupOptions {
  /** The whole config: the providers read `llm.*` and, for an adapter, `lua.*`. */
  config: Config;
  clock: Clock;
  random: () => number;
  /** The `llm` logger, the providers' own. */
  logger: Logger;
  /** Where the missing-key warning goes (the daemon's logger). */
  notices: Logger;
  /** What to tell the user when no key is set. */
  missingKeyHint: string;
  /** Replaces the configured primary (benchmarks, agent tests); no warning then, and the distiller uses the chain. */
  provider?: Provider | undefined;
  /**
   * Where every request is counted, per provider (`usage.db`; its `provider` is the primary's name); the budget reads
   * the primary's spend from it. Without it nothing is counted and `llm.budget` is not applied.
   */
  ledger?: UsageLedger | undefined;
  /** Hears of a count the ledger could not write (the request itself never fails for it). */
  onLedgerError?: (error: unknown) => void;
}

/** What {@link setupProvider} gives the daemon. */
export interface ProviderSetup {
  /** The chain: every LLM call goes through it. */
  provider: ProviderChain;
  /** The provider the distiller may call, or undefined for its rule-based fallback (no key and no fallback). */
  distiller: Provider | undefined;
  /** Stops the probes and releases the providers (an adapter's VM). */
  close(): void;
}

/**
 * Makes the providers and their chain; warns when the primary speaks chat completions and has no key.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { loadConfig } from "../config/load.ts";
 * import { llmProviders } from "../config/llm_providers.ts";
 * import { log } from "../log/logging.ts";
 * import { UsageLedger } from "./usage_ledger.ts";
 *
 * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const ledger = UsageLedger.open({
 *   path: "data/usage.db",
 *   clock: systemClock,
 *   timezone: config.daemon.timezone,
 *   prices: config.llm.prices,
 *   provider: llmProviders(config)[0]!.name,
 * });
 * const llm = await setupProvider({
 *   config,
 *   clock: systemClock,
 *   random: Math.random,
 *   logger: log("llm"),
 *   notices: log(),
 *   missingKeyHint: "No LLM API key is set: set llm.api_key, then restart homed",
 *   ledger,
 * });
 * llm.distiller; // undefined while llm.api_key is empty and no fallback is configured
 * llm.provider.status().providers.map((provider) => provider.state); // ["up"]
 * llm.close();
 * ledger.close();
 * ```
 */
export async function setupProvider(options: ProviderSetupOptions): Promise<ProviderSetup> {
  const { config, ledger } = options;
  const settings = llmProviders(config);
  const made: Array<Provider & { close?(): void }> = [];
  const members: ChainMember[] = [];
  try {
    for (const setting of settings) {
      const injected = setting.role === "primary" ? options.provider : undefined;
      const provider = injected ?? await createLlmProvider(setting, config.lua, {
        clock: options.clock,
        random: options.random,
        logger: options.logger,
        missingKeyHint: options.missingKeyHint,
      });
      made.push(provider);
      members.push({
        name: setting.name,
        role: setting.role,
        provider: ledger ? metered(provider, ledger, options.onLedgerError ?? (() => {}), setting.name) : provider,
        timeoutMs: setting.timeout,
      });
    }
  } catch (error) {
    for (const provider of made) provider.close?.();
    throw error;
  }
  const primary = settings[0]!;
  const limits = config.llm.budget;
  const chain = new ProviderChain({
    members,
    clock: options.clock,
    logger: options.logger,
    probeIntervalMs: config.llm.probe_interval,
    budget: ledger && hasLimits(limits)
      ? new Budget({ limits, ledger, provider: primary.name, prices: config.llm.prices })
      : undefined,
  });
  const keyMissing = primary.provider === "openai" && primary.api_key === "";
  if (keyMissing && !options.provider) options.notices.warning("{hint}", { hint: options.missingKeyHint });
  return {
    provider: chain,
    // The distiller uses the LLM only when one can answer; otherwise its rule-based fallback.
    distiller: options.provider || !keyMissing || settings.length > 1 ? chain : undefined,
    close: () => chain.close(),
  };
}
