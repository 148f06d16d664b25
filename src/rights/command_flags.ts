/**
 * The full `deno run` flags of a homed command: its permissions, plus the V8 tuning of the daemon.
 *
 * @module
 */

import type { LoadedConfig } from "../config/load.ts";
import { envFileFlag } from "../config/env_file.ts";
import { type PermissionMode, requiredPermissions, toFlags } from "./permissions.ts";

/**
 * V8 tuning of the daemon. A young generation of at most 1 MiB per semi-space keeps each scavenge short (≈0.5 ms
 * instead of 2–4 ms with the default), which is what sets homed's p99 turn overhead, and it trims resident memory
 * on a small home machine. Measured in `docs/PERFORMANCE.md`; the benchmark runs with the same flag.
 */
export const DAEMON_V8_FLAGS = "--v8-flags=--max-semi-space-size=1";

/**
 * The flags `deno task start|chat|doctor` splice in and `homed flags` prints.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 * import { pluginRights } from "../plugin/rights.ts";
 *
 * const readEnv = (name: string) => Deno.env.get(name);
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv, cwd: "/" });
 * commandFlags(loaded, "run");
 * // ["--no-prompt", "--allow-read=/etc/homed/homed.yaml,…", …, "--v8-flags=--max-semi-space-size=1"]
 * commandFlags(loaded, "run", await pluginRights(loaded.config, readEnv)); // plus what skills' gates need
 * ```
 */
export function commandFlags(
  loaded: LoadedConfig,
  mode: PermissionMode,
  extra: { read: readonly string[]; env: readonly string[] } = { read: [], env: [] },
  options: { file?: string; notifySocket?: string; unitDir?: string; bundleDir?: string } = {},
): string[] {
  const rights = requiredPermissions(loaded, mode, options);
  const merged = {
    ...rights,
    read: [...new Set([...rights.read, ...extra.read])],
    env: [...new Set([...rights.env, ...extra.env])],
  };
  // The secrets init and service install keep in homed.env reach every command that reads the config's variables.
  const flags = [...toFlags(merged), ...(mode === "init" || mode === "service" ? [] : envFileFlag(loaded))];
  // Unix datagrams (sd_notify) are behind --unstable-net; only when the rights include a notify socket.
  const unstable = rights.net.some((host) => host.startsWith("unix:")) ? ["--unstable-net"] : [];
  return mode === "run" ? [...flags, ...unstable, DAEMON_V8_FLAGS] : flags;
}
