/**
 * The parts a tracker watches and how a tracked name maps onto them: which part and folder a name lives in, which
 * overlay mount a part is on and what its lower layers hold, which files the parts hold and how many of a file's hard
 * links they hold. Every look goes through `tree_access.ts`; the tracker's class asks here instead of walking the
 * roots itself.
 *
 * @module
 */

import { basename, dirname } from "node:path";
import { compareText } from "../text/compare_text.ts";
import { lowerEntry, type OverlayMount, overlayOf } from "./overlay.ts";
import { type Entry, listFolder, lstatEntry } from "./tree_access.ts";
import { UntrackedPath } from "./untracked_path.ts";

/** One tracked part: a folder or a single file, under a fixed name (`knowledge`, `config/homed.yaml`). */
export interface TrackedRoot {
  name: string;
  path: string;
  kind: "dir" | "file";
}

/**
 * Files and links under a folder, relative and `/`-separated; temporary files of atomic writes are not content.
 *
 * @example
 * ```ts
 * await walkEntries("/opt/homed/knowledge"); // ["tea/content.md", …]
 * ```
 */
export async function walkEntries(root: string, path = ""): Promise<string[]> {
  const found: string[] = [];
  const entries = await listFolder(root, path) ?? [];
  for (const entry of entries.sort((a, b) => compareText(a.name, b.name))) {
    const child = path ? `${path}/${entry.name}` : entry.name;
    if (entry.isSymlink) found.push(child);
    else if (entry.isDirectory) found.push(...await walkEntries(root, child));
    else if (entry.isFile && !/^\..*\.tmp$/.test(entry.name)) found.push(child);
  }
  return found;
}

/** `lstat`'s key of one file. */
function fileKey(info: Deno.FileInfo): string {
  return `${info.dev}:${info.ino}`;
}

/**
 * The tracked parts, and the overlay mounts they may live on.
 *
 * @example
 * ```ts
 * const parts = new TrackedParts([{ name: "knowledge", path: "/opt/homed/knowledge", kind: "dir" }], []);
 * parts.locate("knowledge/tea/content.md").inside; // "tea/content.md"
 * ```
 */
export class TrackedParts {
  /** The parts, in the configured order. */
  readonly roots: TrackedRoot[];
  #mounts: OverlayMount[];

  constructor(roots: TrackedRoot[], mounts: OverlayMount[]) {
    this.roots = roots;
    this.#mounts = mounts;
  }

  /** The overlay mount a part lives on (a file part: its folder's), if any. */
  overlay(root: TrackedRoot): OverlayMount | undefined {
    return overlayOf(root.kind === "dir" ? root.path : dirname(root.path), this.#mounts);
  }

  /** Where a tracked name lives: its root, and the base folder and name inside it that `tree_access.ts` takes. */
  locate(name: string): { root: TrackedRoot; base: string; inside: string } {
    for (const root of this.roots) {
      if (root.kind === "file" && name === root.name) {
        return { root, base: dirname(root.path), inside: basename(root.path) };
      }
      if (root.kind === "dir" && name.startsWith(`${root.name}/`)) {
        const inside = name.slice(root.name.length + 1);
        if (inside.split("/").some((part) => part === "" || part === "." || part === "..")) break;
        return { root, base: root.path, inside };
      }
    }
    throw new UntrackedPath(`path: ${JSON.stringify(name)} is not in a tracked part (${this.#partNames()})`);
  }

  #partNames(): string {
    return this.roots.map((root) => root.name).join(", ");
  }

  /** The items under `paths` (every item when none is given); a path in no part throws {@link UntrackedPath}. */
  select<T extends { path: string }>(items: T[], paths: string[]): T[] {
    if (!paths.length) return items;
    for (const path of paths) this.#locateOrPart(path);
    return items.filter((item) => paths.some((path) => item.path === path || item.path.startsWith(`${path}/`)));
  }

  /** A path argument: a tracked file or folder name, or a whole part. */
  #locateOrPart(path: string): void {
    if (this.roots.some((root) => root.name === path)) return;
    this.locate(path);
  }

  /** What `name` holds in the overlay's lower layers, when its part is on an overlay mount. */
  async lower(name: string): Promise<Entry | undefined> {
    const { root, base, inside } = this.locate(name);
    const mount = this.overlay(root);
    return mount ? await lowerEntry(base, mount, inside) : undefined;
  }

  /**
   * How many of a file's hard links the tracked parts hold, for the files among `names` with more than one: counted
   * over every part whole (the names compared may be only an overlay's candidates). A file not counted holds one.
   */
  async linksInside(names: string[]): Promise<(info: Deno.FileInfo) => number> {
    const linked = new Set<string>();
    for (const name of names) {
      const { base, inside } = this.locate(name);
      const info = await lstatEntry(base, inside);
      if (info?.isFile && (info.nlink ?? 1) > 1) linked.add(fileKey(info));
    }
    const counts = new Map<string, number>();
    if (linked.size) {
      for (const root of this.roots) {
        const all = root.kind === "file"
          ? [root.name]
          : (await walkEntries(root.path)).map((path) => `${root.name}/${path}`);
        for (const name of all) {
          const { base, inside } = this.locate(name);
          const info = await lstatEntry(base, inside);
          if (info?.isFile && linked.has(fileKey(info))) {
            counts.set(fileKey(info), (counts.get(fileKey(info)) ?? 0) + 1);
          }
        }
      }
    }
    return (info) => counts.get(fileKey(info)) ?? 1;
  }
}
