/**
 * `homed tracker status|diff|commit|revert [PATH…]`: the change tracker from the terminal. A revert names what to put
 * back (or says `--all`), since it overwrites files.
 *
 * @module
 */

import type { Tracker, TrackerStatus } from "../tracker/tracker.ts";

/** The actions, for the usage line and the error. */
export const TRACKER_ACTIONS = ["status", "diff", "commit", "revert"] as const;

function sizeNote(change: TrackerStatus["changes"][number]): string {
  if (change.change === "replaced") return "(folder replaced)";
  if (change.change === "added") return `(${change.size} bytes)`;
  if (change.change === "deleted") return `(was ${change.baselineSize} bytes)`;
  return `(${change.baselineSize} → ${change.size} bytes)`;
}

/**
 * Runs one action; resolves to what to print.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 * import { trackerFor } from "../tracker/tracker_for.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * console.log(await runTracker(trackerFor(loaded, Date.now), "status", [], { all: false }));
 * ```
 */
export async function runTracker(
  tracker: Tracker,
  action: string,
  paths: string[],
  options: { all: boolean },
): Promise<string> {
  switch (action) {
    case "status": {
      const status = await tracker.status();
      const lines = [
        `Parts: ${Object.entries(status.modes).map(([part, mode]) => `${part} (${mode})`).join(", ")}`,
        status.committed
          ? `Last commit: ${status.committed}`
          : "No commit yet: everything is new; `homed tracker commit` records it as the baseline.",
      ];
      if (!status.changes.length) lines.push("No changes since the last commit.");
      for (const change of status.changes) {
        lines.push(`  ${change.change.padEnd(9)} ${change.path} ${sizeNote(change)}`);
      }
      return `${lines.join("\n")}\n`;
    }
    case "diff":
      return (await tracker.diff(paths)) || "No changes.\n";
    case "commit": {
      const count = await tracker.commit(paths);
      return `Committed ${count} change${count === 1 ? "" : "s"}.\n`;
    }
    case "revert": {
      if (!paths.length && !options.all) {
        throw new TypeError("revert: name the paths to put back (homed tracker status lists them), or pass --all");
      }
      const { reverted, movedTo } = await tracker.revert(paths);
      return `Reverted ${reverted} change${reverted === 1 ? "" : "s"}.${
        movedTo ? ` Files that were added are kept in ${movedTo}.` : ""
      }\n`;
    }
    default:
      throw new TypeError(`tracker: unknown action ${JSON.stringify(action)}; allowed: ${TRACKER_ACTIONS.join(", ")}`);
  }
}
