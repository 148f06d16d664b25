/**
 * One automatic backup, taken while homed runs: the archive `homed backup` writes (SQLite through its online backup,
 * so turns go on), written to `homed-<time>.tar.gz.partial` in `backup.dir`, fsync'd, read back and checked member by
 * member (`verify_archive.ts`), and only then renamed to `homed-<time>.tar.gz` — an archive under its real name has
 * verified. The list of those archives, `homed-backups.json` beside them, is what retention (`retention.ts`) prunes
 * and what `homed restore --latest` reads; archives `homed backup` wrote into the same folder are not on it and are
 * never deleted.
 *
 * @module
 */

import { join } from "node:path";
import type { LoadedConfig } from "../config/load.ts";
import { atomicWriteText } from "../fs/atomic_write.ts";
import { createBackup } from "./backup.ts";
import { keptArchives } from "./retention.ts";
import { verifyArchive } from "./verify_archive.ts";

/** The list of verified automatic backups, in `backup.dir`. */
export const BACKUP_LIST = "homed-backups.json";

/** One verified automatic backup, as {@link BACKUP_LIST} holds it. */
export interface BackupRecord {
  /** Its name in `backup.dir`. */
  file: string;
  /** When it was taken (ISO time). */
  at: string;
  /** Its size on disk. */
  bytes: number;
  /** Files in it. */
  files: number;
  /** Read back and checked member by member after writing. */
  verified: boolean;
}

/** What {@link takeBackup} did. */
export interface BackupRun {
  record: BackupRecord;
  /** Archives retention deleted. */
  deleted: string[];
  /** Every archive on the list now, newest first. */
  kept: BackupRecord[];
  /** Files the backup left out, with why. */
  skipped: string[];
}

/**
 * The archive name for a backup taken at `ms`: `homed-2026-12-01T03-30-00-000Z.tar.gz` (an ISO time with `-` for
 * `:` and `.`, which tar and shells read as names).
 *
 * @example
 * ```ts
 * archiveName(Date.UTC(2026, 11, 1, 3, 30)); // "homed-2026-12-01T03-30-00-000Z.tar.gz"
 * ```
 */
export function archiveName(ms: number): string {
  return `homed-${new Date(ms).toISOString().replace(/[:.]/g, "-")}.tar.gz`;
}

/**
 * The verified automatic backups in `dir`, newest first (none when the list does not exist). Throws when the list
 * is not one.
 *
 * @example
 * ```ts
 * const [newest] = await readBackupList("/mnt/usb/homed");
 * newest?.file; // "homed-2026-12-01T03-30-00-000Z.tar.gz"
 * ```
 */
export async function readBackupList(dir: string): Promise<BackupRecord[]> {
  const path = join(dir, BACKUP_LIST);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  let records: unknown;
  try {
    records = (JSON.parse(text) as { archives?: unknown }).archives;
  } catch (error) {
    throw new Error(`${path} is not JSON (${(error as Error).message}); move it aside`, { cause: error });
  }
  const valid = (record: unknown): record is BackupRecord => {
    const r = record as Partial<BackupRecord> | null;
    return typeof r?.file === "string" && /^homed-[\w.-]+\.tar\.gz$/.test(r.file) && typeof r.at === "string" &&
      !Number.isNaN(Date.parse(r.at)) && typeof r.bytes === "number" && typeof r.files === "number" &&
      typeof r.verified === "boolean";
  };
  if (!Array.isArray(records) || !records.every(valid)) {
    throw new Error(`${path} is not a list of backups homed wrote; move it aside`);
  }
  return records.sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
}

/**
 * The newest verified automatic backup in `dir` that is still there, as a path; `undefined` when there is none.
 *
 * @example
 * ```ts
 * await latestBackup("/var/lib/homed/backups"); // "/var/lib/homed/backups/homed-2026-12-01T03-30-00-000Z.tar.gz"
 * ```
 */
