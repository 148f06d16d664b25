/**
 * overlayfs, as the tracker reads it: which mount a folder lives on (`/proc/mounts`), and what its upper
 * layer says changed against the lower layers — a file in the upper dir is new or modified, a whiteout (a character
 * device 0:0) is a deletion, and a folder that hides lower entries without whiteouts is opaque (it replaced the lower
 * folder). Opacity is seen through the merged view rather than the `trusted.overlay.opaque` attribute, which Deno
 * cannot read. A non-folder (a file, a link) over a lower folder hides that folder's files. Every look into a layer
 * goes through `tree_access.ts`: no symbolic link on the way is followed, and a link is an entry of its own.
 *
 * @module
 */

import { join, relative, resolve, sep } from "node:path";
import { type Entry, findEntry, listFolder, lstatEntry } from "./tree_access.ts";

/** One overlay mount. */
export interface OverlayMount {
  mountPoint: string;
  upper: string;
  /** Top-most first. */
  lowers: string[];
}

/** A path the upper layer says may differ from the lower layers. */
export interface OverlayCandidate {
  /** Relative to the scanned folder, `/`-separated. */
  path: string;
  /** `replaced`: an opaque folder; the others are judged by content later. */
  hint: "upper" | "whiteout" | "hidden" | "replaced";
}

/**
 * The overlay mount `path` lives on (the deepest mount point above it), if any.
 *
 * @example
 * ```ts
 * const mount: OverlayMount = {
 *   mountPoint: "/opt/homed",
 *   upper: "/var/lib/homed-overlay/upper",
 *   lowers: ["/opt/homed.ro"],
 * };
 * overlayOf("/opt/homed/knowledge", [mount]); // mount
 * overlayOf("/srv/elsewhere", [mount]); // undefined
 * ```
 */
export function overlayOf(path: string, mounts: OverlayMount[]): OverlayMount | undefined {
  const target = resolve(path);
  return mounts
    .filter((mount) => target === mount.mountPoint || target.startsWith(mount.mountPoint.replace(/\/?$/, sep)))
    .sort((a, b) => b.mountPoint.length - a.mountPoint.length)[0];
}

/** A whiteout: the overlay's mark of a deleted lower entry. */
function isWhiteout(info: Deno.FileInfo): boolean {
  return info.isCharDevice === true && (info.rdev ?? 0) === 0;
}

/** Files and links under the folder `path` of `root` (relative, `/`-separated), recursively; no link is followed. */
async function filesUnder(root: string, path: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await listFolder(root, path) ?? []) {
    const child = `${path}/${entry.name}`;
    const info = await lstatEntry(root, child);
    if (info?.isDirectory) found.push(...await filesUnder(root, child));
    else if (info && !isWhiteout(info)) found.push(child);
  }
  return found;
}

/**
 * What the upper layer says may have changed under `merged` (a folder on `mount`): paths relative to it.
 *
 * @example
 * ```ts
 * const mount: OverlayMount = {
 *   mountPoint: "/opt/homed",
 *   upper: "/var/lib/homed-overlay/upper",
 *   lowers: ["/opt/homed.ro"],
 * };
 * await overlayCandidates("/opt/homed/knowledge", mount); // [{ path: "tea/content.md", hint: "upper" }, …]
 * ```
 */
export async function overlayCandidates(merged: string, mount: OverlayMount): Promise<OverlayCandidate[]> {
  const inside = relative(mount.mountPoint, resolve(merged));
  const upperRoot = join(mount.upper, inside);
  const lowerRoots = mount.lowers.map((lower) => join(lower, inside));
  const candidates: OverlayCandidate[] = [];
  const inLower = async (path: string) => {
    for (const root of lowerRoots) {
      const info = await lstatEntry(root, path);
      if (info) return { root, info };
    }
    return undefined;
  };
  const walk = async (path: string): Promise<void> => {
    const names = (await listFolder(upperRoot, path) ?? []).map((entry) => entry.name);
    for (const name of names.sort()) {
      const child = path ? `${path}/${name}` : name;
      const info = await lstatEntry(upperRoot, child);
      if (!info) continue;
      if (isWhiteout(info)) {
        const lower = await inLower(child);
        if (lower?.info.isDirectory) {
          for (const file of await filesUnder(lower.root, child)) {
            candidates.push({ path: file, hint: "whiteout" });
          }
        } else if (lower) candidates.push({ path: child, hint: "whiteout" });
      } else if (info.isDirectory) {
        const lower = await inLower(child);
        if (lower?.info.isDirectory) {
          // Lower entries neither in the merged view nor whited out: the upper folder is opaque.
          let opaque = false;
          for (const entry of await listFolder(lower.root, child) ?? []) {
            const below = `${child}/${entry.name}`;
            if ((await lstatEntry(merged, below)) || (await lstatEntry(upperRoot, below))) continue;
            opaque = true;
            const files = (await lstatEntry(lower.root, below))?.isDirectory
              ? await filesUnder(lower.root, below)
              : [below];
            for (const file of files) candidates.push({ path: file, hint: "hidden" });
          }
          if (opaque) candidates.push({ path: child, hint: "replaced" });
        }
        await walk(child);
      } else {
        candidates.push({ path: child, hint: "upper" });
        // A file or a link over a lower folder hides all of it.
        const lower = await inLower(child);
        if (lower?.info.isDirectory) {
          for (const file of await filesUnder(lower.root, child)) candidates.push({ path: file, hint: "hidden" });
        }
      }
    }
  };
  if ((await lstatEntry(upperRoot, ""))?.isDirectory) await walk("");
  return candidates;
}

/**
 * What `path` (relative to the overlay folder `merged`) holds in the lower layers — a file's bytes or a link's target —
 * or `undefined`: the top-most layer that has the name decides, and a folder, a whiteout or a link on the way there
 * means no entry.
 *
 * @example
 * ```ts
 * const mount: OverlayMount = {
 *   mountPoint: "/opt/homed",
 *   upper: "/var/lib/homed-overlay/upper",
 *   lowers: ["/opt/homed.ro"],
 * };
 * await lowerEntry("/opt/homed/knowledge", mount, "tea/content.md");
 * // { kind: "file", data, mode } of /opt/homed.ro/knowledge/tea/content.md; undefined when no lower layer has it
 * ```
 */
export async function lowerEntry(merged: string, mount: OverlayMount, path: string): Promise<Entry | undefined> {
  const inside = relative(mount.mountPoint, resolve(merged));
  for (const lower of mount.lowers) {
    const found = await findEntry(join(lower, inside), path);
    if (found === "missing") continue;
    return found === "other" ? undefined : found;
  }
  return undefined;
}
