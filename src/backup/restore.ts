/**
 * `homed restore`: unpacks a backup into a staging folder in the data dir, checks it whole (the manifest first, every
 * path inside the known parts, every checksum, every SQLite database's integrity), and only then swaps it in. What was
 * there before is moved to `data/.before-restore-<time>/`, never deleted; a foreign, truncated or damaged archive is
 * refused with the reason and changes nothing.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { dirname, join, resolve } from "node:path";
import type { LoadedConfig } from "../config/load.ts";
import {
  BACKUP_FORMAT,
  BACKUP_OWN,
  BACKUP_VERSION,
  backupRoots,
  CHECKSUMS,
  MANIFEST,
  PART_NAMES,
  skippedInData,
} from "./backup_layout.ts";
import { ArchiveError, readTar } from "./tar.ts";
import { sha256Hex } from "../text/sha256_hex.ts";

export { ArchiveError } from "./tar.ts";

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

/** The part of the archive a member belongs to, or why it may not be there. */
function rootOf(path: string): string {
  if (path.includes("\0") || path.includes("\\") || path.startsWith("/") || path.split("/").includes("..")) {
    throw new ArchiveError(`member ${JSON.stringify(path)} has an unsafe path (absolute, "..", or a backslash)`);
  }
  const root = PART_NAMES.find((name) => path === name || path.startsWith(`${name}/`));
  if (!root) throw new ArchiveError(`member ${JSON.stringify(path)} is outside the parts a backup holds`);
  return root;
}

async function move(from: string, to: string): Promise<void> {
  try {
    return await Deno.rename(from, to);
  } catch (error) {
    // A missing parent is made only then: making an existing one would need rights to it (the config's folder).
    if (!(error instanceof Deno.errors.NotFound)) return await crossDevice(error, from, to);
  }
  await Deno.mkdir(dirname(to), { recursive: true });
  try {
    await Deno.rename(from, to);
  } catch (error) {
    await crossDevice(error, from, to);
  }
}

