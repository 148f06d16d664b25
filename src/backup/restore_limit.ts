/**
 * How much a restore may unpack: `backup.max_restore_bytes`, or without it a multiple of what the parts hold now. An
 * archive is a stream from anywhere; this bound is what keeps a small gzip bomb from filling the disk before its
 * checksums could refuse it.
 *
 * @module
 */

import { join, resolve } from "node:path";
import type { LoadedConfig } from "../config/load.ts";
import { type HomePart, homeParts } from "../config/parts.ts";
import { BACKUP_OWN } from "./backup_layout.ts";

/** Without `backup.max_restore_bytes`, a restore may unpack this many times what the parts hold now… */
export const RESTORE_SIZE_FACTOR = 4;
/** …and at least this much (1 GiB): a new machine holds nothing yet. */
export const RESTORE_FLOOR_BYTES = 1024 ** 3;

/** How big an archive a restore accepts, unpacked, and where that number comes from. */
export interface RestoreLimit {
  bytes: number;
  /** For the refusal: the key, or how the default was computed. */
  why: string;
}

/**
 * The total a restore may unpack: `backup.max_restore_bytes`, or without it {@link RESTORE_SIZE_FACTOR} × what the
 * parts hold now (the files a backup would read, and the indexes), at least {@link RESTORE_FLOOR_BYTES}.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const limit: RestoreLimit = await restoreLimit(loaded);
 * limit.bytes; // 1073741824 on a new machine without backup.max_restore_bytes
 * ```
 */
export async function restoreLimit(loaded: LoadedConfig): Promise<RestoreLimit> {
  const configured = loaded.config.backup.max_restore_bytes;
  if (configured !== null) {
    return { bytes: configured, why: `backup.max_restore_bytes: ${configured}; raise it to restore this archive` };
  }
  const held = await heldBytes(homeParts(loaded));
  return {
    bytes: Math.max(RESTORE_SIZE_FACTOR * held, RESTORE_FLOOR_BYTES),
    why: `backup.max_restore_bytes is not set: ${RESTORE_SIZE_FACTOR} × the ${held} bytes the parts hold now, and ` +
      "at least 1 GiB; set it to restore this archive",
  };
}

/** Bytes of the regular files in `roots` (each counted once, links not followed, backups and staging left out). */
async function heldBytes(roots: HomePart[]): Promise<number> {
  const paths = roots.map((root) => resolve(root.path));
  let total = 0;
  const walk = async (dir: string, top: boolean): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (paths.includes(resolve(path)) || (top && BACKUP_OWN.test(entry.name))) continue;
      if (entry.isDirectory) await walk(path, false);
      else if (entry.isFile) total += (await Deno.lstat(path).catch(() => undefined))?.size ?? 0;
    }
  };
  for (const root of roots) {
    const info = await Deno.stat(root.path).catch(() => undefined);
    if (info?.isFile) total += info.size;
    else if (info?.isDirectory) await walk(root.path, root.name === "data");
  }
  return total;
}
