/**
 * `homed restore`: unpacks a backup into a staging folder in the data dir, checks it whole (the manifest first, every
 * member's path and kind against the part it belongs to, the total size, every checksum, the gzip trailer, every SQLite
 * database's integrity, the tracker manifest's entries), and only then swaps it in. Members stream to disk: nothing
 * holds a whole member. What was there before is moved to `data/.before-restore-<time>/`, never deleted; a foreign,
 * truncated, oversized or damaged archive is refused with the reason and changes nothing; when putting it in place
 * fails midway (a file that cannot be moved), everything moved so far is moved back.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { dirname, join, resolve, sep } from "node:path";
import type { LoadedConfig } from "../config/load.ts";
import {
  BACKUP_FORMAT,
  BACKUP_OWN,
  BACKUP_VERSION,
  CHECKSUMS,
  MANIFEST,
  parseChecksums,
  PART_KINDS,
  PART_NAMES,
  type PartName,
  skippedInData,
} from "./backup_layout.ts";
import { type HomePart, homeParts } from "../config/parts.ts";
import { ArchiveError, memberBytes, readTarMembers, type TarMember } from "./tar.ts";
import { parseTrackerManifest, type SkippedEntry, TRACKER_MANIFEST_IN_DATA } from "../tracker/manifest.ts";

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

/** Without `backup.max_restore_bytes`, a restore may unpack this many times what the parts hold now… */
export const RESTORE_SIZE_FACTOR = 4;
/** …and at least this much (1 GiB): a new machine holds nothing yet. */
export const RESTORE_FLOOR_BYTES = 1024 ** 3;
/** The manifest is read whole: at most 1 MiB. */
const MAX_MANIFEST_BYTES = 1024 * 1024;
/** The checksums are read whole: at most 64 MiB (≈ 800 000 files). */
const MAX_CHECKSUM_BYTES = 64 * 1024 * 1024;
/**
 * Compressed bytes fed to gzip at a time. Deflate expands by at most ≈ 1032×, and `DecompressionStream` turns each
 * input chunk into one output chunk, so this bounds every chunk the tar reader sees (≈ 4 MiB), however the input
 * arrives (a file's chunks are 64 KiB, which could unpack to 64 MiB at once).
 */
const GZIP_PIECE = 4096;

/** How big an archive {@link restoreBackup} accepts, unpacked, and where that number comes from. */
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

/** The part of the archive a member belongs to, or why it may not be there. */
function partOf(path: string, label: string): PartName {
  const parts = path.split("/");
  if (
    path.includes("\0") || path.startsWith("/") || parts.some((part) => part === ".." || part === "." || part === "") ||
    (Deno.build.os === "windows" && path.includes("\\"))
  ) {
    throw new ArchiveError(
      `${label}: member ${JSON.stringify(path)} has an unsafe path (absolute, "." or "..", an empty part, or a NUL)`,
    );
  }
  const part = PART_NAMES.find((name) => path === name || path.startsWith(`${name}/`));
  if (!part) throw new ArchiveError(`${label}: member ${JSON.stringify(path)} is outside the parts a backup holds`);
  return part;
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

/** A small member (the manifest, the checksums) read whole, refused above `max` bytes. */
async function readSmall(member: TarMember, max: number, label: string): Promise<Uint8Array> {
  if (member.size > max) {
    throw new ArchiveError(`${label}: ${member.path} holds ${member.size} bytes; at most ${max} are read`);
  }
  return await memberBytes(member);
}

/** Splits what arrives into pieces of at most {@link GZIP_PIECE} bytes, then gunzips: see there. */
function gunzip(input: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const pieces = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      for (let at = 0; at < chunk.length; at += GZIP_PIECE) controller.enqueue(chunk.subarray(at, at + GZIP_PIECE));
    },
  });
  const gzip = new DecompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>;
  return input.pipeThrough(pieces).pipeThrough(gzip);
}

/** What the reading pass found: the manifest, and every file staged with its sum. */
interface Unpacked {
  manifest: { created: string; roots: string[] };
  /** Archive path → sha256 of what was staged. */
  staged: Map<string, string>;
  /** Archive paths of files listed in the checksums but skipped on purpose (derived indexes). */
  skipped: Set<string>;
  checksums: string;
}

/**
 * The reading pass: every member checked (path, part, kind, what it would land on here, the running total) before a
 * byte of it is written, then streamed into `staging` with its sum computed on the way.
 */
