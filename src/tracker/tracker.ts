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
 * This class runs the operations; their parts are files of their own: the parts and their names
 * (`tracked_parts.ts`), the state folder (`tracker_state.ts`), the look at the tree (`tracker_compare.ts`), the diff
 * (`tracker_diff.ts`) and the revert (`tracker_revert.ts`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import { sha256Hex } from "../text/sha256_hex.ts";
import type { TrackerManifest } from "./manifest.ts";
import type { OverlayMount } from "./overlay.ts";
import type { TrackedChange } from "./tracked_change.ts";
import { TrackedParts, type TrackedRoot } from "./tracked_parts.ts";
import { compareTree, type Comparison } from "./tracker_compare.ts";
import { renderDiff } from "./tracker_diff.ts";
import { checkRevertable, revertSelected } from "./tracker_revert.ts";
import { TrackerState } from "./tracker_state.ts";
import { writeEntryFile } from "./tree_access.ts";

export type { TrackedChange } from "./tracked_change.ts";
export type { TrackedRoot } from "./tracked_parts.ts";
export { UntrackedPath } from "./untracked_path.ts";

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
  #parts: TrackedParts;
  #state: TrackerState;
  #warnings: string[] = [];

  constructor(options: TrackerOptions) {
    this.#options = options;
    this.#parts = new TrackedParts(options.roots, options.mounts);
    this.#state = new TrackerState(options.stateDir, options.roots);
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
   * Every change, with what is on both sides (for diff, commit and revert), and the warnings of this look (kept for
   * {@link Tracker.warnings} and logged); with the count of hard links inside it read by, for a re-read.
   */
  async #compare(): Promise<Comparison> {
    const comparison = await compareTree(this.#parts, this.#state);
    this.#warnings = comparison.warnings;
    this.#log(comparison.warnings);
    return comparison;
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
    return renderDiff(this.#parts.select(items, paths));
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
    const state = await this.#state.madeFolder();
    const selected = this.#parts.select(items, paths).filter((item) =>
      item.change !== "replaced" && item.change !== "hardlinked"
    );
    for (const item of selected) {
      if (item.current?.kind === "file") {
        const sha256 = await sha256Hex(item.current.data);
        await writeEntryFile(state, `objects/${sha256}`, item.current.data, 0o600);
        next.files[item.path] = { sha256, size: item.current.data.length, mode: item.current.mode };
      } else if (item.current?.kind === "link") {
        next.files[item.path] = { link: item.current.target };
      } else if (await this.#parts.lower(item.path)) {
        // Gone from what the lower layer holds: the deletion itself is what is committed.
        next.files[item.path] = { deleted: true };
      } else {
        delete next.files[item.path];
      }
    }
    await this.#state.writeRecord("manifest.json", next);
    await this.#state.collectGarbage(state, next);
    return selected.length;
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
    const selected = this.#parts.select(items, paths).filter((item) => item.change !== "replaced");
    await checkRevertable(items, selected, this.#parts, this.#state);
    const stamp = new Date(this.#options.now()).toISOString().replace(/[:.]/g, "-");
    const aside = `reverted-${stamp}`;
    const { reverted, moved } = await revertSelected(selected, aside, this.#parts, this.#state, linksInside);
    return { reverted, movedTo: moved ? join(this.#options.stateDir, aside) : undefined };
  }
}
