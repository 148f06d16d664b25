/**
 * `homed backup`: one `.tar.gz` of the data dir, knowledge, plugins, the config and the persona, consistent while the
 * daemon writes. SQLite files go through SQLite's online backup (a transaction-consistent copy, taken first so the
 * journal copied after it holds at least everything the database refers to); append-only journals (`.jsonl`) are cut
 * at their last whole line; indexes are left out (the daemon rebuilds them from the store on start). The manifest
 * comes first, the checksums of every file last, so a restore can refuse a foreign or damaged archive.
 *
 * @module
 */

import { backup as sqliteBackup, DatabaseSync } from "node:sqlite";
import { join, resolve } from "node:path";
import type { LoadedConfig } from "../config/load.ts";
import { BACKUP_FORMAT, BACKUP_VERSION, checksumLine, CHECKSUMS, MANIFEST, skippedInData } from "./backup_layout.ts";
import { type HomePart, homeParts } from "../config/parts.ts";
import { MAX_MEMBER_BYTES, TAR_END, tarBlocks, type TarEntry } from "./tar.ts";
import { sha256Hex } from "../text/sha256_hex.ts";

/** What {@link createBackup} wrote. */
export interface BackupSummary {
  files: number;
  /** Bytes of file content before compression. */
  bytes: number;
  /** Files per root (`data`: 12, …). */
  perRoot: Record<string, number>;
  /** Files left out, each with its archive name, its path and why (a hard link from outside, a name not UTF-8). */
  skipped: string[];
  /** Archive name → sha256 of each file as packed: what a check of the written archive compares against. */
  sums: Map<string, string>;
}

/** Options of {@link createBackup}. */
export interface BackupOptions {
  loaded: LoadedConfig;
  /** Where the compressed archive goes. */
  out: WritableStream<Uint8Array>;
  /** homed's version, recorded in the manifest. */
  version: string;
  now: () => number;
}

interface Found {
  root: HomePart;
  /** Archive path. */
  name: string;
  /** Path on disk. */
  path: string;
  mode: number;
  mtime: number;
  /** The file as listed: the one read must be it. */
  info: Deno.FileInfo;
}

/**
 * Files under `root`, folders first-come; other roots nested inside it (knowledge in the data dir) are left to them.
 * Archive names are the names read from the folders joined with `/`, so every name a file system allows comes back.
 */
async function collect(root: HomePart, otherRoots: string[], skipped: string[]): Promise<Found[]> {
  const found: Found[] = [];
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(root.path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return found;
    throw error;
  }
  const stamp = (stat: Deno.FileInfo) => ({
    mode: (stat.mode ?? 0o644) & 0o777,
    mtime: Math.floor((stat.mtime?.getTime() ?? 0) / 1000),
    info: stat,
  });
  if (root.kind === "file") {
    if (info.isFile) found.push({ root, name: root.name, path: root.path, ...stamp(info) });
    return found;
  }
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const names: string[] = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    for (const name of names.sort()) {
      const path = join(dir, name);
      const inside = `${prefix}${name}`;
      if (otherRoots.includes(resolve(path))) continue;
      if (root.name === "data" && skippedInData(inside)) continue;
      let stat: Deno.FileInfo;
      try {
        stat = await Deno.lstat(path);
      } catch (error) {
        // Deno reads a name that is not UTF-8 with U+FFFD in place of the bytes, and then cannot find it by that name.
        if (error instanceof Deno.errors.NotFound && name.includes("\uFFFD")) {
          skipped.push(
            `${root.name}/${inside} (${path}): its name is not valid UTF-8 (shown with \uFFFD), so homed cannot ` +
              "read it: left out; rename it to back it up",
          );
        }
        continue;
      }
      if (stat.isSymlink) continue;
      if (stat.isDirectory) await walk(path, `${inside}/`);
      else if (stat.isFile) found.push({ root, name: `${root.name}/${inside}`, path, ...stamp(stat) });
    }
  };
  await walk(root.path, "");
  return found;
}

/**
 * Leaves out every file with a hard link outside what the backup holds (fewer of its links were listed than it has):
 * reading it would copy a file from elsewhere (a link placed in the knowledge folder to a file homed may not read).
 * Links within the backup are kept, each as a file of its own.
 */
function withoutOutsideLinks(files: Found[], skipped: string[]): Found[] {
  const seen = new Map<string, number>();
  const key = (file: Found) => `${file.info.dev}:${file.info.ino}`;
  for (const file of files) seen.set(key(file), (seen.get(key(file)) ?? 0) + 1);
  return files.filter((file) => {
    const links = file.info.nlink ?? 1;
    const inside = seen.get(key(file)) ?? 1;
    if (links <= inside) return true;
    skipped.push(
      `${file.name} (${file.path}) has ${links} hard links and only ${inside} ${inside === 1 ? "is" : "are"} in ` +
        "what a backup holds: left out, since a link could lead the backup to a file elsewhere",
    );
    return false;
  });
}

