/**
 * `homed tracker status|diff|commit|revert [PATH…]`: the change tracker from the terminal. A revert names what to put
 * back (or says `--all`), since it overwrites files. Everything printed that people's files decide — names, link
 * targets, the diff's lines, error messages naming them — has its control characters, line breaks and bidi overrides
 * escaped (`escapeForTerminal`), so no name can clear the terminal or forge a line of the listing. The tracker's
 * warnings (manifest entries skipped, files with hard links outside not read) follow every action's output, one a
 * line (as `#` lines after a diff).
 *
 * @module
 */

import { escapeForTerminal } from "../text/terminal_text.ts";
import { type Tracker, type TrackerStatus, UntrackedPath } from "../tracker/tracker.ts";
import { trackerFor } from "../tracker/tracker_for.ts";
import type { CommandLine } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { print, reportFailure } from "./output.ts";
import { checkRights } from "./rights_check.ts";
import { UsageError } from "./usage_error.ts";

/** The actions, for the usage line and the error. */
export const TRACKER_ACTIONS = ["status", "diff", "commit", "revert"] as const;

/** How `Tracker` words its refusal of a path that is in none of its parts. */

/** What is there now and what was: `(12 → 14 bytes)`, `(link → /srv/x, was 12 bytes)`… */
function sizeNote(change: TrackerStatus["changes"][number]): string {
  if (change.change === "replaced") return "(folder replaced)";
  if (change.change === "hardlinked") {
    const was = change.baselineLink !== undefined
      ? `; was link → ${change.baselineLink}`
      : change.baselineSize !== undefined
      ? `; was ${change.baselineSize} bytes`
      : "";
    return `(${change.hardLinks} hard links, ${change.hardLinksInside} in the tracked tree: not read${was})`;
  }
  const now = change.link !== undefined ? `link → ${change.link}` : `${change.size} bytes`;
  const before = change.baselineLink !== undefined ? `link → ${change.baselineLink}` : `${change.baselineSize} bytes`;
  if (change.change === "added") return `(${now})`;
  if (change.change === "deleted") return `(was ${before})`;
  if (change.link === undefined && change.baselineLink === undefined) {
    return `(${change.baselineSize} → ${change.size} bytes)`;
  }
  return `(${now}, was ${before})`;
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
  try {
    return await run(tracker, action, paths, options);
  } catch (error) {
    // A path outside the tracked parts was typed here: a usage error. Any other TypeError is a bug and stays one.
    if (error instanceof UntrackedPath) {
      throw new UsageError(escapeForTerminal(error.message), { cause: error });
    }
    // The message names paths people chose; it is printed as it is.
    if (error instanceof Error) error.message = escapeForTerminal(error.message);
    throw error;
  }
}

async function run(tracker: Tracker, action: string, paths: string[], options: { all: boolean }): Promise<string> {
  const shown = escapeForTerminal;
  const warnings = (prefix = "") => tracker.warnings.map((warning) => `${prefix}${shown(warning)}\n`).join("");
  switch (action) {
    case "status": {
      const status = await tracker.status();
      const lines = [
        `Parts: ${Object.entries(status.modes).map(([part, mode]) => `${shown(part)} (${shown(mode)})`).join(", ")}`,
        status.committed
          ? `Last commit: ${shown(status.committed)}`
          : "No commit yet: everything is new; `homed tracker commit` records it as the baseline.",
      ];
      if (!status.changes.length) lines.push("No changes since the last commit.");
      for (const change of status.changes) {
        lines.push(`  ${change.change.padEnd(10)} ${shown(change.path)} ${shown(sizeNote(change))}`);
      }
      for (const warning of status.warnings) lines.push(shown(warning));
      return `${lines.join("\n")}\n`;
    }
    case "diff":
      // Tracker.diff escapes names and lines itself (a name with a line break must not split a line first).
      return `${(await tracker.diff(paths)) || "No changes.\n"}${warnings("# ")}`;
    case "commit": {
      const count = await tracker.commit(paths);
      return `Committed ${count} change${count === 1 ? "" : "s"}.\n${warnings()}`;
    }
    case "revert": {
      if (!paths.length && !options.all) {
        throw new UsageError("revert: name the paths to put back (homed tracker status lists them), or pass --all");
      }
      const { reverted, movedTo } = await tracker.revert(paths);
      return `Reverted ${reverted} change${reverted === 1 ? "" : "s"}.${
        movedTo ? ` Files that were added are kept in ${shown(movedTo)}.` : ""
      }\n${warnings()}`;
    }
    default:
      throw new UsageError(`tracker: unknown action ${JSON.stringify(action)}; allowed: ${TRACKER_ACTIONS.join(", ")}`);
  }
}

/**
 * `homed tracker [status|diff|commit|revert] [PATH…] [--all]` (default `status`), after the rights check.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await trackerCli(parseCommandLine(["tracker", "diff", "knowledge/tea"]));
 * ```
 */
export async function trackerCli(line: CommandLine): Promise<void> {
  const { loaded, denied } = await loadCommandConfig(line.options.config, line.layout);
  checkRights(loaded, "tracker", denied);
  const [action = "status", ...paths] = line.positionals;
  await reportFailure("tracker: ", async () => {
    print(await runTracker(trackerFor(loaded, Date.now), action, paths, { all: line.options.all ?? false }));
  });
}
