/**
 * The tracker's own folder, `<data dir>/tracker/`: the last commit's `manifest.json` (read and checked on every look),
 * the committed bytes in `objects/<sha256>` (read back and checked against their sum), a revert's records, and the
 * removal of objects no commit names any more. The folder itself must not be a link: every access to it goes through
 * `tree_access.ts` with the folder as its base.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { sha256Hex } from "../text/sha256_hex.ts";
import { type ManifestFile, parseTrackerManifest, type TrackerManifest, type TrackerPart } from "./manifest.ts";
import { type Entry, listFolder, lstatEntry, readEntry, removeEntry, writeEntryFile } from "./tree_access.ts";

/**
 * The state folder of one tracker.
 *
 * @example
 * ```ts
 * const state = new TrackerState("/var/lib/homed/tracker", [{ name: "knowledge", kind: "dir" }]);
 * const warnings: string[] = [];
 * (await state.manifest(warnings))?.committed; // "2026-01-01T00:00:00.000Z", or undefined before the first commit
 * ```
 */
export class TrackerState {
  /** `<data dir>/tracker`. */
  readonly dir: string;
  #parts: readonly TrackerPart[];

  /** `parts`: the tracked parts, which the manifest's entries are checked against. */
  constructor(dir: string, parts: readonly TrackerPart[]) {
    this.dir = dir;
    this.#parts = parts;
  }

  /** The state folder, as a base for `tree_access.ts`: it must not itself be a link. */
  async folder(): Promise<string> {
    const stateDir = this.dir;
    if ((await lstatEntry(dirname(stateDir), basename(stateDir)))?.isSymlink) {
      throw new Error(`${stateDir} is a symbolic link; the tracker keeps its state only in a real folder`);
    }
    return stateDir;
  }

  /** The state folder, made first when missing: for a write into it. */
  async madeFolder(): Promise<string> {
    await Deno.mkdir(this.dir, { recursive: true });
    return await this.folder();
  }

  /** Writes `value` as the JSON file `name` of the state folder (the manifest, a revert's records). */
  async writeRecord(name: string, value: unknown): Promise<void> {
    const data = new TextEncoder().encode(`${JSON.stringify(value, null, 1)}\n`);
    await writeEntryFile(await this.madeFolder(), name, data, 0o600);
  }

  /** The last commit's manifest, its bad entries left out and named in `warnings`. */
  async manifest(warnings: string[]): Promise<TrackerManifest | undefined> {
    const state = await this.folder();
    const found = await readEntry(state, "manifest.json");
    if (!found) return undefined;
    const path = join(state, "manifest.json");
    if (found.kind === "link") throw new Error(`${path} is a symbolic link; the tracker does not follow it`);
    if (found.kind !== "file") throw new Error(`${path} is not a regular file`);
    let parsed: ReturnType<typeof parseTrackerManifest>;
    try {
      parsed = parseTrackerManifest(new TextDecoder().decode(found.data), this.#parts);
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

  /** The committed bytes of `name` (its manifest entry `entry`), checked against their sum. */
  async committed(name: string, entry: ManifestFile): Promise<Entry> {
    // The manifest's check made sure the sum is 64 hex digits, so it names a file in objects/.
    const object = await readEntry(await this.folder(), `objects/${entry.sha256}`);
    if (object?.kind !== "file" || await sha256Hex(object.data) !== entry.sha256) {
      throw new Error(`tracker object of ${name} (${entry.sha256}) is damaged; commit again to re-record it`);
    }
    return { kind: "file", data: object.data, mode: entry.mode };
  }

  /** Removes the objects in `state` (the folder) that `manifest` does not name. */
  async collectGarbage(state: string, manifest: TrackerManifest): Promise<void> {
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
}