async function unpack(
  options: RestoreOptions,
  staging: string,
  limit: RestoreLimit,
  roots: HomePart[],
): Promise<Unpacked> {
  const { label } = options;
  let manifest: Unpacked["manifest"] | undefined;
  let checksums: string | undefined;
  const staged = new Map<string, string>();
  const skipped = new Set<string>();
  const files = new Set<string>();
  const dirs = new Set<string>();
  let total = 0;
  try {
    for await (const member of readTarMembers(gunzip(options.input))) {
      const quoted = JSON.stringify(member.path);
      if (!manifest) {
        if (member.path !== MANIFEST) {
          throw new ArchiveError(`${label} is not a homed backup: its first member is ${quoted}, not ${MANIFEST}`);
        }
        manifest = readManifest(await readSmall(member, MAX_MANIFEST_BYTES, label), label);
        continue;
      }
      if (checksums !== undefined) throw new ArchiveError(`${label}: member ${quoted} after ${CHECKSUMS}`);
      if (member.path === CHECKSUMS) {
        checksums = new TextDecoder().decode(await readSmall(member, MAX_CHECKSUM_BYTES, label));
        continue;
      }
      const part = partOf(member.path, label);
      if (!manifest.roots.includes(part)) {
        throw new ArchiveError(`${label}: member ${quoted} belongs to ${part}, which the manifest does not list`);
      }
      checkKind(member, part, label);
      checkUnique(member, part, files, dirs, label);
      checkLanding(member, part, roots, label);
      total += member.size;
      if (total > limit.bytes) {
        throw new ArchiveError(
          `${label}: member ${quoted} holds ${member.size} bytes, which takes what the archive unpacks to past ` +
            `${limit.bytes} bytes, the restore limit (${limit.why})`,
        );
      }
      if (member.type === "dir") continue;
      if (part === "data" && skippedInData(member.path.slice(5))) {
        skipped.add(member.path);
        continue;
      }
      staged.set(member.path, await stage(member, join(staging, member.path), label));
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
    if (!(error instanceof TypeError)) throw error;
    // DecompressionStream fails with a TypeError on bytes that are not gzip, gzip cut short, or a wrong check; after
    // the last member it is the trailer (CRC-32 and length) that is missing or wrong.
    throw new ArchiveError(
      checksums !== undefined
        ? `${label} is truncated or damaged: its gzip stream does not end in an intact trailer (${error.message})`
        : `${label} is not a readable homed backup (gzip: ${error.message}); is it truncated or another file?`,
      { cause: error },
    );
  }
  if (!manifest) throw new ArchiveError(`${label} is empty: no ${MANIFEST}`);
  if (checksums === undefined) {
    throw new ArchiveError(`${label} has no ${CHECKSUMS} at its end: the archive is truncated or damaged`);
  }
  return { manifest, staged, skipped, checksums };
}

/** A member must fit its part: a folder part holds files under its name, a file part is exactly one file. */
function checkKind(member: TarMember, part: PartName, label: string): void {
  const quoted = JSON.stringify(member.path);
  if (PART_KINDS[part] === "file") {
    if (member.path !== part) {
      throw new ArchiveError(`${label}: member ${quoted} is inside ${part}, which is a single file in a backup`);
    }
    if (member.type === "dir") {
      throw new ArchiveError(`${label}: member ${quoted} is a folder, but ${part} is a single file in a backup`);
    }
  } else if (member.path === part && member.type === "file") {
    throw new ArchiveError(`${label}: member ${quoted} is a file, but ${part} is a folder in a backup`);
  }
}

/** No name twice, no file where the archive has a folder, nothing inside a file. */
function checkUnique(member: TarMember, part: PartName, files: Set<string>, dirs: Set<string>, label: string): void {
  const quoted = JSON.stringify(member.path);
  const parts = member.path.split("/");
  for (let end = part.split("/").length; end < parts.length; end++) {
    const above = parts.slice(0, end).join("/");
    if (files.has(above)) {
      throw new ArchiveError(
        `${label}: member ${quoted} is inside ${JSON.stringify(above)}, which the archive holds as a file`,
      );
    }
    dirs.add(above);
  }
  if (member.type === "dir") {
    if (files.has(member.path)) {
      throw new ArchiveError(`${label}: member ${quoted} is a folder, and the archive also holds a file of that name`);
    }
    dirs.add(member.path);
    return;
  }
  if (files.has(member.path)) throw new ArchiveError(`${label}: member ${quoted} appears twice in the archive`);
  if (dirs.has(member.path)) {
    throw new ArchiveError(`${label}: member ${quoted} is a file, and the archive also holds a folder of that name`);
  }
  files.add(member.path);
}

/** A member of a folder part must not land on another part that lives inside that folder here. */
function checkLanding(member: TarMember, part: PartName, roots: HomePart[], label: string): void {
  const root = roots.find((candidate) => candidate.name === part);
  if (!root || root.kind === "file" || member.path === part) return;
  const target = resolve(root.path, member.path.slice(part.length + 1));
  for (const other of roots) {
    if (other === root) continue;
    const there = resolve(other.path);
    if (target === there || target.startsWith(there + sep)) {
      throw new ArchiveError(
        `${label}: member ${JSON.stringify(member.path)} would land in ${there}, where ${other.name} lives here`,
      );
    }
    if (member.type === "file" && there.startsWith(target + sep)) {
      throw new ArchiveError(
        `${label}: member ${JSON.stringify(member.path)} is a file, but ${target} holds ${other.name} here`,
      );
    }
  }
}

/** Streams one file member to `target`, computing its sha256 on the way; resolves to the sum. */
async function stage(member: TarMember, target: string, label: string): Promise<string> {
  const hash = createHash("sha256");
  let file: Deno.FsFile;
  const unpackable = (error: unknown) =>
    new ArchiveError(
      `${label}: member ${JSON.stringify(member.path)} cannot be unpacked: ${(error as Error).message}`,
      { cause: error },
    );
  try {
    await Deno.mkdir(dirname(target), { recursive: true });
    // Permission bits only: a backup never restores set-uid or sticky bits.
    file = await Deno.open(target, { write: true, createNew: true, mode: (member.mode & 0o777) || 0o600 });
  } catch (error) {
    // A name the file system refuses (too long), or no space.
    throw unpackable(error);
  }
  try {
    for await (const chunk of member.chunks()) {
      hash.update(chunk);
      try {
        // Written synchronously: each pending async write pins the whole buffer its chunk is cut from until the
        // next collection, which let a 256 MiB member raise resident memory by ≈ 90 MiB (≈ 6 MiB this way).
        for (let at = 0; at < chunk.length;) at += file.writeSync(chunk.subarray(at));
      } catch (error) {
        throw unpackable(error);
      }
    }
  } finally {
    file.close();
  }
  return hash.digest("hex");
}

/**
 * The checking pass over what was staged: every sum, every listed file present, every database sound, the tracker
 * manifest's entries safe.
 */
function verify(unpacked: Unpacked, staging: string, label: string): void {
  let listed: Map<string, string>;
  try {
    listed = parseChecksums(unpacked.checksums);
  } catch (error) {
    throw new ArchiveError(`${label}: ${CHECKSUMS}: ${(error as Error).message}`);
  }
  for (const [path, sum] of unpacked.staged) {
    if (listed.get(path) !== sum) {
      throw new ArchiveError(`${label}: ${JSON.stringify(path)} does not match its checksum: the archive is damaged`);
    }
  }
  for (const path of listed.keys()) {
    if (!unpacked.staged.has(path) && !unpacked.skipped.has(path)) {
      throw new ArchiveError(
        `${label}: ${JSON.stringify(path)} is listed in ${CHECKSUMS} but missing from the archive`,
      );
    }
  }
  for (const path of unpacked.staged.keys()) {
    if (!path.endsWith(".db")) continue;
    let verdict: string;
    try {
      const db = new DatabaseSync(join(staging, path), { readOnly: true });
      try {
        verdict = String(
          (db.prepare("PRAGMA integrity_check").get() as { integrity_check?: unknown })?.integrity_check,
        );
      } finally {
        db.close();
      }
    } catch (error) {
      verdict = (error as Error).message;
    }
    if (verdict !== "ok") throw new ArchiveError(`${label}: database ${path} fails its integrity check: ${verdict}`);
  }
  checkTrackerManifest(unpacked, staging, label);
}

/**
 * The tracker's manifest, checked as the tracker reads it (its parts are the archive's parts but the data dir): homed
 * never writes a bad entry, so one (a `..`, an absolute path, the wrong shape) refuses the whole archive, naming it.
 */
function checkTrackerManifest(unpacked: Unpacked, staging: string, label: string): void {
  const member = `data/${TRACKER_MANIFEST_IN_DATA}`;
  if (!unpacked.staged.has(member)) return;
  const parts = PART_NAMES.filter((name) => name !== "data").map((name) => ({ name, kind: PART_KINDS[name] }));
  let skipped: SkippedEntry[];
  try {
    ({ skipped } = parseTrackerManifest(Deno.readTextFileSync(join(staging, member)), parts));
  } catch (error) {
    throw new ArchiveError(`${label}: ${member} is not a tracker manifest (${(error as Error).message})`);
  }
  const [first, ...more] = skipped;
  if (!first) return;
  throw new ArchiveError(
    `${label}: ${member}: entry ${JSON.stringify(first.entry)} ${first.reason}, which homed never writes` +
      (more.length ? ` (and ${more.length} more bad entr${more.length === 1 ? "y" : "ies"})` : ""),
  );
}

/**
 * What is in each part's place here must be of the part's kind; a file part whose folder is missing needs the right
 * to make it (restore's rights name the file, not its folder).
 */
async function checkHere(roots: HomePart[]): Promise<void> {
  for (const root of roots) {
    const info = await Deno.stat(root.path).catch(() => undefined);
    if (info && root.kind === "dir" && !info.isDirectory) {
      throw new Error(`${root.path} (${root.name}) is a file here, not a folder; nothing was restored`);
    }
    if (info && root.kind === "file" && info.isDirectory) {
      throw new Error(`${root.path} (${root.name}) is a folder here, not a file; nothing was restored`);
    }
    const folder = dirname(root.path);
    if (
      !info && root.kind === "file" &&
      Deno.permissions.querySync({ name: "write", path: folder }).state !== "granted" &&
      Deno.permissions.querySync({ name: "read", path: folder }).state === "granted" && !(await exists(folder))
    ) {
      throw new Error(
        `the folder of ${root.path} (${root.name}) does not exist and restore may not make it; nothing was restored`,
      );
    }
  }
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

/**
 * Swaps the staged parts in, recording every move; when one fails, moves everything back (newest first) and says
 * so. What is there now goes to `previous`.
 */
async function apply(
  applied: HomePart[],
  roots: HomePart[],
  unpacked: Unpacked,
  staging: string,
  previous: string,
  label: string,
): Promise<void> {
  const moves: Array<{ from: string; to: string }> = [];
  const made: string[] = [];
  const step = async (from: string, to: string, aside: boolean) => {
    try {
      await move(from, to);
    } catch (error) {
      const what = aside ? `moving ${from} aside` : `putting ${to} in place`;
      throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
    }
    moves.push({ from, to });
  };
  const present = new Set([...unpacked.staged.keys()].map((path) => partOf(path, label)));
  try {
    for (const root of applied) {
      const others = roots.filter((other) => other !== root).map((other) => resolve(other.path));
      if (root.kind === "file") {
        if (!present.has(root.name as PartName)) continue;
        if (await exists(root.path)) await step(root.path, join(previous, root.name), true);
        await step(join(staging, root.name), root.path, false);
        continue;
      }
      if (!(await exists(root.path))) {
        await Deno.mkdir(root.path, { recursive: true });
        made.push(root.path);
      }
      // Aside: everything but the parts living inside this one (and, in the data dir, backup's own folders); a folder
      // holding such a part is gone through instead of moved whole.
      const aside = async (live: string, kept: string, top: boolean): Promise<void> => {
        for (const entry of await Array.fromAsync(Deno.readDir(live))) {
          const path = resolve(live, entry.name);
          if (others.includes(path) || (top && root.name === "data" && BACKUP_OWN.test(entry.name))) continue;
          if (entry.isDirectory && others.some((other) => other.startsWith(path + sep))) {
            await aside(path, join(kept, entry.name), false);
          } else {
            await step(path, join(kept, entry.name), true);
          }
        }
      };
      // In: a staged entry whose place is still taken is one of those folders (checked when unpacking), gone into.
      const putIn = async (from: string, live: string): Promise<void> => {
        for (const entry of await Array.fromAsync(Deno.readDir(from))) {
          const to = join(live, entry.name);
          if (entry.isDirectory && await exists(to)) await putIn(join(from, entry.name), to);
          else await step(join(from, entry.name), to, false);
        }
      };
      await aside(root.path, join(previous, root.name), true);
      if (await exists(join(staging, root.name))) await putIn(join(staging, root.name), root.path);
    }
  } catch (error) {
    const failed: string[] = [];
    for (const { from, to } of moves.reverse()) {
      try {
        await move(to, from);
      } catch (undo) {
        failed.push(`${to} → ${from} (${(undo as Error).message})`);
      }
    }
    for (const dir of made) await Deno.remove(dir).catch(() => {});
    if (failed.length === 0) await removeEmptyFolders(previous);
    throw new Error(
      `could not put ${label} in place (${(error as Error).message}); ` +
        (failed.length === 0
          ? "every file moved was put back, nothing changed"
          : `moving back failed for ${failed.join(", ")}; the rest of what was there is in ${previous}`),
      { cause: error },
    );
  }
}

/** Removes `dir` if it holds nothing but empty folders. */
async function removeEmptyFolders(dir: string): Promise<void> {
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch {
    return;
  }
  for (const entry of entries) if (entry.isDirectory) await removeEmptyFolders(join(dir, entry.name));
  await Deno.remove(dir).catch(() => {});
}
