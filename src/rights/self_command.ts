/**
 * How homed starts itself as another process (the supervisor's daemon, init's doctor, a systemd unit): the Deno it
 * runs on with the computed flags of that command and this main module, or — in a compiled binary, whose rights are
 * built in — the binary itself.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { commandFlags } from "./command_flags.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { PermissionMode } from "./permissions.ts";
import { runsOnDeno } from "../config/runs_on_deno.ts";

/**
 * The program and arguments that run `homed <tail…>` with the rights of `mode`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * const [program, args] = selfCommand(loaded, "doctor", ["doctor", "--config", "/etc/homed/homed.yaml"]);
 * // on Deno: ["/usr/local/bin/deno", ["run", "--no-prompt", …, "/srv/homed/src/main.ts", "doctor", …]]
 * // in a compiled homed: ["/usr/local/bin/homed", ["doctor", "--config", "/etc/homed/homed.yaml"]]
 * ```
 */
export function selfCommand(
  loaded: LoadedConfig,
  mode: PermissionMode,
  tail: string[],
  extra?: { read: readonly string[]; env: readonly string[] },
): [string, string[]] {
  const program = Deno.execPath();
  if (!runsOnDeno(program)) return [program, tail];
  return [program, ["run", ...commandFlags(loaded, mode, extra), fileURLToPath(Deno.mainModule), ...tail]];
}
