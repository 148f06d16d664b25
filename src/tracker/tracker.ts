/**
 * The change tracker (seed §10, "overlayfs 追踪"): what changed in the deployed tree — knowledge the butler learned,
 * plugins it got, config and persona edits — since the last commit, and commit or revert of it. The memory data dir
 * is left out (it changes every minute by design).
 *
 * Each part is read one of two ways. On an overlay mount the upper layer names the candidates (new and copied-up
 * files, whiteouts, opaque folders) and the lower layers are the baseline; elsewhere every file is hashed and compared
 * with a content-hash manifest. Commits live in `<data dir>/tracker/`: `manifest.json` (path → sha256, size, mode, or
 * a recorded deletion) and `objects/<sha256>`, the committed bytes, so a revert restores them exactly. Reverted
 * additions are moved to `tracker/reverted-<time>/`, never deleted.
 *
 * @module
 */

import { dirname, join, relative } from "node:path";
import { atomicWriteBytes, atomicWriteText } from "../fs/atomic_write.ts";
import { sha256Hex } from "../text/sha256_hex.ts";
import { unifiedDiff } from "./line_diff.ts";
import { lowerBytes, overlayCandidates, type OverlayMount, overlayOf } from "./overlay.ts";
import { compareText } from "../text/compare_text.ts";

/** One tracked part: a folder or a single file, under a fixed name (`knowledge`, `config/homed.yaml`). */
export interface TrackedRoot {
  name: string;
  path: string;
  kind: "dir" | "file";
}

/** One change since the last commit. */
export interface TrackedChange {
  /** `knowledge/tea/content.md`. */
  path: string;
  change: "added" | "modified" | "deleted" | "replaced";
  /** Bytes now (absent for a deletion or a replaced folder). */
  size?: number;
  /** Bytes at the last commit or in the lower layer. */
  baselineSize?: number;
  /** How it was found. */
  source: "overlay" | "manifest";
}

/** What {@link Tracker.status} reports. */
export interface TrackerStatus {
  /** Per part: `overlay (upper <dir>)` or `manifest`. */
  modes: Record<string, string>;
  /** When the last commit was made; undefined before the first. */
  committed: string | undefined;
  changes: TrackedChange[];
}

interface FileEntry {
  sha256: string;
  size: number;
  mode: number;
}

interface Manifest {
  format: "homed-tracker";
  version: 1;
  committed: string;
  files: Record<string, FileEntry | { deleted: true }>;
}

/** Options of {@link Tracker}. */
export interface TrackerOptions {
  roots: TrackedRoot[];
  /** `<data dir>/tracker`. */
  stateDir: string;
  /** The overlay mounts the tree lives on (`tracker.overlay`), or none. */
  mounts: OverlayMount[];
  now: () => number;
}

type Bytes = { data: Uint8Array; mode: number };

async function readCurrent(path: string): Promise<Bytes | undefined> {
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile) return undefined;
    return { data: await Deno.readFile(path), mode: (info.mode ?? 0o644) & 0o777 };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Files under a folder, relative and `/`-separated; temporary files of atomic writes are not content. */
async function walkFiles(dir: string, prefix = ""): Promise<string[]> {
  const found: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return found;
    throw error;
  }
  for (const entry of entries.sort((a, b) => compareText(a.name, b.name))) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory) found.push(...await walkFiles(join(dir, entry.name), path));
    else if (entry.isFile && !/^\..*\.tmp$/.test(entry.name)) found.push(path);
  }
  return found;
}

/**
 * The tracker over a set of parts.
 *
 * @example
 * ```ts
 * const tracker = new Tracker({
 *   roots: [
 *     { name: "knowledge", path: "/opt/homed/knowledge", kind: "dir" },
 *     { name: "config/homed.yaml", path: "/etc/homed/homed.yaml", kind: "file" },
 *   ],
 *   stateDir: "/var/lib/homed/tracker",
 *   mounts: [],
 *   now: Date.now,
 * });
 * (await tracker.status()).changes; // [{ path: "knowledge/tea/content.md", change: "added", … }]
 * ```
 */
export class Tracker {
  #options: TrackerOptions;

  constructor(options: TrackerOptions) {
    this.#options = options;
  }

  #overlay(root: TrackedRoot): OverlayMount | undefined {
    return overlayOf(root.kind === "dir" ? root.path : dirname(root.path), this.#options.mounts);
  }

