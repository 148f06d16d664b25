/**
 * The config a command runs on: loaded as `--config`, `$HOMED_CONFIG` and the layout say, with the environment
 * variables homed may not read noted (the rights check names them); a bad config ends homed, refused, with the
 * config error's message.
 *
 * @module
 */

import { ConfigError } from "../config/config_error.ts";
import { type Layout, loadConfig, type LoadedConfig, safeEnvReader } from "../config/load.ts";
import { EXIT_REFUSED, fail } from "./output.ts";

/** A loaded config and the variables it named that homed has no right to read. */
export interface CommandConfig {
  loaded: LoadedConfig;
  denied: Set<string>;
}

/**
 * Loads the config for a command; exits with the config's error if it is bad.
 *
 * @example
 * ```ts
 * const { loaded, denied } = await loadCommandConfig("/etc/homed/homed.yaml", "standard");
 * ```
 */
export async function loadCommandConfig(flag: string | undefined, layout: Layout): Promise<CommandConfig> {
  const denied = new Set<string>();
  try {
    const loaded = await loadConfig({ flag, readEnv: safeEnvReader(denied), cwd: Deno.cwd(), layout });
    return { loaded, denied };
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message, EXIT_REFUSED);
    throw error;
  }
}
