/**
 * overlayfs, as the tracker reads it: which mount a folder lives on (`/proc/mounts`), and what its upper
 * layer says changed against the lower layers — a file in the upper dir is new or modified, a whiteout (a character
 * device 0:0) is a deletion, and a folder that hides lower entries without whiteouts is opaque (it replaced the lower
 * folder). Opacity is seen through the merged view rather than the `trusted.overlay.opaque` attribute, which Deno
 * cannot read.
 *
 * @module
 */

import { join, relative, resolve, sep } from "node:path";

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

async function lstatOrUndefined(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.lstat(path);
  } catch {
    return undefined;
  }
}

/** A whiteout: the overlay's mark of a deleted lower entry. */
function isWhiteout(info: Deno.FileInfo): boolean {
  return info.isCharDevice === true && (info.rdev ?? 0) === 0;
}

/** Files under `dir` (relative, `/`-separated), recursively. */
async function filesUnder(dir: string, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${prefix}/${entry.name}`;
    const info = await lstatOrUndefined(join(dir, entry.name));
    if (info?.isDirectory) found.push(...await filesUnder(join(dir, entry.name), path));
    else if (info && !isWhiteout(info)) found.push(path);
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
      const info = await lstatOrUndefined(join(root, path));
      if (info) return { root, info };
    }
    return undefined;
  };
  const walk = async (path: string): Promise<void> => {
    const upperDir = join(upperRoot, path);
    const names = new Set<string>();
    for await (const entry of Deno.readDir(upperDir)) names.add(entry.name);
    for (const name of [...names].sort()) {
      const child = path ? `${path}/${name}` : name;
      const info = await lstatOrUndefined(join(upperRoot, child));
      if (!info) continue;
      if (isWhiteout(info)) {
        const lower = await inLower(child);
        if (lower?.info.isDirectory) {
          for (const file of await filesUnder(join(lower.root, child), child)) {
            candidates.push({ path: file, hint: "whiteout" });
          }
        } else if (lower) candidates.push({ path: child, hint: "whiteout" });
      } else if (info.isDirectory) {
        const lower = await inLower(child);
        if (lower?.info.isDirectory) {
          // Lower entries neither in the merged view nor whited out: the upper folder is opaque.
          let opaque = false;
          for await (const entry of Deno.readDir(join(lower.root, child))) {
            const shown = await lstatOrUndefined(join(merged, child, entry.name));
            if (shown || (await lstatOrUndefined(join(upperRoot, child, entry.name)))) continue;
            opaque = true;
            const hidden = join(lower.root, child, entry.name);
            const files = (await lstatOrUndefined(hidden))?.isDirectory
              ? await filesUnder(hidden, `${child}/${entry.name}`)
              : [`${child}/${entry.name}`];
            for (const file of files) candidates.push({ path: file, hint: "hidden" });
          }
          if (opaque) candidates.push({ path: child, hint: "replaced" });
        }
        await walk(child);
      } else {
        candidates.push({ path: child, hint: "upper" });
      }
    }
  };
  if ((await lstatOrUndefined(upperRoot))?.isDirectory) await walk("");
  return candidates;
}

/**
 * The bytes of `path` (relative to the overlay folder `merged`) in the lower layers, or `undefined`.
 *
 * @example
 * ```ts
 * const mount: OverlayMount = {
 *   mountPoint: "/opt/homed",
 *   upper: "/var/lib/homed-overlay/upper",
 *   lowers: ["/opt/homed.ro"],
 * };
 * await lowerBytes("/opt/homed/knowledge", mount, "tea/content.md");
 * // { data, mode } of /opt/homed.ro/knowledge/tea/content.md; undefined when no lower layer has it
 * ```
 */
export async function lowerBytes(
  merged: string,
  mount: OverlayMount,
  path: string,
): Promise<{ data: Uint8Array; mode: number } | undefined> {
  const inside = relative(mount.mountPoint, resolve(merged));
  for (const lower of mount.lowers) {
    const file = join(lower, inside, path);
    const info = await lstatOrUndefined(file);
    if (!info) continue;
    if (!info.isFile) return undefined;
    return { data: await Deno.readFile(file), mode: (info.mode ?? 0o644) & 0o777 };
  }
  return undefined;
}
