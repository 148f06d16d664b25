/**
 * What a backup holds and where each part lives on this machine: the data dir, knowledge, plugins, the config file and
 * the persona, under fixed names in the archive so a backup restores into another layout.
 *
 * @module
 */

import type { LoadedConfig } from "../config/load.ts";

/** The archive's first member: says what the archive is. */
export const MANIFEST = "homed-backup.json";
/** The archive's last member: `sha256  path` lines of every file. */
export const CHECKSUMS = "homed-backup.sha256";
/** The `format` a manifest must name. */
export const BACKUP_FORMAT = "homed-backup";
/** The archive layout version this homed writes and reads. */
export const BACKUP_VERSION = 1;

/** Where one part of the archive lives here. */
export interface BackupRoot {
  /** The name in the archive (`data`, `knowledge`, `plugins`, `config/homed.yaml`, `config/personal.md`). */
  name: string;
  /** The path on this machine. */
  path: string;
  /** A folder, or a single file. */
  kind: "dir" | "file";
}

/** Folders of the data dir the butler's writes go to that come back by themselves (derived indexes) or are ours. */
const SKIPPED_DATA = [/^vector(\/|$)/, /^memory\/(documents|graph)-index(\/|$)/];

/**
 * Entries of the data dir that belong to backup and restore themselves — the backups, the staging of one in progress,
 * what an earlier restore replaced: never archived, and left in place by a restore.
 */
export const BACKUP_OWN = /^(backups|\.(backup|restore|before-restore)-)/;

/** Every part an archive may hold, by its name there. */
export const PART_NAMES = ["data", "knowledge", "plugins", "config/homed.yaml", "config/personal.md"] as const;
/** Files that are transient: SQLite's side files (the online backup carries their content), pid and temp files. */
const SKIPPED_FILES = /(-wal|-shm|-journal|\.tmp|\.partial)$|^homed\.pid$/;

/**
 * Whether `relative` (inside the data dir) is left out of a backup: indexes rebuilt from the store on start, backups
 * themselves, staging folders, and transient files.
 *
 * @example
 * ```ts
 * skippedInData("vector/knowledge/index.hvs"); // true
 * skippedInData(".before-restore-2026-11-30T12-00-00-000Z/data/routes.json"); // true
 * skippedInData("memory/memory.db"); // false
 * ```
 */
export function skippedInData(relative: string): boolean {
  const base = relative.split("/").at(-1) ?? relative;
  return BACKUP_OWN.test(relative) || SKIPPED_DATA.some((pattern) => pattern.test(relative)) ||
    SKIPPED_FILES.test(base);
}

/**
 * The parts of a backup for `loaded`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * backupRoots(loaded).map((root) => root.name);
 * // ["data", "knowledge", "plugins", "config/homed.yaml", "config/personal.md"] (no config/homed.yaml when
 * // homed runs on the embedded defaults)
 * ```
 */
export function backupRoots(loaded: LoadedConfig): BackupRoot[] {
  const { config } = loaded;
  return [
    { name: "data", path: config.daemon.data_dir, kind: "dir" },
    { name: "knowledge", path: config.paths.knowledge, kind: "dir" },
    { name: "plugins", path: config.paths.plugins, kind: "dir" },
    ...(loaded.location.path ? [{ name: "config/homed.yaml", path: loaded.location.path, kind: "file" as const }] : []),
    { name: "config/personal.md", path: config.paths.personal, kind: "file" },
  ];
}
