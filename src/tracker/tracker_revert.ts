/**
 * The tracker's revert: first the checks that refuse it before anything is written (a write behind a link that is not
 * removed too, a committed link to recreate, a multiply-linked single file whose replacement could not be made on its
 * file system), then the changes put back — changed links removed first, outermost first, so the folders they stood
 * for come back as real folders; added files moved aside into `reverted-<time>/`; the baseline's bytes written back.
 * A file with hard links outside is never written into: its name gets a new file, or is removed.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { type ChangeItem, described } from "./tracked_change.ts";
import type { TrackedParts } from "./tracked_parts.ts";
import type { TrackerState } from "./tracker_state.ts";
import {
  linkOnTheWay,
  lstatEntry,
  readEntry,
  removeEntry,
  replaceFile,
  writeEntryFile,
  writeInPlace,
} from "./tree_access.ts";

/** A name of a file with hard links outside that a revert removed, as `hardlinks.json` records it. */
type HardlinkRecord = { path: string; device: number; inode: number | null; hardLinks: number };

/**
 * Refuses, before anything is written, a revert of `selected` (among all the changes, `items`) that would have to
 * write behind a link it does not remove, recreate a link, or replace a multiply-linked single file from another file
 * system.
 *
 * @example
 * ```ts
 * import type { ChangeItem } from "./tracked_change.ts";
 * import type { TrackedParts } from "./tracked_parts.ts";
 * import type { TrackerState } from "./tracker_state.ts";
 *
 * declare const items: ChangeItem[];
 * declare const parts: TrackedParts;
 * declare const state: TrackerState;
 * await checkRevertable(items, items, parts, state); // throws, naming the path, when a revert must not start
 * ```
 */
export async function checkRevertable(
  items: ChangeItem[],
  selected: ChangeItem[],
  parts: TrackedParts,
  state: TrackerState,
): Promise<void> {
  const removed = new Set(selected.filter((item) => item.current?.kind === "link").map((item) => item.path));
  for (const item of selected) {
    if (item.baseline?.kind === "link") {
      throw new Error(
        `Not reverting ${item.path}: it ${item.origin === "lower" ? "is" : "was"} a symbolic link (${
          described(item.baseline)
        }) ${item.origin === "lower" ? "in the overlay's lower layer" : "at the last commit"}, and the tracker ` +
          "does not create links; recreate it by hand (ln -s) or commit the change",
      );
    }
    const { root, base, inside } = parts.locate(item.path);
    if (root.kind === "file" && item.baseline?.kind === "file") await checkReplaceable(item, base, inside, state);
    const link = await linkOnTheWay(base, inside);
    if (!link) continue;
    const at = `${root.name}/${link.at}`;
    if (removed.has(at)) continue;
    throw new Error(
      `Not reverting ${item.path}: ${at} is a symbolic link (link → ${link.target}) and the tracker never writes ` +
        `through a link; ${
          items.some((other) => other.path === at)
            ? `revert ${at} as well, which removes the link`
            : "remove the link by hand first, or commit the change"
        }`,
    );
  }
}

/**
 * A single file (the config, the persona) with more than one hard link is replaced by a new file renamed over it,
 * made in the tracker's state folder: that must be on the file's file system.
 */
async function checkReplaceable(item: ChangeItem, base: string, inside: string, state: TrackerState): Promise<void> {
  const info = await lstatEntry(base, inside);
  if (!info?.isFile || (info.nlink ?? 1) <= 1) return;
  const folder = await state.madeFolder();
  if ((await lstatEntry(dirname(folder), basename(folder)))?.dev === info.dev) return;
  throw new Error(
    `Not reverting ${item.path}: ${join(base, inside)} has ${info.nlink} hard links, so the tracker does not write ` +
      "into it in place (the file at its other links would change too), and the new file that replaces it has to " +
      `be made on its file system, where the tracker's state (${folder}) is not; remove the other links or replace ` +
      "it by a copy by hand first",
  );
}

/**
 * Puts `selected` (checked by {@link checkRevertable}) back to the baseline; what is set aside goes to the folder
 * `aside` of the state folder. Resolves to how many changes were reverted and whether anything was set aside.
 *
 * @example
 * ```ts
 * import type { ChangeItem } from "./tracked_change.ts";
 * import type { TrackedParts } from "./tracked_parts.ts";
 * import type { TrackerState } from "./tracker_state.ts";
 *
 * declare const selected: ChangeItem[];
 * declare const parts: TrackedParts;
 * declare const state: TrackerState;
 * await revertSelected(selected, "reverted-2026-01-01T00-00-00-000Z", parts, state, () => 1);
 * ```
 */
export async function revertSelected(
  selected: ChangeItem[],
  aside: string,
  parts: TrackedParts,
  state: TrackerState,
  linksInside: (info: Deno.FileInfo) => number,
): Promise<{ reverted: number; moved: boolean }> {
  let moved = false;
  let reverted = 0;
  // Links first, outermost first: the folders they stood for are then restored as real folders.
  const links: Record<string, string> = {};
  for (const item of selected) {
    if (item.current?.kind !== "link") continue;
    const { base, inside } = parts.locate(item.path);
    await removeEntry(base, inside, item.current);
    links[item.path] = item.current.target;
    if (!item.baseline) reverted++;
  }
  if (Object.keys(links).length) {
    await state.writeRecord(`${aside}/links.json`, links);
    moved = true;
  }
  const hardlinks: Record<string, HardlinkRecord> = {};
  for (const item of selected) {
    const { root, base, inside } = parts.locate(item.path);
    if (!item.baseline && item.current?.kind === "hardlinked") {
      // Only this name goes: the file stays at its other links, never read or copied.
      const { dev, ino, links } = item.current;
      await removeEntry(base, inside, { kind: "hardlinked", dev, ino });
      hardlinks[item.path] = { path: join(base, inside), device: dev, inode: ino, hardLinks: links };
      reverted++;
      continue;
    }
    if (!item.baseline) {
      if (item.current?.kind !== "file") continue;
      // Re-read right before: what is moved aside is what was there, not through a link swapped in meanwhile, nor a
      // file linked from elsewhere since.
      const now = await readEntry(base, inside, { linksInside });
      if (now?.kind !== "file") throw new Error(`${item.path} changed since the tracker looked at it; run it again`);
      await writeEntryFile(await state.madeFolder(), `${aside}/${item.path}`, now.data, now.mode);
      await removeEntry(base, inside, { kind: "file" });
      moved = true;
    } else if (item.baseline.kind === "file") {
      const { data, mode } = item.baseline;
      // The config and the persona are written in place: their folder may not be ours to write a temp file in.
      // One with other hard links is replaced by a new file instead (made in the state folder: checked before).
      if (root.kind === "file") {
        const info = await lstatEntry(base, inside);
        if (info?.isFile && (info.nlink ?? 1) > 1) await replaceFile(base, inside, data, mode, await state.folder());
        else await writeInPlace(base, inside, data, mode);
      } else await writeEntryFile(base, inside, data, mode);
    }
    reverted++;
  }
  if (Object.keys(hardlinks).length) {
    await state.writeRecord(`${aside}/hardlinks.json`, hardlinks);
    moved = true;
  }
  return { reverted, moved };
}