/** Reads `file`, refusing one that is no longer the file listed (replaced by another, or linked since). */
async function readListed(file: Found): Promise<Uint8Array> {
  const handle = await Deno.open(file.path, { read: true });
  try {
    const opened = await handle.stat();
    if (opened.ino !== file.info.ino || opened.dev !== file.info.dev || opened.nlink !== file.info.nlink) {
      throw new Error("it was replaced or linked while the backup listed it; take the backup again");
    }
    return new Uint8Array(await new Response(handle.readable).arrayBuffer());
  } catch (error) {
    try {
      handle.close();
    } catch {
      // Already closed by its readable.
    }
    throw error;
  }
}

/** The bytes to archive for one file: SQLite through its online backup, journals up to their last whole line. */
async function snapshot(file: Found, staging: string): Promise<Uint8Array> {
  if (file.path.endsWith(".db")) {
    const copy = join(staging, `${crypto.randomUUID()}.db`);
    const db = new DatabaseSync(file.path, { readOnly: true });
    try {
      await sqliteBackup(db, copy);
    } finally {
      db.close();
    }
    try {
      return await Deno.readFile(copy);
    } finally {
      await Deno.remove(copy).catch(() => {});
    }
  }
  const bytes = await readListed(file);
  if (file.path.endsWith(".jsonl")) {
    // A line being appended right now is left for the next backup; every whole line is in this one.
    const end = bytes.lastIndexOf(0x0a);
    return bytes.subarray(0, end + 1);
  }
  return bytes;
}

/**
 * Writes the archive of `options.loaded`'s data, knowledge, plugins, config and persona to `options.out`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 * import { VERSION } from "../version.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const file = await Deno.open("homed.tar.gz", { write: true, create: true });
 * const summary = await createBackup({ loaded, out: file.writable, version: VERSION, now: Date.now });
 * summary.files; // how many files went in
 * ```
 */
export async function createBackup(options: BackupOptions): Promise<BackupSummary> {
  const { loaded } = options;
  const roots = homeParts(loaded);
  const staging = join(loaded.config.daemon.data_dir, `.backup-${crypto.randomUUID().slice(0, 8)}`);
  const summary: BackupSummary = { files: 0, bytes: 0, perRoot: {}, skipped: [], sums: new Map() };
  const listed: Found[] = [];
  for (const root of roots) {
    // The automatic backups' folder is never archived, wherever it is (inside knowledge, say).
    const others = [
      ...roots.filter((other) => other !== root).map((other) => resolve(other.path)),
      resolve(loaded.config.backup.dir),
    ];
    listed.push(...await collect(root, others, summary.skipped));
  }
  const files = withoutOutsideLinks(listed, summary.skipped);
  // Databases first: the journals copied after them hold at least every line a database row points at.
  files.sort((a, b) => Number(b.path.endsWith(".db")) - Number(a.path.endsWith(".db")));
  const compressor = new CompressionStream("gzip");
  const piped = compressor.readable.pipeTo(options.out);
  const writer = compressor.writable.getWriter();
  const write = async (entry: TarEntry) => {
    for (const block of tarBlocks(entry)) await writer.write(block as Uint8Array<ArrayBuffer>);
  };
  const mtime = Math.floor(options.now() / 1000);
  const text = (path: string, value: string): TarEntry => ({
    path,
    type: "file",
    mode: 0o644,
    mtime,
    data: new TextEncoder().encode(value),
  });
  try {
    await Deno.mkdir(staging, { recursive: true });
    await write(text(
      MANIFEST,
      `${
        JSON.stringify(
          {
            format: BACKUP_FORMAT,
            version: BACKUP_VERSION,
            created: new Date(options.now()).toISOString(),
            homed: options.version,
            roots: roots.map((root) => root.name),
          },
          null,
          2,
        )
      }\n`,
    ));
    const sums: string[] = [];
    for (const file of files) {
      let data: Uint8Array;
      try {
        data = await snapshot(file, staging);
      } catch (error) {
        // A file removed between the listing and the copy (a rotated journal, a deleted note) is simply not in it.
        if (error instanceof Deno.errors.NotFound) continue;
        throw new Error(`${file.path}: ${(error as Error).message}`, { cause: error });
      }
      if (data.length > MAX_MEMBER_BYTES) {
        // Restore holds each member in memory and refuses bigger ones; a backup it could not restore is no backup.
        throw new Error(`${file.path} is ${data.length} bytes; a backup holds files up to ${MAX_MEMBER_BYTES} bytes`);
      }
      await write({ path: file.name, type: "file", mode: file.mode, mtime: file.mtime, data });
      const sum = await sha256Hex(data);
      sums.push(checksumLine(sum, file.name));
      summary.sums.set(file.name, sum);
      summary.files++;
      summary.bytes += data.length;
      summary.perRoot[file.root.name] = (summary.perRoot[file.root.name] ?? 0) + 1;
    }
    await write(text(CHECKSUMS, sums.join("")));
    await writer.write(TAR_END as Uint8Array<ArrayBuffer>);
    await writer.close();
    await piped;
  } catch (error) {
    await writer.abort(error).catch(() => {});
    await piped.catch(() => {});
    throw error;
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
  return summary;
}