  async #manifest(): Promise<Manifest | undefined> {
    let text: string;
    try {
      text = await Deno.readTextFile(join(this.#options.stateDir, "manifest.json"));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
    const manifest = JSON.parse(text) as Manifest;
    if (manifest.format !== "homed-tracker" || typeof manifest.files !== "object") {
      throw new TypeError(`${join(this.#options.stateDir, "manifest.json")} is not a tracker manifest`);
    }
    return manifest;
  }

  /** Where a tracked name lives on disk, and its root. */
  #locate(name: string): { root: TrackedRoot; file: string; inside: string } {
    for (const root of this.#options.roots) {
      if (root.kind === "file" && name === root.name) return { root, file: root.path, inside: "" };
      if (root.kind === "dir" && name.startsWith(`${root.name}/`)) {
        const inside = name.slice(root.name.length + 1);
        if (inside.split("/").includes("..")) break;
        return { root, file: join(root.path, inside), inside };
      }
    }
    throw new TypeError(`path: ${JSON.stringify(name)} is not in a tracked part (${this.#partNames()})`);
  }

  #partNames(): string {
    return this.#options.roots.map((root) => root.name).join(", ");
  }

  async #baseline(name: string, manifest: Manifest | undefined): Promise<Bytes | undefined> {
    const entry = manifest?.files[name];
    if (entry && "deleted" in entry) return undefined;
    if (entry) {
      const data = await Deno.readFile(join(this.#options.stateDir, "objects", entry.sha256));
      if (await sha256Hex(data) !== entry.sha256) {
        throw new Error(`tracker object of ${name} (${entry.sha256}) is damaged; commit again to re-record it`);
      }
      return { data, mode: entry.mode };
    }
    return await this.#lower(name);
  }

  /** The bytes of `name` in the overlay's lower layers, when its part is on an overlay mount. */
  async #lower(name: string): Promise<Bytes | undefined> {
    const { root, inside } = this.#locate(name);
    const mount = this.#overlay(root);
    if (!mount) return undefined;
    return root.kind === "dir"
      ? await lowerBytes(root.path, mount, inside)
      : await lowerBytes(dirname(root.path), mount, relative(dirname(root.path), root.path));
  }

