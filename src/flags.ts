/**
 * Prints the narrowest `deno run` flags for homed, for splicing into a task:
 * `deno run $(deno run --allow-read --allow-env src/flags.ts) src/main.ts run`.
 *
 * It always prints usable flags: if the config is bad it prints just enough for `homed` to read the config and
 * report the problem itself, so the daemon never starts with no rights and an obscure error.
 *
 * @module
 */

import { resolve } from "node:path";
import { referencedVariables } from "./config/expand.ts";
import { DEFAULT_ENV_NAMES, loadConfig, locateConfig, safeEnvReader } from "./config/load.ts";
import { commandFlags } from "./rights/command_flags.ts";
import { pluginRights } from "./plugin/rights.ts";
import {
  initPermissions,
  LIBRARY_ENV_NAMES,
  PERMISSION_MODES,
  type PermissionMode,
  toFlags,
} from "./rights/permissions.ts";

/**
 * The config file `homed init` writes: `--config`, else `$HOMED_CONFIG`, else `config/homed.yaml` under `cwd`.
 *
 * @example
 * ```ts
 * initTarget({ flag: undefined, cwd: "/srv/homed", readEnv: () => undefined }); // "/srv/homed/config/homed.yaml"
 * ```
 */
export function initTarget(
  options: { flag: string | undefined; cwd: string; readEnv: (name: string) => string | undefined },
): string {
  const named = options.flag ?? options.readEnv("HOMED_CONFIG");
  return resolve(options.cwd, named || "config/homed.yaml");
}

/**
 * Computes the flags for `mode`; on a config problem, the fallback flags.
 *
 * @example
 * ```ts
 * const flags = await flagsFor("run", { flag: undefined, cwd: Deno.cwd() });
 * ```
 */
export async function flagsFor(
  mode: PermissionMode,
  options: { flag: string | undefined; cwd: string },
): Promise<string[]> {
  const readEnv = safeEnvReader(new Set());
  if (mode === "init") {
    // The config does not exist yet: init's rights follow from where it will be written.
    return toFlags(initPermissions(initTarget({ ...options, readEnv }), options.cwd));
  }
  try {
    const loaded = await loadConfig({ flag: options.flag, readEnv, cwd: options.cwd });
    // The daemon (and doctor, which checks the same) look for skills' binaries and variables.
    const extra = mode === "run" || mode === "doctor" ? await pluginRights(loaded.config, readEnv) : undefined;
    return commandFlags(loaded, mode, extra);
  } catch {
    const location = locateConfig({
      flag: options.flag,
      readEnv,
      cwd: options.cwd,
      exists: () => true,
    });
    let env: string[] = ["HOMED_CONFIG", ...DEFAULT_ENV_NAMES, ...LIBRARY_ENV_NAMES];
    try {
      if (location.path) env = [...new Set([...env, ...referencedVariables(Deno.readTextFileSync(location.path))])];
    } catch {
      // Unreadable: main reports that itself.
    }
    return toFlags({ read: location.path ? [location.path] : [], write: [], net: [], env });
  }
}

if (import.meta.main) {
  const mode = (Deno.args[0] ?? "run") as PermissionMode;
  if (!PERMISSION_MODES.includes(mode)) {
    console.error(`flags.ts: unknown mode ${JSON.stringify(mode)}; allowed: ${PERMISSION_MODES.join(", ")}`);
    console.log("--no-prompt");
  } else {
    console.log((await flagsFor(mode, { flag: undefined, cwd: Deno.cwd() })).join(" "));
  }
}
