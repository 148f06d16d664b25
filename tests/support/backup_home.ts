/**
 * A homed installation in a temporary folder for backup and restore tests: its config read back from `homed.yaml`,
 * an archive of it taken in memory, and a look at what a folder holds.
 *
 * @module
 */

import { join } from "node:path";
import { type LoadedConfig, parseConfig } from "../../src/config/load.ts";
import { createBackup } from "../../src/backup/backup.ts";

/**
 * The config `dir/homed.yaml` describes (no environment; relative paths resolve against `dir`).
 *
 * @example
 * ```ts
 * const loaded = await loadHome("/tmp/homed-backup-test");
 * loaded.config.daemon.data_dir; // "/tmp/homed-backup-test/data" for `data_dir: data`
 * ```
 */
export async function loadHome(dir: string): Promise<LoadedConfig> {
  const configPath = join(dir, "homed.yaml");
  return parseConfig({
    text: await Deno.readTextFile(configPath),
    location: { path: configPath, origin: "--config" },
    readEnv: () => undefined,
    cwd: dir,
  });
}

/**
 * A backup of `loaded`, taken in memory at a fixed time: the archive's bytes and the files it left out.
 *
 * @example
 * ```ts
 * const { bytes, skipped } = await archiveOf(await loadHome("/tmp/homed-backup-test"));
 * ```
 */
export async function archiveOf(loaded: LoadedConfig): Promise<{ bytes: Uint8Array; skipped: string[] }> {
  const chunks: Uint8Array[] = [];
  const out = new WritableStream<Uint8Array>({ write: (chunk) => void chunks.push(chunk) });
  const summary = await createBackup({ loaded, out, version: "test", now: () => Date.UTC(2026, 10, 30, 12) });
  return { bytes: new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer()), skipped: summary.skipped };
}

/**
 * `bytes` as a stream, as `homed restore` reads an archive.
 *
 * @example
 * ```ts
 * await new Response(readable(new Uint8Array([1, 2]))).arrayBuffer(); // 2 bytes
 * ```
 */
export function readable(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new Blob([bytes as BlobPart]).stream();
}

/**
 * Every file under `dir`, as `relative path → content`.
 *
 * @example
 * ```ts
 * const before = await treeFiles("/tmp/homed-backup-test");
 * ```
 */
export async function treeFiles(dir: string, prefix = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) Object.assign(out, await treeFiles(path, `${prefix}${entry.name}/`));
    else out[`${prefix}${entry.name}`] = await Deno.readTextFile(path);
  }
  return out;
}
