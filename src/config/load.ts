/**
 * Finds, reads, expands and validates the config.
 *
 * Lookup order: `--config`, `$HOMED_CONFIG`, `config/homed.yaml`, embedded defaults. Relative paths inside a
 * config file are resolved against the file's folder, so a config in `/etc/homed` is self-contained; with the
 * embedded defaults they are resolved against the working directory.
 *
 * The steps of `parseConfig` are in files of their own: the file as written (`raw_config.ts`), schema failures as
 * lines (`config_issues.ts`), the rules across keys (`cross_field_rules.ts`) and the paths (`config_paths.ts`).
 *
 * @module
 */

import { resolve } from "node:path";
import { ConfigError } from "./config_error.ts";
import { problemOf } from "./config_issues.ts";
import { type Layout, placePaths, STANDARD_LAYOUT } from "./config_paths.ts";
import { crossFieldProblems } from "./cross_field_rules.ts";
import { type EnvReader, expandTree } from "./expand.ts";
import { collectKeys, readRaw, readSecretSource, withDefaultSecrets } from "./raw_config.ts";
import { withPeople } from "./people.ts";
import { type Config, configSchema } from "./schema.ts";

export { type Layout, STANDARD_LAYOUT } from "./config_paths.ts";
export { DEFAULT_ENV_NAMES } from "./raw_config.ts";

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
  const raw = readRaw(options.text, source);
  const explicitKeys = new Set<string>();
  collectKeys(raw, "", explicitKeys);
  const withSecrets = withDefaultSecrets(raw, explicitKeys);

  const seen = new Set<string>();
  const expanded = expandTree(withSecrets, options.readEnv, seen);
  const result = configSchema.safeParse(expanded, { reportInput: true });
  if (!result.success) throw new ConfigError(source, result.error.issues.map(problemOf));
  const problems = crossFieldProblems(result.data);
  if (problems.length) throw new ConfigError(source, problems);
  // Each chat admits the people listed with an address on it (people.ts).
  const config = withPeople(result.data);

  const baseDir = placePaths(config, {
    file: options.location.path,
    layout: options.layout,
    cwd: options.cwd,
    explicitKeys,
  });
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
