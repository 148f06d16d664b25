/**
 * The daemon's tracker parts, loaded only when needed: the tracker for the API, and the first baseline on a new data
 * dir. Nothing here loads the tracker's code until it is asked for.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { Clock } from "../clock.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { Tracker } from "./tracker.ts";

/**
 * The tracker of `loaded`, its code imported on the first call.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import type { LoadedConfig } from "../config/load.ts";
 *
 * declare const loaded: LoadedConfig;
 * const tracker = lazyTracker(loaded, systemClock);
 * const changes = (await (await tracker()).status()).changes;
 * ```
 */
export function lazyTracker(loaded: LoadedConfig, clock: Clock): () => Promise<Tracker> {
  return async () => (await import("./tracker_for.ts")).trackerFor(loaded, () => clock.now());
}

/** Records the tracker's first baseline when the data dir has none; logs, never throws. */
async function recordBaseline(loaded: LoadedConfig, clock: Clock, logger: Logger): Promise<void> {
  try {
    await Deno.stat(join(loaded.config.daemon.data_dir, "tracker", "manifest.json"));
    return;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      logger.warning("Tracker: cannot read its manifest: {error}", { error: (error as Error).message });
      return;
    }
  }
  try {
    const { trackerFor } = await import("./tracker_for.ts");
    const count = await trackerFor(loaded, () => clock.now()).commit();
    logger.info("Tracker: recorded the deployed state ({count} files) as the baseline of homed tracker", { count });
  } catch (error) {
    logger.warning("Tracker: the first baseline could not be recorded: {error}", { error: (error as Error).message });
  }
}

/**
 * A second after start, on a first start on this data dir: what is deployed now becomes the change tracker's
 * baseline, so `homed tracker status` later shows what the butler learned and what was edited since. Later starts
 * load no tracker code. Returns the stop: it cancels the baseline not yet begun, or waits for the one being written —
 * so nothing writes into the data dir after the daemon said it stopped.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import type { LoadedConfig } from "../config/load.ts";
 * import { log } from "../log/logging.ts";
 *
 * declare const loaded: LoadedConfig;
 * const stop = scheduleBaseline(loaded, systemClock, log("tracker"));
 * await stop(); // stopping before it ran
 * ```
 */
export function scheduleBaseline(loaded: LoadedConfig, clock: Clock, logger: Logger): () => Promise<void> {
  let recording: Promise<void> | undefined;
  const cancel = clock.after(1_000, () => {
    recording = recordBaseline(loaded, clock, logger);
  });
  return async () => {
    cancel();
    await recording;
  };
}
