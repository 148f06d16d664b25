/**
 * `homed.env` beside the config: the secrets (`DEEPSEEK_API_KEY=…`, tokens) `homed init` and `homed service install`
 * write with mode 0600, read by systemd's `EnvironmentFile=` and by Deno's `--env-file` (which `homed flags` adds
 * when the file exists), so a key never has to sit in a shell profile or the world-readable config.
 *
 * @module
 */

import { dirname, join } from "node:path";
import type { LoadedConfig } from "./load.ts";

/**
 * Where the env file of `configPath` is: beside it, or `/etc/homed/homed.env` on the embedded defaults.
 *
 * @example
 * ```ts
 * envFilePath("/srv/homed/config/homed.yaml"); // "/srv/homed/config/homed.env"
 * ```
 */
export function envFilePath(configPath: string | undefined): string {
  return join(configPath ? dirname(configPath) : "/etc/homed", "homed.env");
}

/**
 * The env file of a loaded config.
 *
 * @example
 * ```ts
 * import { loadConfig } from "./load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * envFileOf(loaded); // "/etc/homed/homed.env"
 * ```
 */
export function envFileOf(loaded: LoadedConfig): string {
  return envFilePath(loaded.location.path);
}

/**
 * One `NAME=value` line that systemd and Deno's `--env-file` both read back unchanged: plain when the value is plain,
 * else in single quotes (no escapes in either reader). A value with a line break or a single quote cannot be written
 * that way and is refused with a `TypeError` naming the variable.
 *
 * @example
 * ```ts
 * envFileLine("DEEPSEEK_API_KEY", "sk-abc"); // "DEEPSEEK_API_KEY=sk-abc"
 * envFileLine("NOTE", "a b"); // "NOTE='a b'"
 * ```
 */
export function envFileLine(name: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new TypeError(`${name}: the value has a line break, which an env file cannot hold`);
  if (/^[\w@%+=:,./-]*$/.test(value)) return `${name}=${value}`;
  if (value.includes("'")) {
    throw new TypeError(`${name}: the value has both a single quote and characters that need quoting; change it`);
  }
  return `${name}='${value}'`;
}

/**
 * `--env-file=<path>` when the config's env file exists and may be read, else nothing.
 *
 * @example
 * ```ts
 * import { loadConfig } from "./load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * envFileFlag(loaded); // ["--env-file=/etc/homed/homed.env"] once the file exists, else []
 * ```
 */
export function envFileFlag(loaded: LoadedConfig): string[] {
  const path = envFileOf(loaded);
  try {
    return Deno.statSync(path).isFile ? [`--env-file=${path}`] : [];
  } catch {
    // Missing, or not ours to read: the variables then come from the environment as before.
    return [];
  }
}

/**
 * Reads env file text as {@link envFileLine} writes it (and as people edit it): `NAME=value`, `NAME='value'` or
 * `NAME="value"`, comments and blank lines skipped; the first line of a name wins, as in Deno's `--env-file`.
 *
 * @example
 * ```ts
 * parseEnvFile("A=1\n# note\nB='x y'\n"); // { A: "1", B: "x y" }
 * ```
 */
export function parseEnvFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match || match[1]! in values) continue;
    const raw = match[2]!;
    const quoted = /^'(.*)'$/.exec(raw) ?? /^"(.*)"$/.exec(raw);
    values[match[1]!] = quoted ? quoted[1]! : raw.replace(/\s+#.*$/, "");
  }
  return values;
}
