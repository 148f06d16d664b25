/**
 * `homed restore`: unpacks a backup into a staging folder in the data dir, checks it whole (the manifest first, every
 * member's path and kind against the part it belongs to, the total size, every checksum, the gzip trailer, every SQLite
 * database's integrity, the tracker manifest's entries), and only then swaps it in. Members stream to disk: nothing
 * holds a whole member. What was there before is moved to `data/.before-restore-<time>/`, never deleted; a foreign,
 * truncated, oversized or damaged archive is refused with the reason and changes nothing; when putting it in place
 * fails midway (a file that cannot be moved), everything moved so far is moved back.
 *
 * This file runs the steps in order; each is its own file: the size limit (`restore_limit.ts`), the reading pass
 * (`restore_unpack.ts`, with `member_checks.ts`), the checking pass (`restore_verify.ts`) and the swap
 * (`restore_apply.ts`, on `file_moves.ts`).
 *
 * @module
 */

import { join } from "node:path";
import type { LoadedConfig } from "../config/load.ts";
import { type HomePart, homeParts } from "../config/parts.ts";
import { PART_NAMES } from "./backup_layout.ts";
import { apply, checkHere } from "./restore_apply.ts";
import { restoreLimit } from "./restore_limit.ts";
import { unpack, type Unpacked } from "./restore_unpack.ts";
import { verify } from "./restore_verify.ts";
import { ArchiveError } from "./tar.ts";

export { ArchiveError } from "./tar.ts";
export { RESTORE_FLOOR_BYTES, RESTORE_SIZE_FACTOR, type RestoreLimit, restoreLimit } from "./restore_limit.ts";

/** What {@link restoreBackup} did. */
export interface RestoreSummary {
  files: number;
  /** When the backup was made (its manifest's `created`). */
  created: string;
  /** Where the replaced files went. */
  previous: string;
  /** Parts of the archive not restored, with why. */
  skipped: string[];
}

/** Options of {@link restoreBackup}. */
export interface RestoreOptions {
  loaded: LoadedConfig;
  /** The compressed archive. */
  input: ReadableStream<Uint8Array>;
  /** What to call the archive in messages. */
  label: string;
  now: () => number;
}

/**
 * Checks and restores the archive in `options.input` over the current data, knowledge, plugins, config and persona.
 * Throws {@link ArchiveError} (nothing changed) when the archive is not a sound homed backup, and an `Error` saying
 * what was put back when moving the files in place failed.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const file = await Deno.open("homed.tar.gz");
 * await restoreBackup({ loaded, input: file.readable, label: "homed.tar.gz", now: Date.now });
 * ```
 */
export async function restoreBackup(options: RestoreOptions): Promise<RestoreSummary> {
  const { loaded, label } = options;
  const dataDir = loaded.config.daemon.data_dir;
  const roots = homeParts(loaded);
  // Rights for every part first, so a missing one stops the restore before anything is read or moved.
  for (const root of roots) {
    if (Deno.permissions.querySync({ name: "write", path: root.path }).state !== "granted") {
      await options.input.cancel().catch(() => {});
      throw new Error(`no write access to ${root.path} (${root.name}); run with \`homed flags --mode restore\``);
    }
  }
  const limit = await restoreLimit(loaded);
  const stamp = new Date(options.now()).toISOString().replace(/[:.]/g, "-");
  const staging = join(dataDir, `.restore-${stamp}`);
  const previous = join(dataDir, `.before-restore-${stamp}`);
  await Deno.mkdir(staging, { recursive: true });
  try {
    let unpacked: Unpacked;
    try {
      unpacked = await unpack(options, staging, limit, roots);
      verify(unpacked, staging, label);
    } catch (error) {
      if (error instanceof ArchiveError) {
        throw new ArchiveError(`${error.message}; nothing was restored`, { cause: error.cause ?? error });
      }
      throw error;
    }
    const skipped: string[] = [];
    const applied: HomePart[] = [];
    for (const root of roots) {
      if (unpacked.manifest.roots.includes(root.name)) applied.push(root);
    }
    for (const name of unpacked.manifest.roots) {
      if ((PART_NAMES as readonly string[]).includes(name) && !roots.some((root) => root.name === name)) {
        skipped.push(`${name}: this homed runs on its embedded defaults; restore with --config to place it`);
      }
    }
    await checkHere(applied);
    await apply(applied, roots, unpacked, staging, previous, label);
    return { files: unpacked.staged.size, created: unpacked.manifest.created, previous, skipped };
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
}
