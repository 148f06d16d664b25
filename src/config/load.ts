/**
 * Finds, reads, expands and validates the config.
 *
 * Lookup order: `--config`, `$HOMED_CONFIG`, `config/homed.yaml`, embedded defaults. Relative paths inside a
 * config file are resolved against the file's folder, so a config in `/etc/homed` is self-contained; with the
 * embedded defaults they are resolved against the working directory.
 *
 * @module
 */

import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse as parseYaml, YAMLParseError } from "yaml";
import type { z } from "zod";
import { ConfigError } from "./config_error.ts";
import { type EnvReader, expandTree } from "./expand.ts";
import { isLoopback } from "./listen_addr.ts";
import { type Config, configSchema } from "./schema.ts";
import { builtinAdapter } from "./builtin_adapters.ts";
import { llmProviders } from "./llm_providers.ts";

/** Where the config came from. */
export type ConfigOrigin = "--config" | "$HOMED_CONFIG" | "default file" | "embedded defaults";

/** The outcome of the lookup order. */
export interface ConfigLocation {
  /** Absolute path of the file, or `undefined` for the embedded defaults. */
  path: string | undefined;
  origin: ConfigOrigin;
}

/** A config ready to use. */
export interface LoadedConfig {
  config: Config;
  location: ConfigLocation;
  /** The folder relative paths were resolved against. */
  baseDir: string;
  /** Keys the file set explicitly, dotted (`paths.personal`); defaults are not in it. */
  explicitKeys: ReadonlySet<string>;
  /** Every environment variable the file refers to, in order of first use. */
  envNames: readonly string[];
  /** The raw (unexpanded) value of `llm.api_key`, used to tell the user which variable to set. */
  apiKeySource: string;
}

/** Environment variables the embedded defaults refer to. */
export const DEFAULT_ENV_NAMES = ["HOMED_API_TOKEN", "DEEPSEEK_API_KEY", "ONEBOT_ACCESS_TOKEN"] as const;
const DEFAULT_SECRETS: Record<string, string> = {
  "daemon.api_token": "${HOMED_API_TOKEN}",
  "llm.api_key": "${DEEPSEEK_API_KEY}",
  "onebot.access_token": "${ONEBOT_ACCESS_TOKEN}",
};

/**
 * Where homed looks when no config is named. `repo`: `config/homed.yaml` under the working directory (deno task).
 * `standard`: `/etc/homed/homed.yaml`, with data in `/var/lib/homed` (the compiled binary, systemd).
 */
export type Layout = "repo" | "standard";

/** The standard layout's places. */
export const STANDARD_LAYOUT = { configFile: "/etc/homed/homed.yaml", dataDir: "/var/lib/homed" } as const;

/** Options of {@link locateConfig}. */
export interface LocateOptions {
  /** The `--config` argument. */
  flag?: string | undefined;
  readEnv: EnvReader;
  cwd: string;
  exists: (path: string) => boolean;
  layout?: Layout;
}

/**
 * Applies the lookup order.
 *
 * @example
 * ```ts
 * locateConfig({ cwd: "/srv", readEnv: () => undefined, exists: () => false });
 * // { path: undefined, origin: "embedded defaults" }
 * ```
 */
export function locateConfig(options: LocateOptions): ConfigLocation {
  if (options.flag) return { path: resolve(options.cwd, options.flag), origin: "--config" };
  const fromEnv = options.readEnv("HOMED_CONFIG");
  if (fromEnv) return { path: resolve(options.cwd, fromEnv), origin: "$HOMED_CONFIG" };
  const local = options.layout === "standard" ? STANDARD_LAYOUT.configFile : resolve(options.cwd, "config/homed.yaml");
  if (options.exists(local)) return { path: local, origin: "default file" };
  return { path: undefined, origin: "embedded defaults" };
}

/** Options of {@link parseConfig}. */
export interface ParseOptions {
  /** The YAML text; empty for the embedded defaults. */
  text: string;
  location: ConfigLocation;
  readEnv: EnvReader;
  cwd: string;
  layout?: Layout;
}

const SECRET_KEY = /token|key|secret|password/i;

