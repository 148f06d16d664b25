/**
 * The change tracker (seed §10, "overlayfs 追踪"): what changed in the deployed tree — knowledge the butler learned,
 * plugins it got, config and persona edits — since the last commit, and commit or revert of it. The memory data dir
 * is left out (it changes every minute by design).
 *
 * Each part is read one of two ways. On an overlay mount the upper layer names the candidates (new and copied-up
 * files, whiteouts, opaque folders) and the lower layers are the baseline; elsewhere every file is hashed and compared
 * with a content-hash manifest. Commits live in `<data dir>/tracker/`: `manifest.json` (path → sha256, size, mode, or
 * a recorded deletion, or a link's target) and `objects/<sha256>`, the committed bytes, so a revert restores them
 * exactly. Reverted additions are moved to `tracker/reverted-<time>/`, never deleted.
 *
 * Symbolic links are never followed (`tree_access.ts`): a link in a tracked tree is a change of its own, shown as
 * "link → target" — added, removed, retargeted, or standing where a file was — and whatever lies behind it is not in
 * the tree (a committed folder replaced by a link shows its files as deleted). A revert removes such a link itself
 * (its target is left alone; the link is recorded in `reverted-<time>/links.json`) and puts the committed entries back
 * in a real folder; it refuses, before writing anything, to write behind a link it is not told to remove, and to
 * recreate a committed link (homed creates no links).
 *
 * The manifest is checked on every read (`manifest.ts`): an entry whose name could leave its part (`..`, absolute, an
 * empty or `.` segment, a NUL), lies in no tracked part, or has the wrong shape is skipped with a warning naming it
 * and why, and the next commit drops it; the good entries keep working. A file with more hard links than the tracked
 * parts hold (a link from elsewhere) is never read — not compared, diffed, hashed or committed — but listed as
 * `hardlinked` with a warning; a revert replaces its name with a new file (or removes an added name), never writes
 * into it. Warnings come with each result (`TrackerStatus.warnings`, {@link Tracker.warnings}) and go to the logger,
 * each once.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { basename, dirname, join } from "node:path";
import { escapeForTerminal } from "../text/terminal_text.ts";
import { sha256Hex } from "../text/sha256_hex.ts";
import { unifiedDiff } from "./line_diff.ts";
import { lowerEntry, overlayCandidates, type OverlayMount, overlayOf } from "./overlay.ts";
import { compareText } from "../text/compare_text.ts";
import { parseTrackerManifest, type TrackerManifest } from "./manifest.ts";
import {
  type Entry,
  linkOnTheWay,
  listFolder,
  lstatEntry,
  readEntry,
  removeEntry,
  replaceFile,
  writeEntryFile,
  writeInPlace,
} from "./tree_access.ts";

/** A path that is in none of the tracked parts: the asker named the wrong thing (the CLI answers with exit code 2). */
export class UntrackedPath extends TypeError {
  /**
   * @example
   * ```ts
   * throw new UntrackedPath('path: "etc/passwd" is not in a tracked part (knowledge, plugins)');
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "UntrackedPath";
  }
}

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
  /**
   * `retargeted`: a link that points elsewhere than at the last commit; a link where a file was is `modified`.
   * `hardlinked`: a file with hard links outside the tracked parts, not read (so whether it changed is not known).
   */
  change: "added" | "modified" | "deleted" | "replaced" | "retargeted" | "hardlinked";
  /** Bytes now (absent for a deletion, a link, a replaced folder or a file not read). */
  size?: number;
  /** Bytes at the last commit or in the lower layer. */
  baselineSize?: number;
  /** The target of the symbolic link there now (never followed). */
  link?: string;
  /** The target of the link at the last commit or in the lower layer. */
  baselineLink?: string;
  /** For `hardlinked`: how many hard links the file has… */
  hardLinks?: number;
  /** …and how many of them are in the tracked parts. */
  hardLinksInside?: number;
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
  /** What was skipped and why: bad manifest entries, files not read (sentences, each once). */
  warnings: string[];
}