/** Another file system (knowledge under /etc, data under /var): copy, then remove; other errors stand. */
async function crossDevice(error: unknown, from: string, to: string): Promise<void> {
  if (
    !(error instanceof Error) || !/EXDEV|cross-device/i.test(`${(error as { code?: string }).code} ${error.message}`)
  ) {
    throw error;
  }
  const stat = await Deno.stat(from);
  if (stat.isDirectory) {
    await Deno.mkdir(to, { recursive: true });
    for await (const entry of Deno.readDir(from)) await move(join(from, entry.name), join(to, entry.name));
    await Deno.remove(from, { recursive: true });
  } else {
    await Deno.copyFile(from, to);
    await Deno.remove(from);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Reads the manifest member, refusing anything that is not a homed backup this homed can read. */
function readManifest(data: Uint8Array, label: string): { created: string; roots: string[] } {
  let manifest: { format?: unknown; version?: unknown; created?: unknown; roots?: unknown };
  try {
    manifest = JSON.parse(new TextDecoder().decode(data));
  } catch (error) {
    throw new ArchiveError(`${label}: ${MANIFEST} is not JSON (${(error as Error).message})`);
  }
  if (manifest.format !== BACKUP_FORMAT) {
    throw new ArchiveError(
      `${label}: ${MANIFEST} has format ${JSON.stringify(manifest.format)}, not "${BACKUP_FORMAT}"`,
    );
  }
  if (typeof manifest.version !== "number" || manifest.version > BACKUP_VERSION) {
    throw new ArchiveError(
      `${label}: backup version ${JSON.stringify(manifest.version)}; this homed reads up to ${BACKUP_VERSION}`,
    );
  }
  return {
    created: String(manifest.created ?? "unknown"),
    roots: Array.isArray(manifest.roots) ? manifest.roots.map(String) : [],
  };
}

/**
 * Checks and restores the archive in `options.input` over the current data, knowledge, plugins, config and persona.
 * Throws {@link ArchiveError} (nothing changed) when the archive is not a sound homed backup.
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
  const roots = backupRoots(loaded);
  const stamp = new Date(options.now()).toISOString().replace(/[:.]/g, "-");
  const staging = join(dataDir, `.restore-${stamp}`);
  const previous = join(dataDir, `.before-restore-${stamp}`);
  const staged = new Map<string, string>();
  let manifest: { created: string; roots: string[] } | undefined;
  let checksums: string | undefined;
  await Deno.mkdir(staging, { recursive: true });
  try {
    try {
      const gunzip = new DecompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>;
      for await (const entry of readTar(options.input.pipeThrough(gunzip))) {
        if (!manifest) {
          if (entry.path !== MANIFEST) {
            throw new ArchiveError(
              `${label} is not a homed backup: its first member is ${JSON.stringify(entry.path)}, not ${MANIFEST}`,
            );
          }
          manifest = readManifest(entry.data, label);
          continue;
        }
        if (checksums !== undefined) throw new ArchiveError(`${label}: member ${entry.path} after ${CHECKSUMS}`);
        if (entry.path === CHECKSUMS) {
          checksums = new TextDecoder().decode(entry.data);
          continue;
        }
        const root = rootOf(entry.path);
        if (entry.type === "dir" || (root === "data" && skippedInData(entry.path.slice(5)))) continue;
        const target = join(staging, entry.path);
        try {
          await Deno.mkdir(dirname(target), { recursive: true });
          // Permission bits only: a backup never restores set-uid or sticky bits.
          await Deno.writeFile(target, entry.data, { mode: (entry.mode & 0o777) || 0o600 });
        } catch (error) {
          // A member where an earlier one made a file of its folder, or a name the file system refuses.
          throw new ArchiveError(
            `${label}: member ${JSON.stringify(entry.path)} cannot be unpacked: ${(error as Error).message}`,
          );
        }
        staged.set(entry.path, await sha256Hex(entry.data));
      }
    } catch (error) {
      if (error instanceof ArchiveError) {
        if (error.message.startsWith(label)) throw error;
        // From the tar reader: said about the archive, and before the manifest it is not a homed backup at all.
        throw new ArchiveError(
          manifest
            ? `${label}: ${error.message}`
            : `${label} is not a homed backup (not a tar archive: ${error.message})`,
        );
      }
      // DecompressionStream fails with a TypeError on bytes that are not gzip, or gzip cut short.
      throw new ArchiveError(
        `${label} is not a readable homed backup (gzip: ${(error as Error).message}); is it truncated or another file?`,
        { cause: error },
      );
    }
    if (!manifest) throw new ArchiveError(`${label} is empty: no ${MANIFEST}`);
    if (checksums === undefined) {
      throw new ArchiveError(`${label} has no ${CHECKSUMS} at its end: the archive is truncated or damaged`);
    }
    const listed = new Map<string, string>();
    for (const line of checksums.split("\n").filter(Boolean)) {
      const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
      if (!match) throw new ArchiveError(`${label}: bad line in ${CHECKSUMS}: ${JSON.stringify(line)}`);
      listed.set(match[2]!, match[1]!);
    }
    for (const [path, sum] of staged) {
      if (listed.get(path) !== sum) {
        throw new ArchiveError(`${label}: ${path} does not match its checksum: the archive is damaged`);
      }
    }
    for (const path of listed.keys()) {
      if (!staged.has(path) && !(path.startsWith("data/") && skippedInData(path.slice(5)))) {
        throw new ArchiveError(`${label}: ${path} is listed in ${CHECKSUMS} but missing from the archive`);
      }
    }
    for (const path of staged.keys()) {
      if (!path.endsWith(".db")) continue;
      let verdict: string;
      try {
        const db = new DatabaseSync(join(staging, path), { readOnly: true });
        try {
          verdict = String(
            (db.prepare("PRAGMA integrity_check").get() as { integrity_check?: unknown })
              ?.integrity_check,
          );
        } finally {
          db.close();
        }
      } catch (error) {
        verdict = (error as Error).message;
      }
      if (verdict !== "ok") throw new ArchiveError(`${label}: database ${path} fails its integrity check: ${verdict}`);
    }

    // Sound: swap in, part by part. What is there now goes to `previous`. Rights are checked for every part first, so
    // a missing one stops the restore before anything moved.
    for (const root of roots) {
      if (Deno.permissions.querySync({ name: "write", path: root.path }).state !== "granted") {
        throw new Error(`no write access to ${root.path} (${root.name}); run with \`homed flags --mode restore\``);
      }
    }
    const skipped: string[] = [];
    const present = new Set([...staged.keys()].map((path) => rootOf(path)));
    for (const name of manifest.roots.filter((root) => (PART_NAMES as readonly string[]).includes(root))) {
      const root = roots.find((candidate) => candidate.name === name);
      if (!root) {
        skipped.push(`${name}: this homed runs on its embedded defaults; restore with --config to place it`);
        continue;
      }
      const others = roots.filter((other) => other !== root).map((other) => resolve(other.path));
      if (root.kind === "file") {
        if (!present.has(name)) continue;
        if (await exists(root.path)) await move(root.path, join(previous, name));
        await move(join(staging, name), root.path);
        continue;
      }
      await Deno.mkdir(root.path, { recursive: true });
      for (const entry of await Array.fromAsync(Deno.readDir(root.path))) {
        const path = join(root.path, entry.name);
        if (others.includes(resolve(path))) continue;
        if (name === "data" && BACKUP_OWN.test(entry.name)) continue;
        await move(path, join(previous, name, entry.name));
      }
      if (!(await exists(join(staging, name)))) continue;
      for (const entry of await Array.fromAsync(Deno.readDir(join(staging, name)))) {
        await move(join(staging, name, entry.name), join(root.path, entry.name));
      }
    }
    return { files: staged.size, created: manifest.created, previous, skipped };
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
}
