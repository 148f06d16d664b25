/**
 * The config file as written, before the schema: its YAML parsed (a file that is not YAML, or not a mapping, is
 * refused with one line), the keys it sets itself — dotted, what `explicitKeys` reports and the standard layout's
 * defaults defer to — and the secrets the embedded defaults read from the environment, added where the file leaves
 * them out so a file gets the same.
 *
 * @module
 */

import { parse as parseYaml, YAMLParseError } from "yaml";
import { describe } from "./config_issues.ts";
import { ConfigError } from "./config_error.ts";

/** Environment variables the embedded defaults refer to. */
export const DEFAULT_ENV_NAMES = ["HOMED_API_TOKEN", "DEEPSEEK_API_KEY", "ONEBOT_ACCESS_TOKEN"] as const;
const DEFAULT_SECRETS: Record<string, string> = {
  "daemon.api_token": "${HOMED_API_TOKEN}",
  "llm.api_key": "${DEEPSEEK_API_KEY}",
  "onebot.access_token": "${ONEBOT_ACCESS_TOKEN}",
};

/**
 * The YAML `text` as a mapping (empty text: none); `source` names the file in the refusal.
 *
 * @example
 * ```ts
 * readRaw("llm:\n  temperature: 0.2\n", "/etc/homed/homed.yaml"); // { llm: { temperature: 0.2 } }
 * ```
 */
export function readRaw(text: string, source: string): object {
  let raw: unknown;
  try {
    raw = text.trim() === "" ? {} : parseYaml(text, { prettyErrors: true });
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw error;
    throw new ConfigError(source, [`the file is not valid YAML: ${error.message.split("\n")[0]}`]);
  }
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(source, [`(top level): got ${describe(raw, "")}; allowed: a mapping of keys`]);
  }
  return raw;
}

/**
 * Adds every key `value` sets, dotted, to `into` (the routes and plugin entries as one key each: their insides are
 * data, not settings).
 *
 * @example
 * ```ts
 * const keys = new Set<string>();
 * collectKeys({ paths: { personal: "p.md" } }, "", keys);
 * keys; // Set { "paths", "paths.personal" }
 * ```
 */
export function collectKeys(value: unknown, prefix: string, into: Set<string>): void {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  for (const [key, item] of Object.entries(value)) {
    const dotted = prefix ? `${prefix}.${key}` : key;
    into.add(dotted);
    if (dotted !== "io.routes" && dotted !== "plugins.entries") collectKeys(item, dotted, into);
  }
}

/**
 * A copy of `raw` with the embedded defaults' `${VAR}` secrets wherever the file (its `explicitKeys`) sets none.
 *
 * @example
 * ```ts
 * withDefaultSecrets({}, new Set()).llm; // { api_key: "${DEEPSEEK_API_KEY}" }
 * ```
 */
export function withDefaultSecrets(
  raw: object,
  explicitKeys: ReadonlySet<string>,
): Record<string, Record<string, unknown>> {
  // The embedded defaults read their secrets from the environment; a file that omits a secret gets the same.
  const withSecrets = structuredClone(raw) as Record<string, Record<string, unknown>>;
  for (const [dotted, reference] of Object.entries(DEFAULT_SECRETS)) {
    if (explicitKeys.has(dotted)) continue;
    const [section, key] = dotted.split(".") as [string, string];
    const node = withSecrets[section];
    if (node !== undefined && (node === null || typeof node !== "object")) continue;
    withSecrets[section] = { ...(node ?? {}), [key]: reference };
  }
  return withSecrets;
}

/**
 * The string at the dotted key of `raw`, unexpanded (`${DEEPSEEK_API_KEY}`), if it is one.
 *
 * @example
 * ```ts
 * readSecretSource({ llm: { api_key: "${MY_KEY}" } }, "llm.api_key"); // "${MY_KEY}"
 * ```
 */
export function readSecretSource(raw: unknown, dotted: string): string | undefined {
  let node: unknown = raw;
  for (const part of dotted.split(".")) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === "string" ? node : undefined;
}
