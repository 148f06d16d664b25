/**
 * Prints the narrowest `deno run` flags for homed, for splicing into a task:
 * `deno run $(deno run --allow-read --allow-env src/flags.ts) src/main.ts run`.
 *
 * It always prints usable flags: if the config is bad it prints just enough for `homed` to read the config and
 * report the problem itself, so the daemon never starts with no rights and an obscure error.
 *
 * @module
 */

import { referencedVariables } from "./config/expand.ts";
import { DEFAULT_ENV_NAMES, loadConfig, locateConfig, safeEnvReader } from "./config/load.ts";
import { commandFlags } from "./config/command_flags.ts";
import { LIBRARY_ENV_NAMES, type PermissionMode, toFlags } from "./config/permissions.ts";

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
  try {
    const loaded = await loadConfig({ flag: options.flag, readEnv, cwd: options.cwd });
    return commandFlags(loaded, mode);
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
  if (!["run", "chat", "doctor"].includes(mode)) {
    console.error(`flags.ts: unknown mode ${JSON.stringify(mode)}; allowed: run, chat, doctor`);
    console.log("--no-prompt");
  } else {
    console.log((await flagsFor(mode, { flag: undefined, cwd: Deno.cwd() })).join(" "));
  }
}