export async function latestBackup(dir: string): Promise<string | undefined> {
  for (const record of await readBackupList(dir)) {
    if (!record.verified) continue;
    const path = join(dir, record.file);
    try {
      if ((await Deno.stat(path)).isFile) return path;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return undefined;
}

/** Options of {@link takeBackup}. */
export interface TakeBackupOptions {
  loaded: LoadedConfig;
  now: () => number;
  /** homed's version, for the manifest. */
  version: string;
  /** The zone retention counts days and weeks in (`daemon.timezone`, or the system's). */
  timezone: string;
  /**
   * Stops the run between two writes of the archive (homed is stopping): the half-written `.partial` is removed and
   * the run rejects with the signal's reason; the list and the archives already kept are untouched.
   */
  signal?: AbortSignal;
}

/** `out` behind a gate that refuses the next chunk once `signal` is aborted (createBackup then aborts it). */
function abortable(out: WritableStream<Uint8Array>, signal: AbortSignal | undefined): WritableStream<Uint8Array> {
  if (!signal) return out;
  const writer = out.getWriter();
  return new WritableStream<Uint8Array>({
    async write(chunk) {
      if (signal.aborted) {
        // A sink that fails its own write is not aborted by the pipe: close the file here.
        await writer.abort(signal.reason).catch(() => {});
        throw signal.reason;
      }
      await writer.write(chunk);
    },
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
}

/**
 * Takes one automatic backup into `backup.dir`, checks it, puts it on the list and prunes by `backup.keep`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const run = await takeBackup({ loaded, now: Date.now, version: "1.0.0", timezone: "Asia/Shanghai" });
 * run.record.file; // "homed-2026-12-01T19-30-00-000Z.tar.gz"
 * ```
 */
export async function takeBackup(options: TakeBackupOptions): Promise<BackupRun> {
  const { loaded, now } = options;
  // Read before the first await: the time the run was started for (a fake clock's due time in tests).
  const at = now();
  const { dir, keep } = loaded.config.backup;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await removeLeftovers(dir);
  const list = await readBackupList(dir);
  const file = archiveName(at);
  const target = join(dir, file);
  const partial = `${target}.partial`;
  try {
    const out = await Deno.open(partial, { write: true, create: true, truncate: true, mode: 0o600 });
    const gated = abortable(out.writable, options.signal);
    const summary = await createBackup({ loaded, out: gated, version: options.version, now: () => at });
    // On disk before it is read back and named: a power cut never leaves a verified name on unwritten bytes.
    const written = await Deno.open(partial, { read: true });
    try {
      await written.sync();
    } finally {
      written.close();
    }
    const check = await verifyArchive(partial, summary.sums).catch((error) => {
      throw new Error(`${partial} did not verify after writing: ${(error as Error).message}`, { cause: error });
    });
    await Deno.rename(partial, target);
    const record: BackupRecord = {
      file,
      at: new Date(at).toISOString(),
      bytes: check.bytes,
      files: check.files,
      verified: true,
    };
    const all = [record, ...list.filter((old) => old.file !== file)];
    const kept = keptArchives(all.map((r) => ({ record: r, at: Date.parse(r.at) })), keep, options.timezone);
    const keptRecords = all.filter((r) => [...kept].some((k) => k.record === r));
    // The list first: a crash between the two leaves an archive off the list, never a listed archive missing.
    await atomicWriteText(join(dir, BACKUP_LIST), `${JSON.stringify({ archives: keptRecords }, null, 2)}\n`);
    const deleted: string[] = [];
    for (const old of all) {
      if (keptRecords.includes(old)) continue;
      await Deno.remove(join(dir, old.file)).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
      deleted.push(old.file);
    }
    return { record, deleted, kept: keptRecords, skipped: summary.skipped };
  } catch (error) {
    await Deno.remove(partial).catch(() => {});
    throw error;
  }
}

/** Archives an interrupted run left half written (`homed-….tar.gz.partial`). */
async function removeLeftovers(dir: string): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && /^homed-.*\.tar\.gz\.partial$/.test(entry.name)) {
      await Deno.remove(join(dir, entry.name)).catch(() => {});
    }
  }
}