function describe(value: unknown, key: string): string {
  if (typeof value === "string" && value !== "" && SECRET_KEY.test(key)) {
    return `a secret of ${value.length} characters`;
  }
  if (value === undefined) return "nothing";
  const json = JSON.stringify(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

function problemOf(issue: z.core.$ZodIssue): string {
  const key = issue.path.map(String).join(".") || "(top level)";
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((name) => {
      const full = issue.path.length ? `${key}.${name}` : name;
      return `${full}: unknown key; allowed keys here: ${allowedKeys(issue.path).join(", ")}`;
    }).join("\n  - ");
  }
  // A bad key of a mapping (a device's name): zod nests the key's own issue, which says what is allowed.
  const allowed = issue.code === "invalid_key"
    ? issue.issues[0]?.message ?? issue.message
    : issue.code === "invalid_type" && issue.expected === "object"
    ? "a mapping of keys"
    : issue.message;
  return `${key}: got ${describe(issue.input, key)}; allowed: ${allowed}`;
}

function allowedKeys(path: readonly PropertyKey[]): string[] {
  let shape: unknown = configSchema;
  for (const part of path) {
    const inner = unwrap(shape) as { shape?: Record<string, unknown>; def?: { element?: unknown } };
    // An entry of a list (llm.fallbacks.0): the list's element.
    shape = typeof part === "number" ? inner.def?.element : inner.shape?.[String(part)];
  }
  const inner = unwrap(shape) as { shape?: Record<string, unknown> };
  return Object.keys(inner.shape ?? {});
}

function unwrap(schema: unknown): unknown {
  let current = schema as { def?: { innerType?: unknown; in?: unknown } } | undefined;
  while (current?.def?.innerType ?? current?.def?.in) {
    current = (current.def.innerType ?? current.def.in) as typeof current;
  }
  return current;
}

function collectKeys(value: unknown, prefix: string, into: Set<string>): void {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  for (const [key, item] of Object.entries(value)) {
    const dotted = prefix ? `${prefix}.${key}` : key;
    into.add(dotted);
    if (dotted !== "io.routes" && dotted !== "plugins.entries") collectKeys(item, dotted, into);
  }
}

function readSecretSource(raw: unknown, dotted: string): string | undefined {
  let node: unknown = raw;
  for (const part of dotted.split(".")) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === "string" ? node : undefined;
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

/**
 * Parses and validates config text. Throws {@link ConfigError} naming every bad key, its value and what is allowed.
 *
 * @example
 * ```ts
 * const loaded = parseConfig({
 *   text: "llm:\n  temperature: 0.2\n",
 *   location: { path: "/etc/homed/homed.yaml", origin: "--config" },
 *   readEnv: () => undefined,
 *   cwd: "/",
 * });
 * loaded.config.daemon.data_dir; // "/etc/homed/data"
 * ```
 */
export function parseConfig(options: ParseOptions): LoadedConfig {
  const source = options.location.path ?? "embedded defaults";
  let raw: unknown;
  try {
    raw = options.text.trim() === "" ? {} : parseYaml(options.text, { prettyErrors: true });
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw error;
    throw new ConfigError(source, [`the file is not valid YAML: ${error.message.split("\n")[0]}`]);
  }
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(source, [`(top level): got ${describe(raw, "")}; allowed: a mapping of keys`]);
  }

  const explicitKeys = new Set<string>();
  collectKeys(raw, "", explicitKeys);
  // The embedded defaults read their secrets from the environment; a file that omits a secret gets the same.
  const withSecrets = structuredClone(raw) as Record<string, Record<string, unknown>>;
  for (const [dotted, reference] of Object.entries(DEFAULT_SECRETS)) {
    if (explicitKeys.has(dotted)) continue;
    const [section, key] = dotted.split(".") as [string, string];
    const node = withSecrets[section];
    if (node !== undefined && (node === null || typeof node !== "object")) continue;
    withSecrets[section] = { ...(node ?? {}), [key]: reference };
  }

  const seen = new Set<string>();
  const expanded = expandTree(withSecrets, options.readEnv, seen);
  const result = configSchema.safeParse(expanded, { reportInput: true });
  if (!result.success) throw new ConfigError(source, result.error.issues.map(problemOf));
  const config = result.data;

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
  if (problems.length) throw new ConfigError(source, problems);

  const standard = options.layout === "standard";
  const baseDir = options.location.path
    ? dirname(options.location.path)
    : standard
    ? dirname(STANDARD_LAYOUT.configFile)
    : options.cwd;
  if (standard) {
    // State and what the butler learns or is given live in /var/lib/homed; /etc/homed holds only what people edit.
    if (!explicitKeys.has("daemon.data_dir")) config.daemon.data_dir = STANDARD_LAYOUT.dataDir;
    if (!explicitKeys.has("paths.knowledge")) config.paths.knowledge = join(STANDARD_LAYOUT.dataDir, "knowledge");
    if (!explicitKeys.has("paths.plugins")) config.paths.plugins = join(STANDARD_LAYOUT.dataDir, "plugins");
  }
  const absolute = (path: string) => isAbsolute(path) ? path : resolve(baseDir, path);
  config.daemon.data_dir = absolute(config.daemon.data_dir);
  config.paths.personal = absolute(config.paths.personal);
  config.paths.knowledge = absolute(config.paths.knowledge);
  config.paths.plugins = absolute(config.paths.plugins);
  config.paths.intents = absolute(config.paths.intents);
  // `builtin:<name>` is an embedded adapter, not a path.
  if (config.llm.adapter !== "" && !config.llm.adapter.startsWith("builtin:")) {
    config.llm.adapter = absolute(config.llm.adapter);
  }
  for (const fallback of config.llm.fallbacks) {
    if (fallback.adapter !== "" && !fallback.adapter.startsWith("builtin:")) {
      fallback.adapter = absolute(fallback.adapter);
    }
  }
  config.plugins.extra_dirs = config.plugins.extra_dirs.map(absolute);
  const overlay = config.tracker.overlay;
  if (overlay) {
    config.tracker.overlay = {
      mount: absolute(overlay.mount),
      upper: absolute(overlay.upper),
      lower: overlay.lower.map(absolute),
    };
  }

  return {
    config,
    location: options.location,
    baseDir,
    explicitKeys,
    envNames: [...seen],
    apiKeySource: readSecretSource(withSecrets, "llm.api_key") ?? "",
  };
}

/** Options of {@link loadConfig}. */
export interface LoadOptions {
  flag?: string | undefined;
  readEnv: EnvReader;
  cwd: string;
  layout?: Layout;
}

/**
 * Locates, reads and parses the config from disk.
 *
 * @example
 * ```ts
 * const loaded = await loadConfig({ readEnv: (n) => Deno.env.get(n), cwd: Deno.cwd() });
 * ```
 */
export async function loadConfig(options: LoadOptions): Promise<LoadedConfig> {
  const location = locateConfig({
    flag: options.flag,
    readEnv: options.readEnv,
    cwd: options.cwd,
    layout: options.layout ?? "repo",
    exists: (path) => {
      try {
        return Deno.statSync(path).isFile;
      } catch {
        return false;
      }
    },
  });
  let text = "";
  if (location.path) {
    try {
      text = await Deno.readTextFile(location.path);
    } catch (error) {
      const why = error instanceof Deno.errors.NotFound
        ? "the file does not exist"
        : error instanceof Deno.errors.NotCapable
        ? "homed may not read it (run with the flags `homed flags` prints)"
        : String(error);
      throw new ConfigError(location.path, [`cannot read the config named by ${location.origin}: ${why}`]);
    }
  }
  return parseConfig({ text, location, readEnv: options.readEnv, cwd: options.cwd, layout: options.layout ?? "repo" });
}

/**
 * An environment reader that never throws: a variable homed may not read counts as unset, and its name is recorded
 * so start-up can say which one was denied.
 */
export function safeEnvReader(denied: Set<string>): EnvReader {
  return (name) => {
    try {
      return Deno.env.get(name);
    } catch {
      denied.add(name);
      return undefined;
    }
  };
}
