/**
 * `homed flags [--mode MODE] [--file ARCHIVE] [--unit-dir DIR]`: prints the `deno run` permission flags a mode needs
 * for this config (for `init`, for where the config will be written; for `service`, the unit folder named), for a task
 * or a unit to splice in.
 *
 * @module
 */

import { commandFlags } from "../rights/command_flags.ts";
import { safeEnvReader } from "../config/load.ts";
import { initPermissions, PERMISSION_MODES, type PermissionMode, toFlags } from "../rights/permissions.ts";
import { pluginRights } from "../plugin/rights.ts";
import type { CommandLine, InitTarget } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { print } from "./output.ts";
import { UsageError } from "./usage_error.ts";

/**
 * Prints the flags of `--mode` (default `run`); an unknown mode is a usage error.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await flagsCli(parseCommandLine(["flags", "--mode", "doctor"]), (flag) => flag ?? "/srv/homed/config/homed.yaml");
 * ```
 */
export async function flagsCli(line: CommandLine, initTarget: InitTarget): Promise<void> {
  const { options } = line;
  const mode = (options.mode ?? "run") as PermissionMode;
  if (!PERMISSION_MODES.includes(mode)) {
    throw new UsageError(`--mode ${JSON.stringify(mode)} is not one of ${PERMISSION_MODES.join(", ")}`);
  }
  if (mode === "init") {
    return print(`${toFlags(initPermissions(initTarget(options.config), Deno.cwd())).join(" ")}\n`);
  }
  const { loaded } = await loadCommandConfig(options.config, line.layout);
  const extra = mode === "run" || mode === "doctor"
    ? await pluginRights(loaded.config, safeEnvReader(new Set()))
    : undefined;
  const file = options.file === undefined ? {} : { file: options.file };
  const unitDir = options["unit-dir"] === undefined ? {} : { unitDir: options["unit-dir"] };
  print(`${commandFlags(loaded, mode, extra, { ...file, ...unitDir }).join(" ")}\n`);
}