  /** Every change, with the bytes on both sides (for diff and revert). */
  async #compare(): Promise<{
    manifest: Manifest | undefined;
    items: Array<TrackedChange & { current?: Bytes; baseline?: Bytes }>;
    modes: Record<string, string>;
  }> {
    const manifest = await this.#manifest();
    const modes: Record<string, string> = {};
    const items: Array<TrackedChange & { current?: Bytes; baseline?: Bytes }> = [];
    for (const root of this.#options.roots) {
      const mount = this.#overlay(root);
      modes[root.name] = mount ? `overlay (upper ${mount.upper})` : "manifest";
      const source = mount ? "overlay" : "manifest";
      const names = new Set<string>();
      const replaced: string[] = [];
      if (root.kind === "file") names.add(root.name);
      else if (mount) {
        for (const candidate of await overlayCandidates(root.path, mount)) {
          if (candidate.hint === "replaced") replaced.push(`${root.name}/${candidate.path}`);
          else names.add(`${root.name}/${candidate.path}`);
        }
      } else for (const path of await walkFiles(root.path)) names.add(`${root.name}/${path}`);
      for (const name of Object.keys(manifest?.files ?? {})) {
        if (name === root.name || name.startsWith(`${root.name}/`)) names.add(name);
      }
      for (const name of [...names].sort()) {
        const current = await readCurrent(this.#locate(name).file);
        const baseline = await this.#baseline(name, manifest);
        if (!current && !baseline) continue;
        if (current && baseline && same(current.data, baseline.data)) continue;
        items.push({
          path: name,
          change: !baseline ? "added" : !current ? "deleted" : "modified",
          ...(current ? { size: current.data.length, current } : {}),
          ...(baseline ? { baselineSize: baseline.data.length, baseline } : {}),
          source,
        });
      }
      for (const name of replaced) {
        if (items.some((item) => item.change === "deleted" && item.path.startsWith(`${name}/`))) {
          items.push({ path: name, change: "replaced", source });
        }
      }
    }
    return { manifest, items, modes };
  }

  /**
   * What changed since the last commit.
   *
   * @example
   * ```ts
   * declare const tracker: Tracker;
   * const { changes, committed } = await tracker.status();
   * ```
   */
  async status(): Promise<TrackerStatus> {
    const { manifest, items, modes } = await this.#compare();
    return {
      modes,
      committed: manifest?.committed,
      changes: items.map(({ current: _current, baseline: _baseline, ...change }) => change),
    };
  }

  #select<T extends { path: string }>(items: T[], paths: string[]): T[] {
    if (!paths.length) return items;
    for (const path of paths) this.#locateOrPart(path);
    return items.filter((item) => paths.some((path) => item.path === path || item.path.startsWith(`${path}/`)));
  }

  /** A path argument: a tracked file or folder name, or a whole part. */
  #locateOrPart(path: string): void {
    if (this.#options.roots.some((root) => root.name === path)) return;
    this.#locate(path);
  }

  /**
   * The unified diff of the changes (or of those under `paths`).
   *
   * @example
   * ```ts
   * declare const tracker: Tracker;
   * console.log(await tracker.diff(["knowledge/tea"]));
   * ```
   */
  async diff(paths: string[] = []): Promise<string> {
    const { items } = await this.#compare();
    const decoder = new TextDecoder("utf-8", { fatal: true });
    const text = (bytes: Bytes | undefined): string | undefined => {
      if (!bytes) return "";
      if (bytes.data.includes(0)) return undefined;
      try {
        return decoder.decode(bytes.data);
      } catch {
        return undefined;
      }
    };
    let out = "";
    for (const item of this.#select(items, paths)) {
      if (item.change === "replaced") {
        out += `# ${item.path}/: the folder replaced the deployed one (opaque); its old files are listed as deleted\n`;
        continue;
      }
      const before = text(item.baseline), after = text(item.current);
      out += before === undefined || after === undefined
        ? `--- a/${item.path}\n+++ b/${item.path}\nBinary files differ (${item.baselineSize ?? 0} → ${
          item.size ?? 0
        } bytes)\n`
        : unifiedDiff(item.path, before, after);
    }
    return out;
  }

  /**
   * Records the current state of the changes (or of those under `paths`) as the new baseline; resolves to how many.
   *
   * @example
   * ```ts
   * declare const tracker: Tracker;
   * await tracker.commit(); // 3
   * ```
   */
  async commit(paths: string[] = []): Promise<number> {
    const { manifest, items } = await this.#compare();
    const next: Manifest = {
      format: "homed-tracker",
      version: 1,
      committed: new Date(this.#options.now()).toISOString(),
      files: { ...manifest?.files },
    };
    const objects = join(this.#options.stateDir, "objects");
    await Deno.mkdir(objects, { recursive: true });
    const selected = this.#select(items, paths).filter((item) => item.change !== "replaced");
    for (const item of selected) {
      if (item.current) {
        const sha256 = await sha256Hex(item.current.data);
        await atomicWriteBytes(join(objects, sha256), item.current.data, { mode: 0o600 });
        next.files[item.path] = { sha256, size: item.current.data.length, mode: item.current.mode };
      } else if (await this.#lower(item.path)) {
        // Gone from what the lower layer holds: the deletion itself is what is committed.
        next.files[item.path] = { deleted: true };
      } else {
        delete next.files[item.path];
      }
    }
    await atomicWriteText(join(this.#options.stateDir, "manifest.json"), `${JSON.stringify(next, null, 1)}\n`);
    await this.#collectGarbage(next);
    return selected.length;
  }

  async #collectGarbage(manifest: Manifest): Promise<void> {
    const used = new Set(
      Object.values(manifest.files).flatMap((entry) => "sha256" in entry ? [entry.sha256] : []),
    );
    for await (const entry of Deno.readDir(join(this.#options.stateDir, "objects"))) {
      if (!used.has(entry.name)) await Deno.remove(join(this.#options.stateDir, "objects", entry.name));
    }
  }

  /**
   * Puts the changes (or those under `paths`) back to the baseline, byte for byte; added files are moved aside.
   *
   * @example
   * ```ts
   * declare const tracker: Tracker;
   * await tracker.revert(["knowledge/wrong-fact"]); // { reverted: 1, movedTo: "/var/lib/homed/tracker/reverted-…" }
   * ```
   */
  async revert(paths: string[] = []): Promise<{ reverted: number; movedTo: string | undefined }> {
    const { items } = await this.#compare();
    const stamp = new Date(this.#options.now()).toISOString().replace(/[:.]/g, "-");
    const aside = join(this.#options.stateDir, `reverted-${stamp}`);
    let moved = false;
    let reverted = 0;
    for (const item of this.#select(items, paths)) {
      if (item.change === "replaced") continue;
      const { root, file } = this.#locate(item.path);
      if (item.change === "added") {
        const target = join(aside, item.path);
        await Deno.mkdir(dirname(target), { recursive: true });
        await Deno.copyFile(file, target);
        await Deno.remove(file);
        moved = true;
      } else {
        const baseline = item.baseline!;
        if (root.kind === "file") {
          // The config and the persona are written in place: their folder may not be ours to write a temp file in.
          await Deno.writeFile(file, baseline.data, { mode: baseline.mode });
          await Deno.chmod(file, baseline.mode);
        } else {
          await Deno.mkdir(dirname(file), { recursive: true });
          await atomicWriteBytes(file, baseline.data, { mode: baseline.mode });
        }
      }
      reverted++;
    }
    return { reverted, movedTo: moved ? aside : undefined };
  }
}