/** Options of {@link Tracker}. */
export interface TrackerOptions {
  roots: TrackedRoot[];
  /** `<data dir>/tracker`. */
  stateDir: string;
  /** The overlay mounts the tree lives on (`tracker.overlay`), or none. */
  mounts: OverlayMount[];
  now: () => number;
  /** Where warnings also go, each once per logger (`log("tracker")` for the daemon); none: results only. */
  logger?: Logger;
}

/** The warnings each logger was already given. */
const logged = new WeakMap<Logger, Set<string>>();

/** A change with what is on both sides, for diff, commit and revert. */
interface Item extends TrackedChange {
  current?: Entry;
  baseline?: Entry;
  /** Where the baseline came from. */
  origin?: "commit" | "lower";
}

function sameEntry(a: Entry, b: Entry): boolean {
  // A file not read is never the same as anything.
  if (a.kind !== "file" || b.kind !== "file") return a.kind === "link" && b.kind === "link" && a.target === b.target;
  if (a.data.length !== b.data.length) return false;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) return false;
  return true;
}

/** Files and links under a folder, relative and `/`-separated; temporary files of atomic writes are not content. */
async function walkEntries(root: string, path = ""): Promise<string[]> {
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

/** `link → target` or `12 bytes`, for messages and the diff. */
function described(entry: Entry): string {
  if (entry.kind === "hardlinked") return `a file with ${entry.links} hard links, not read`;
  return entry.kind === "link" ? `link → ${entry.target}` : `${entry.data.length} bytes`;
}

/** `lstat`'s key of one file. */
function fileKey(info: Deno.FileInfo): string {
  return `${info.dev}:${info.ino}`;
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
  #warnings: string[] = [];

  constructor(options: TrackerOptions) {
    this.#options = options;
  }

  #overlay(root: TrackedRoot): OverlayMount | undefined {
    return overlayOf(root.kind === "dir" ? root.path : dirname(root.path), this.#options.mounts);
  }

  /** The state folder, as a base for `tree_access.ts`: it must not itself be a link. */
  async #state(): Promise<string> {
    const stateDir = this.#options.stateDir;
    if ((await lstatEntry(dirname(stateDir), basename(stateDir)))?.isSymlink) {
      throw new Error(`${stateDir} is a symbolic link; the tracker keeps its state only in a real folder`);
    }
    return stateDir;
  }

  /** The state folder, made first when missing: for a write into it. */
  async #madeState(): Promise<string> {
    await Deno.mkdir(this.#options.stateDir, { recursive: true });
    return await this.#state();
  }

  /** Writes `value` as the JSON file `name` of the state folder (the manifest, a revert's records). */
  async #writeRecord(name: string, value: unknown): Promise<void> {
    const data = new TextEncoder().encode(`${JSON.stringify(value, null, 1)}\n`);
    await writeEntryFile(await this.#madeState(), name, data, 0o600);
  }

  /** The last commit's manifest, its bad entries left out and named in `warnings`. */
  async #manifest(warnings: string[]): Promise<TrackerManifest | undefined> {
    const state = await this.#state();
    const found = await readEntry(state, "manifest.json");
    if (!found) return undefined;
    const path = join(state, "manifest.json");
    if (found.kind === "link") throw new Error(`${path} is a symbolic link; the tracker does not follow it`);
    if (found.kind !== "file") throw new Error(`${path} is not a regular file`);
    let parsed: ReturnType<typeof parseTrackerManifest>;
    try {
      parsed = parseTrackerManifest(new TextDecoder().decode(found.data), this.#options.roots);
    } catch (error) {
      throw new Error(`${path} is not a tracker manifest: ${(error as Error).message}`, { cause: error });
    }
    for (const { entry, reason } of parsed.skipped) {
      warnings.push(
        `Skipping in the tracker manifest ${path}: entry ${JSON.stringify(entry)} ${reason}; the next commit drops it`,
      );
    }
    return parsed.manifest;
  }

  /** Hands each warning to the logger once. */
  #log(warnings: string[]): void {
    const logger = this.#options.logger;
    if (!logger) return;
    let seen = logged.get(logger);
    if (!seen) logged.set(logger, seen = new Set());
    for (const warning of warnings) {
      if (seen.has(warning)) continue;
      seen.add(warning);
      logger.warning("Tracker: {warning}", { warning });
    }
  }

  /**
   * How many of a file's hard links the tracked parts hold, for the files among `names` with more than one: counted
   * over every part whole (the names compared may be only an overlay's candidates). A file not counted holds one.
   */
  async #linksInside(names: string[]): Promise<(info: Deno.FileInfo) => number> {
    const linked = new Set<string>();
    for (const name of names) {
      const { base, inside } = this.#locate(name);
      const info = await lstatEntry(base, inside);
      if (info?.isFile && (info.nlink ?? 1) > 1) linked.add(fileKey(info));
    }
    const counts = new Map<string, number>();
    if (linked.size) {
      for (const root of this.#options.roots) {
        const all = root.kind === "file"
          ? [root.name]
          : (await walkEntries(root.path)).map((path) => `${root.name}/${path}`);
        for (const name of all) {
          const { base, inside } = this.#locate(name);
          const info = await lstatEntry(base, inside);
          if (info?.isFile && linked.has(fileKey(info))) {
            counts.set(fileKey(info), (counts.get(fileKey(info)) ?? 0) + 1);
          }
        }
      }
    }
    return (info) => counts.get(fileKey(info)) ?? 1;
  }

  /** Where a tracked name lives: its root, and the base folder and name inside it that `tree_access.ts` takes. */
  #locate(name: string): { root: TrackedRoot; base: string; inside: string } {
    for (const root of this.#options.roots) {
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
    return this.#options.roots.map((root) => root.name).join(", ");
  }

  async #baseline(
    name: string,
    manifest: TrackerManifest | undefined,
  ): Promise<{ entry?: Entry; origin?: "commit" | "lower" }> {
    // Own entries only: a name like "knowledge/constructor" is not the object's prototype.
    const entry = manifest && Object.hasOwn(manifest.files, name) ? manifest.files[name] : undefined;
    if (entry && "deleted" in entry) return {};
    if (entry && "link" in entry) return { entry: { kind: "link", target: entry.link }, origin: "commit" };
    if (entry) {
      // The manifest's check made sure the sum is 64 hex digits, so it names a file in objects/.
      const object = await readEntry(await this.#state(), `objects/${entry.sha256}`);
      if (object?.kind !== "file" || await sha256Hex(object.data) !== entry.sha256) {
        throw new Error(`tracker object of ${name} (${entry.sha256}) is damaged; commit again to re-record it`);
      }
      return { entry: { kind: "file", data: object.data, mode: entry.mode }, origin: "commit" };
    }
    const lower = await this.#lower(name);
    return lower ? { entry: lower, origin: "lower" } : {};
  }

  /** What `name` holds in the overlay's lower layers, when its part is on an overlay mount. */
  async #lower(name: string): Promise<Entry | undefined> {
    const { root, base, inside } = this.#locate(name);
    const mount = this.#overlay(root);
    return mount ? await lowerEntry(base, mount, inside) : undefined;
  }

  /**
   * Every change, with what is on both sides (for diff, commit and revert), and the warnings of this look; with the
   * count of hard links inside it read by, for a re-read.
   */
  async #compare(): Promise<{
    manifest: TrackerManifest | undefined;
    items: Item[];
    modes: Record<string, string>;
    linksInside: (info: Deno.FileInfo) => number;
  }> {
    const warnings: string[] = [];
    const manifest = await this.#manifest(warnings);
    const modes: Record<string, string> = {};
    const items: Item[] = [];
    const parts: Array<{ source: "overlay" | "manifest"; names: string[]; replaced: string[] }> = [];
    for (const root of this.#options.roots) {
      const mount = this.#overlay(root);
      modes[root.name] = mount ? `overlay (upper ${mount.upper})` : "manifest";
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
      parts.push({ source: mount ? "overlay" : "manifest", names: [...names].sort(), replaced });
    }
    const linksInside = await this.#linksInside(parts.flatMap((part) => part.names));
    for (const { source, names, replaced } of parts) {
      for (const name of names) {
        const { base, inside } = this.#locate(name);
        const current = await readEntry(base, inside, { linksInside });
        const { entry: baseline, origin } = await this.#baseline(name, manifest);
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
        items.push({
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
        });
      }
      for (const name of replaced) {
        if (items.some((item) => item.change === "deleted" && item.path.startsWith(`${name}/`))) {
          items.push({ path: name, change: "replaced", source });
        }
      }
    }
    this.#warnings = warnings;
    this.#log(warnings);
    return { manifest, items, modes, linksInside };
  }

  /**
   * The warnings of the last status, diff, commit or revert: manifest entries skipped, files not read (each once).
   *
   * @example
   * ```ts
   * declare const tracker: Tracker;
   * await tracker.commit();
   * for (const warning of tracker.warnings) console.error(warning);
   * ```
   */
  get warnings(): string[] {
    return [...this.#warnings];
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
      changes: items.map(({ current: _current, baseline: _baseline, origin: _origin, ...change }) => change),
      warnings: this.warnings,
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
   * The unified diff of the changes (or of those under `paths`), for a terminal: names and lines are shown with
   * control characters, line breaks and bidi overrides escaped (`escapeForTerminal`); a link is one `#` line naming
   * its target, and the file it replaced or that replaced it is diffed against nothing; a file with hard links
   * outside is one `#` line, not read.
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
    for (const item of this.#select(items, paths)) {
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
        const note = !baseline
          ? `new symbolic link (${described(current!)}); the tracker does not follow links`
          : !current
          ? `symbolic link removed (was ${described(baseline)})`
          : current.kind === "link" && baseline.kind === "link"
          ? `symbolic link retargeted (${described(current)}, was ${described(baseline)})`
          : current.kind === "link"
          ? `a file became a symbolic link (${described(current)})`
          : `a symbolic link became a file (was ${described(baseline)})`;
        out += `# ${name}: ${escapeForTerminal(note)}\n`;
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

  /**
   * Records the current state of the changes (or of those under `paths`) as the new baseline; resolves to how many.
   * A link is recorded as its target, never read through; a file with hard links outside is left as it was recorded
   * (see {@link Tracker.warnings}); bad manifest entries are dropped.
   *
   * @example
   * ```ts
   * declare const tracker: Tracker;
   * await tracker.commit(); // 3
   * ```
   */
  async commit(paths: string[] = []): Promise<number> {
    const { manifest, items } = await this.#compare();
    const next: TrackerManifest = {
      format: "homed-tracker",
      version: 1,
      committed: new Date(this.#options.now()).toISOString(),
      files: { ...manifest?.files },
    };
    const state = await this.#madeState();
    const selected = this.#select(items, paths).filter((item) =>
      item.change !== "replaced" && item.change !== "hardlinked"
    );
    for (const item of selected) {
      if (item.current?.kind === "file") {
        const sha256 = await sha256Hex(item.current.data);
        await writeEntryFile(state, `objects/${sha256}`, item.current.data, 0o600);
        next.files[item.path] = { sha256, size: item.current.data.length, mode: item.current.mode };
      } else if (item.current?.kind === "link") {
        next.files[item.path] = { link: item.current.target };
      } else if (await this.#lower(item.path)) {
        // Gone from what the lower layer holds: the deletion itself is what is committed.
        next.files[item.path] = { deleted: true };
      } else {
        delete next.files[item.path];
      }
    }
    await this.#writeRecord("manifest.json", next);
    await this.#collectGarbage(state, next);
    return selected.length;
  }

  async #collectGarbage(state: string, manifest: TrackerManifest): Promise<void> {
    const used = new Set(
      Object.values(manifest.files).flatMap((entry) => "sha256" in entry ? [entry.sha256] : []),
    );
    for (const entry of await listFolder(state, "objects") ?? []) {
      if (used.has(entry.name)) continue;
      const info = await lstatEntry(state, `objects/${entry.name}`);
      if (info?.isFile) await removeEntry(state, `objects/${entry.name}`, { kind: "file" });
      else if (info?.isSymlink) {
        const target = await Deno.readLink(join(state, "objects", entry.name));
        await removeEntry(state, `objects/${entry.name}`, { kind: "link", target });
      }
    }
  }

  /**
   * Refuses, before anything is written, a revert that would have to write behind a link it does not remove, recreate
   * a link, or replace a multiply-linked single file from another file system.
   */
  async #checkRevertable(items: Item[], selected: Item[]): Promise<void> {
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
      const { root, base, inside } = this.#locate(item.path);
      if (root.kind === "file" && item.baseline?.kind === "file") await this.#checkReplaceable(item, base, inside);
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
  async #checkReplaceable(item: Item, base: string, inside: string): Promise<void> {
    const info = await lstatEntry(base, inside);
    if (!info?.isFile || (info.nlink ?? 1) <= 1) return;
    const state = await this.#madeState();
    if ((await lstatEntry(dirname(state), basename(state)))?.dev === info.dev) return;
    throw new Error(
      `Not reverting ${item.path}: ${join(base, inside)} has ${info.nlink} hard links, so the tracker does not write ` +
        "into it in place (the file at its other links would change too), and the new file that replaces it has to " +
        `be made on its file system, where the tracker's state (${state}) is not; remove the other links or replace ` +
        "it by a copy by hand first",
    );
  }

  /**
   * Puts the changes (or those under `paths`) back to the baseline, byte for byte; added files are moved aside. A
   * symbolic link that is a change is removed — the link itself, never what it points to — and recorded in
   * `links.json` of the folder set aside; what it stood in place of comes back as a real file or folder. Refused
   * with a message naming the path, before anything is written, when a path would be written behind a link that is not
   * removed too, or when the baseline is a link (homed creates no links). A file with hard links outside is never
   * written into: its name gets a new file with the baseline, renamed over it, or, added since, is removed (the file
   * stays at its other links; recorded in `hardlinks.json` of the folder set aside).
   *
   * @example
   * ```ts
   * declare const tracker: Tracker;
   * await tracker.revert(["knowledge/wrong-fact"]); // { reverted: 1, movedTo: "/var/lib/homed/tracker/reverted-…" }
   * ```
   */
  async revert(paths: string[] = []): Promise<{ reverted: number; movedTo: string | undefined }> {
    const { items, linksInside } = await this.#compare();
    const selected = this.#select(items, paths).filter((item) => item.change !== "replaced");
    await this.#checkRevertable(items, selected);
    const stamp = new Date(this.#options.now()).toISOString().replace(/[:.]/g, "-");
    const aside = `reverted-${stamp}`;
    let moved = false;
    let reverted = 0;
    // Links first, outermost first: the folders they stood for are then restored as real folders.
    const links: Record<string, string> = {};
    for (const item of selected) {
      if (item.current?.kind !== "link") continue;
      const { base, inside } = this.#locate(item.path);
      await removeEntry(base, inside, item.current);
      links[item.path] = item.current.target;
      if (!item.baseline) reverted++;
    }
    if (Object.keys(links).length) {
      await this.#writeRecord(`${aside}/links.json`, links);
      moved = true;
    }
    const hardlinks: Record<string, { path: string; device: number; inode: number | null; hardLinks: number }> = {};
    for (const item of selected) {
      const { root, base, inside } = this.#locate(item.path);
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
        await writeEntryFile(await this.#madeState(), `${aside}/${item.path}`, now.data, now.mode);
        await removeEntry(base, inside, { kind: "file" });
        moved = true;
      } else if (item.baseline.kind === "file") {
        const { data, mode } = item.baseline;
        // The config and the persona are written in place: their folder may not be ours to write a temp file in.
        // One with other hard links is replaced by a new file instead (made in the state folder: checked before).
        if (root.kind === "file") {
          const info = await lstatEntry(base, inside);
          if (info?.isFile && (info.nlink ?? 1) > 1) await replaceFile(base, inside, data, mode, await this.#state());
          else await writeInPlace(base, inside, data, mode);
        } else await writeEntryFile(base, inside, data, mode);
      }
      reverted++;
    }
    if (Object.keys(hardlinks).length) {
      await this.#writeRecord(`${aside}/hardlinks.json`, hardlinks);
      moved = true;
    }
    return { reverted, movedTo: moved ? join(this.#options.stateDir, aside) : undefined };
  }
}
