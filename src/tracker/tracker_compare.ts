/**
 * The tracker's one look at the tree: for every part, the names that may have changed (an overlay's upper layer names
 * them; elsewhere every file, and every name the manifest holds), each compared with its baseline — the last commit's
 * bytes, or what the overlay's lower layers hold — into the changes that status, diff, commit and revert work from.
 * A file with hard links outside the parts is not read but listed, with a warning.
 *
 * @module
 */

import { join } from "node:path";
import type { TrackerManifest } from "./manifest.ts";
import { overlayCandidates, type OverlayMount } from "./overlay.ts";
import { type ChangeItem, sameEntry } from "./tracked_change.ts";
import { type TrackedParts, type TrackedRoot, walkEntries } from "./tracked_parts.ts";
import type { TrackerState } from "./tracker_state.ts";
import { type Entry, readEntry } from "./tree_access.ts";

/** What one look found. */
export interface Comparison {
  manifest: TrackerManifest | undefined;
  /** Every change, with what is on both sides. */
  items: ChangeItem[];
  /** Per part: `overlay (upper <dir>)` or `manifest`. */
  modes: Record<string, string>;
  /** The count of hard links inside the parts the files were read by, for a re-read. */
  linksInside: (info: Deno.FileInfo) => number;
  /** Bad manifest entries skipped, files not read: sentences, in the order found. */
  warnings: string[];
}

/** One part's names to compare, and (on an overlay) its folders that replaced the lower ones. */
interface PartNames {
  source: "overlay" | "manifest";
  names: string[];
  replaced: string[];
}

/**
 * Every change in `parts` since the commit recorded in `state`, with what is on both sides, and the warnings of
 * this look.
 *
 * @example
 * ```ts
 * import type { TrackedParts } from "./tracked_parts.ts";
 * import type { TrackerState } from "./tracker_state.ts";
 *
 * declare const parts: TrackedParts;
 * declare const state: TrackerState;
 * const { items, warnings } = await compareTree(parts, state);
 * ```
 */
export async function compareTree(parts: TrackedParts, state: TrackerState): Promise<Comparison> {
  const warnings: string[] = [];
  const manifest = await state.manifest(warnings);
  const modes: Record<string, string> = {};
  const items: ChangeItem[] = [];
  const found: PartNames[] = [];
  for (const root of parts.roots) {
    const mount = parts.overlay(root);
    modes[root.name] = mount ? `overlay (upper ${mount.upper})` : "manifest";
    found.push(await namesOf(root, mount, manifest));
  }
  const linksInside = await parts.linksInside(found.flatMap((part) => part.names));
  for (const { source, names, replaced } of found) {
    for (const name of names) {
      const { base, inside } = parts.locate(name);
      const current = await readEntry(base, inside, { linksInside });
      const { entry: baseline, origin } = await baselineOf(parts, state, name, manifest);
      if (!current && !baseline) continue;
      if (current && baseline && sameEntry(current, baseline)) continue;
      if (current?.kind === "hardlinked") {
        const { links, inside: held } = current;
        warnings.push(
          `Not read: ${name} (${join(base, inside)}) has ${links} hard links and only ${held} ${
            held === 1 ? "is" : "are"
          } in the tracked tree: not compared, diffed or committed, since a link could lead the tracker to a file ` +
            "elsewhere",
        );
      }
      items.push(changeOf(name, current, baseline, origin, source));
    }
    for (const name of replaced) {
      if (items.some((item) => item.change === "deleted" && item.path.startsWith(`${name}/`))) {
        items.push({ path: name, change: "replaced", source });
      }
    }
  }
  return { manifest, items, modes, linksInside, warnings };
}

/** The names of one part to compare: its file, the overlay's candidates or every file, and the manifest's names. */
async function namesOf(
  root: TrackedRoot,
  mount: OverlayMount | undefined,
  manifest: TrackerManifest | undefined,
): Promise<PartNames> {
  const names = new Set<string>();
  const replaced: string[] = [];
  if (root.kind === "file") names.add(root.name);
  else if (mount) {
    for (const candidate of await overlayCandidates(root.path, mount)) {
      if (candidate.hint === "replaced") replaced.push(`${root.name}/${candidate.path}`);
      else names.add(`${root.name}/${candidate.path}`);
    }
  } else for (const path of await walkEntries(root.path)) names.add(`${root.name}/${path}`);
  for (const name of Object.keys(manifest?.files ?? {})) {
    if (name === root.name || name.startsWith(`${root.name}/`)) names.add(name);
  }
  return { source: mount ? "overlay" : "manifest", names: [...names].sort(), replaced };
}

/** What `name` is compared with: the last commit's entry, else the overlay's lower layers, else nothing. */
async function baselineOf(
  parts: TrackedParts,
  state: TrackerState,
  name: string,
  manifest: TrackerManifest | undefined,
): Promise<{ entry?: Entry; origin?: "commit" | "lower" }> {
  // Own entries only: a name like "knowledge/constructor" is not the object's prototype.
  const entry = manifest && Object.hasOwn(manifest.files, name) ? manifest.files[name] : undefined;
  if (entry && "deleted" in entry) return {};
  if (entry && "link" in entry) return { entry: { kind: "link", target: entry.link }, origin: "commit" };
  if (entry) return { entry: await state.committed(name, entry), origin: "commit" };
  const lower = await parts.lower(name);
  return lower ? { entry: lower, origin: "lower" } : {};
}

/** The change at `name`, from what is there now and its baseline (at least one of them present). */
function changeOf(
  name: string,
  current: Entry | undefined,
  baseline: Entry | undefined,
  origin: "commit" | "lower" | undefined,
  source: "overlay" | "manifest",
): ChangeItem {
  return {
    path: name,
    change: current?.kind === "hardlinked"
      ? "hardlinked"
      : !baseline
      ? "added"
      : !current
      ? "deleted"
      : current.kind === "link" && baseline.kind === "link"
      ? "retargeted"
      : "modified",
    ...(current?.kind === "file" ? { size: current.data.length } : {}),
    ...(current?.kind === "link" ? { link: current.target } : {}),
    ...(baseline?.kind === "file" ? { baselineSize: baseline.data.length } : {}),
    ...(baseline?.kind === "link" ? { baselineLink: baseline.target } : {}),
    ...(current?.kind === "hardlinked" ? { hardLinks: current.links, hardLinksInside: current.inside } : {}),
    source,
    ...(current ? { current } : {}),
    ...(baseline ? { baseline } : {}),
    ...(origin ? { origin } : {}),
  };
}
