/**
 * The config's rules across keys, which one schema per key cannot say: a daemon listening beyond loopback needs an API
 * token (and an OneBot one when OneBot is on), a lua provider needs its adapter and a `builtin:` adapter must exist,
 * the LLM chain's rules (`llm.fallbacks`, `llm.budget`, `llm.prices`), the API tokens (no `owner` entry, no token
 * twice, exactly one owner), and `people:` (`people.ts`). Each broken rule is one line in the `key: got …; allowed: …`
 * form of the schema's.
 *
 * @module
 */

import { builtinAdapter } from "./builtin_adapters.ts";
import { isLoopback } from "./listen_addr.ts";
import { llmProviders } from "./llm_providers.ts";
import { peopleProblems } from "./people.ts";
import type { Config } from "./schema.ts";

/**
 * Every cross-field rule `config` breaks, one line each, in a fixed order (empty when it keeps them all).
 *
 * @example
 * ```ts
 * import { configSchema } from "./schema.ts";
 *
 * const config = configSchema.parse({ daemon: { listen_addr: "0.0.0.0:8080" } });
 * crossFieldProblems(config); // ["daemon.api_token: got nothing; allowed: a token of at least 16 characters, …"]
 * ```
 */
export function crossFieldProblems(config: Config): string[] {
  const problems: string[] = [];
  problems.push(...listenProblems(config));
  if (config.llm.adapter.startsWith("builtin:")) {
    try {
      builtinAdapter(config.llm.adapter);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (config.llm.provider === "lua" && config.llm.adapter === "") {
    problems.push(
      'llm.adapter: got nothing; allowed: the path of a Lua adapter script, required because llm.provider is "lua"',
    );
  }
  problems.push(...llmChainProblems(config));
  problems.push(...tokenProblems(config));
  problems.push(...peopleProblems(config));
  return problems;
}

/** Beyond loopback, the API and OneBot need their tokens. */
function listenProblems(config: Config): string[] {
  const problems: string[] = [];
  const host = config.daemon.listen_addr.host;
  if (!isLoopback(host)) {
    const where = `daemon.listen_addr ${JSON.stringify(`${host}:${config.daemon.listen_addr.port}`)}`;
    if (config.daemon.api_token === "" && Object.keys(config.daemon.api_tokens).length === 0) {
      problems.push(
        `daemon.api_token: got nothing; allowed: a token of at least 16 characters, required because ${where} is beyond loopback`,
      );
    }
    if (config.onebot.enabled && config.onebot.access_token === "") {
      problems.push(
        `onebot.access_token: got nothing; allowed: a token of at least 16 characters, required because ${where} is beyond loopback and onebot.enabled is true`,
      );
    }
  }
  return problems;
}

/**
 * The rules across `llm.fallbacks`, `llm.budget` and `llm.prices`: a lua fallback names its adapter, every provider
 * has a name of its own (status, the ledger and errors tell them apart by it), costs are added up in one currency,
 * and a money budget has prices to count in.
 */
function llmChainProblems(config: Config): string[] {
  const problems: string[] = [];
  const { llm } = config;
  llm.fallbacks.forEach((fallback, index) => {
    const key = `llm.fallbacks.${index}`;
    if (fallback.provider === "lua" && fallback.adapter === "") {
      problems.push(
        `${key}.adapter: got nothing; allowed: the path of a Lua adapter script or builtin:<name>, required because ${key}.provider is "lua"`,
      );
    }
    if (fallback.adapter.startsWith("builtin:")) {
      try {
        builtinAdapter(fallback.adapter);
      } catch (error) {
        problems.push((error as Error).message.replace(/^llm\.adapter:/, `${key}.adapter:`));
      }
    }
    if (fallback.prices) {
      const currency = llm.prices?.currency;
      if (currency === undefined || currency.toUpperCase() !== fallback.prices.currency.toUpperCase()) {
        problems.push(
          `${key}.prices: got prices in ${JSON.stringify(fallback.prices.currency)}; allowed: prices in llm.prices' ` +
            `currency (${currency === undefined ? "set llm.prices first" : JSON.stringify(currency)}), so costs add up`,
        );
      }
    }
  });
  const named = new Map<string, string>();
  for (const provider of llmProviders(config)) {
    const other = named.get(provider.name);
    if (other !== undefined) {
      problems.push(
        `${provider.key}.name: got ${JSON.stringify(provider.name)}, the name of ${other} too; allowed: a name of ` +
          "its own (set name: to tell them apart)",
      );
    }
    named.set(provider.name, provider.key);
  }
  for (const period of ["daily", "monthly"] as const) {
    const limit = llm.budget?.[period];
    if (limit !== undefined && !llm.prices) {
      problems.push(
        `llm.budget.${period}: got ${limit}; allowed: a limit in llm.prices' currency, which needs llm.prices — set ` +
          `llm.prices (input, input_cache_hit, output per million tokens, currency) or use llm.budget.${period}_tokens`,
      );
    }
  }
  return problems;
}

/** `daemon.api_tokens`: no `owner` entry, every token its own, exactly one owner among them and `daemon.api_token`. */
function tokenProblems(config: Config): string[] {
  const problems: string[] = [];
  const tokens = config.daemon.api_tokens;
  if ("owner" in tokens) {
    problems.push(
      'daemon.api_tokens.owner: got an entry; allowed: other names — "owner" is the holder of daemon.api_token',
    );
  }
  const seenTokens = new Map<string, string>();
  if (config.daemon.api_token !== "") seenTokens.set(config.daemon.api_token, "daemon.api_token");
  for (const [name, entry] of Object.entries(tokens)) {
    const other = seenTokens.get(entry.token);
    if (other) {
      problems.push(`daemon.api_tokens.${name}.token: got the same token as ${other}; allowed: a token of its own`);
    }
    seenTokens.set(entry.token, `daemon.api_tokens.${name}.token`);
  }
  const owners = Object.values(tokens).filter((entry) => entry.trust === "owner").length +
    (config.daemon.api_token === "" ? 0 : 1);
  if (Object.keys(tokens).length && owners === 0) {
    problems.push(
      "daemon.api_tokens: got no owner; allowed: tokens with exactly one owner — set daemon.api_token (the owner's) " +
        'or mark one person trust: "owner"',
    );
  }
  if (owners > 1) {
    problems.push(`daemon.api_tokens: got ${owners} owners; allowed: exactly one (daemon.api_token is the owner's)`);
  }
  return problems;
}
