/**
 * Restore's reading pass: the archive gunzipped in bounded pieces and read member by member, the manifest first (a
 * homed backup this homed can read, or nothing), every member checked (`member_checks.ts`) and counted against the
 * restore limit before a byte of it is written, then streamed into the staging folder with its sha256 computed on the
 * way, and the checksums last. Nothing holds a whole member but the two small ones read whole (manifest, checksums).
 *
 * @module
 */

import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import type { HomePart } from "../config/parts.ts";
import { BACKUP_FORMAT, BACKUP_VERSION, CHECKSUMS, MANIFEST, skippedInData } from "./backup_layout.ts";
import { checkMember, partOf } from "./member_checks.ts";
import type { RestoreLimit } from "./restore_limit.ts";
import { ArchiveError, memberBytes, readTarMembers, type TarMember } from "./tar.ts";

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
export interface Unpacked {
  manifest: { created: string; roots: string[] };
  /** Archive path → sha256 of what was staged. */
  staged: Map<string, string>;
  /** Archive paths of files listed in the checksums but skipped on purpose (derived indexes). */
  skipped: Set<string>;
  checksums: string;
}

/**
 * The reading pass over `source.input` (`source.label` in messages): every member checked (path, part, kind, what it
 * would land on here, the running total) before a byte of it is written, then streamed into `staging` with its sum
 * computed on the way. Throws an {@link ArchiveError} when the archive is not a sound homed backup.
 *
 * @example
 * ```ts
 * import type { HomePart } from "../config/parts.ts";
 *
 * declare const roots: HomePart[];
 * const file = await Deno.open("homed.tar.gz");
 * const limit = { bytes: 1024 ** 3, why: "backup.max_restore_bytes: 1073741824" };
 * const unpacked = await unpack({ input: file.readable, label: "homed.tar.gz" }, "/tmp/staging", limit, roots);
 * unpacked.staged.size; // files staged
 * ```
 */
export async function unpack(
  source: { input: ReadableStream<Uint8Array>; label: string },
  staging: string,
  limit: RestoreLimit,
  roots: HomePart[],
): Promise<Unpacked> {
  const { label } = source;
  let manifest: Unpacked["manifest"] | undefined;
  let checksums: string | undefined;
  const staged = new Map<string, string>();
  const skipped = new Set<string>();
  const files = new Set<string>();
  const dirs = new Set<string>();
  let total = 0;
  try {
    for await (const member of readTarMembers(gunzip(source.input))) {
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
      checkMember(member, part, roots, files, dirs, label);
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
