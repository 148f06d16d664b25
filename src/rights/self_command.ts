/**
 * How homed starts itself as another process (the supervisor's daemon, init's doctor, a systemd unit): the Deno it
 * runs on with the computed flags of that command and this main module (or the checkout's fresh bundle, which the
 * caller chose with `daemon_entry.ts`), or — in a compiled binary, whose rights are built in — the binary itself.
 *
 * @module
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { commandFlags } from "./command_flags.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { PermissionMode } from "./permissions.ts";
import { runsOnDeno } from "../config/runs_on_deno.ts";
import { BUNDLE_DENO_FLAGS, type DaemonEntry } from "./daemon_entry.ts";

/**
 * The program and arguments that run `homed <tail…>` with the rights of `mode`; with `entry` a bundle, that bundle
 * with the same flags but for its own copies of the `.wasm` files (what it computes itself with `homed flags`).
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
 *
 * @example The daemon from a checkout's fresh bundle
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 * import { daemonEntry, sourceCheckout } from "./daemon_entry.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * selfCommand(loaded, "run", ["run"], undefined, daemonEntry(sourceCheckout()));
 * // ["/usr/local/bin/deno", ["run", "--no-config", …, "--allow-read=…,/srv/homed/dist/glue.wasm,…", …, "/srv/homed/dist/homed.js", "run"]]
 * ```
 */
export function selfCommand(
  loaded: LoadedConfig,
  mode: PermissionMode,
  tail: string[],
  extra?: { read: readonly string[]; env: readonly string[] },
  entry?: DaemonEntry,
): [string, string[]] {
  const program = Deno.execPath();
  if (!runsOnDeno(program)) return [program, tail];
  if (entry?.kind === "bundle") {
    const flags = commandFlags(loaded, mode, extra, { bundleDir: dirname(entry.script) });
    return [program, ["run", ...BUNDLE_DENO_FLAGS, ...flags, entry.script, ...tail]];
  }
  const script = entry?.kind === "sources" ? entry.script : fileURLToPath(Deno.mainModule);
  return [program, ["run", ...commandFlags(loaded, mode, extra), script, ...tail]];
}
