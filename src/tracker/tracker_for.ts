/**
 * The tracker of a loaded config: knowledge, plugins, the config file and the persona (the memory data dir is left
 * out), its state in `<data dir>/tracker/`, and the overlay `tracker.overlay` names; its warnings go to the `tracker`
 * log as well (nowhere when no logging is set up, as for `homed tracker`, which prints them).
 *
 * @module
 */

import { join } from "node:path";
import { homeParts } from "../config/parts.ts";
import type { LoadedConfig } from "../config/load.ts";
import { log } from "../log/logging.ts";
import { Tracker } from "./tracker.ts";

/**
 * A {@link Tracker} for `loaded`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const changes = (await trackerFor(loaded, Date.now).status()).changes;
 * ```
 */
export function trackerFor(loaded: LoadedConfig, now: () => number): Tracker {
  const overlay = loaded.config.tracker.overlay;
  return new Tracker({
    roots: homeParts(loaded).filter((root) => root.name !== "data"),
    stateDir: join(loaded.config.daemon.data_dir, "tracker"),
    mounts: overlay ? [{ mountPoint: overlay.mount, upper: overlay.upper, lowers: overlay.lower }] : [],
    now,
    logger: log("tracker"),
  });
}
