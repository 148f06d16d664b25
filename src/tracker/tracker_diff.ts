/**
 * The tracker's diff as a terminal shows it: a unified diff per changed file, with names and lines escaped
 * (`escapeForTerminal`) since a file someone dropped into `knowledge/` may hold control characters or bidi overrides;
 * a `#` line for what has no lines to compare — a link (named with its target, never followed), a folder that
 * replaced the deployed one, a file with hard links outside, not read — and "Binary files differ" for bytes that are
 * not UTF-8 text.
 *
 * @module
 */

import { escapeForTerminal } from "../text/terminal_text.ts";
import { unifiedDiff } from "./line_diff.ts";
import { type ChangeItem, described } from "./tracked_change.ts";
import type { Entry } from "./tree_access.ts";

/**
 * The diff of `items`, in their order.
 *
 * @example
 * ```ts
 * const data = new TextEncoder().encode("green tea\n");
 * renderDiff([{
 *   path: "knowledge/tea/content.md",
 *   change: "added",
 *   source: "manifest",
 *   current: { kind: "file", data, mode: 0o644 },
 * }]); // a unified diff adding the line "green tea"
 * ```
 */
export function renderDiff(items: readonly ChangeItem[]): string {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const text = (entry: Entry | undefined): string | undefined => {
    if (entry?.kind !== "file") return "";
    if (entry.data.includes(0)) return undefined;
    try {
      return decoder.decode(entry.data);
    } catch {
      return undefined;
    }
  };
  let out = "";
  for (const item of items) {
    const name = escapeForTerminal(item.path);
    if (item.change === "replaced") {
      out += `# ${name}/: the folder replaced the deployed one (opaque); its old files are listed as deleted\n`;
      continue;
    }
    const { current, baseline } = item;
    if (current?.kind === "hardlinked") {
      out += `# ${name}: ${current.links} hard links, only ${current.inside} in the tracked tree: not read (a link ` +
        "could lead the tracker to a file elsewhere)\n";
      continue;
    }
    if (current?.kind === "link" || baseline?.kind === "link") {
      out += `# ${name}: ${escapeForTerminal(linkNote(current, baseline))}\n`;
      if (current?.kind !== "file" && baseline?.kind !== "file") continue;
    }
    const before = text(baseline), after = text(current);
    const sizes = (entry: Entry | undefined) => entry?.kind === "file" ? entry.data.length : 0;
    out += before === undefined || after === undefined
      ? `--- a/${name}\n+++ b/${name}\nBinary files differ (${sizes(baseline)} → ${sizes(current)} bytes)\n`
      : unifiedDiff(name, before, after, { show: escapeForTerminal });
  }
  return out;
}

/** What happened to a link at a name (one of the two sides is a link). */
function linkNote(current: Entry | undefined, baseline: Entry | undefined): string {
  return !baseline
    ? `new symbolic link (${described(current!)}); the tracker does not follow links`
    : !current
    ? `symbolic link removed (was ${described(baseline)})`
    : current.kind === "link" && baseline.kind === "link"
    ? `symbolic link retargeted (${described(current)}, was ${described(baseline)})`
    : current.kind === "link"
    ? `a file became a symbolic link (${described(current)})`
    : `a symbolic link became a file (was ${described(baseline)})`;
}
