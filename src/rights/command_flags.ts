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
 * on a small home machine. Not `--optimize-for-size`: it narrows the soak's heap swing (≈ 3 MB instead of ≈ 7) but
 * costs ≈ 2 ms of p99 turn overhead (docs/PERFORMANCE.md, "Soak"). Measured in `docs/PERFORMANCE.md`; the benchmarks
 * run with the same flag. `--expose-gc`: the agent collects garbage on a quiet heartbeat (`agent/idle_collection.ts`).
 */
export const DAEMON_V8_FLAGS = "--v8-flags=--max-semi-space-size=1,--expose-gc";

/**
 * The daemon's environment beside its flags; glibc reads both at process start, so they cannot be set from inside.
 * Set wherever homed starts the daemon: `deno task start`, the supervisor's child, the systemd unit, the bundle's
 * launcher (`docs/PERFORMANCE.md`, "Soak", for both).
 *
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates its own malloc arena (up to 8 per core), and Deno's
 *   worker threads (HTTP, SQLite, files) each keep freed memory in theirs: a long-running homed grew ≈ 30 MB an hour
 *   outside the JS heap in the soak benchmark.
 * - `MALLOC_MMAP_THRESHOLD_=131072`: a block of 128 KB or more gets a mapping of its own, returned to the system when
 *   freed. glibc's default threshold rises with the largest block freed, after which such blocks come from the arenas,
 *   whose freed space glibc kept (memory in use flat, memory held rising ≈ 8 MB an hour over 100 minutes); with the
 *   threshold fixed the soak's RSS was flat, at no measured cost per turn.
 */
export const DAEMON_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072" };

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
 * // ["--no-prompt", "--allow-read=/etc/homed/homed.yaml,…", …, "--v8-flags=--max-semi-space-size=1,--expose-gc"]
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
