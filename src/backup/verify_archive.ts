/**
 * The check of an archive just written, before it takes its real name: an automatic backup nobody looks at must be
 * known to restore. The file is read back from disk (gunzipped to its trailer, every tar header checked), the
 * manifest must come first and the checksums last, and every member's sha256 — computed as it streams, nothing held
 * whole — must equal both what was packed and what the archive's own checksums say, with no member missing or extra.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { BACKUP_FORMAT, CHECKSUMS, MANIFEST, parseChecksums } from "./backup_layout.ts";
import { ArchiveError, memberBytes, readTarMembers } from "./tar.ts";

/** What {@link verifyArchive} found. */
export interface ArchiveCheck {
  /** Files checked (manifest and checksums not counted). */
  files: number;
  /** The archive's size on disk. */
  bytes: number;
}

/**
 * Reads `path` back and checks each member against `packed` (archive name → sha256, `BackupSummary.sums`). Throws an
 * {@link ArchiveError} naming the first member that differs, is missing or is extra.
 *
 * @example
 * ```ts
 * import { createBackup } from "./backup.ts";
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const file = await Deno.open("homed.tar.gz.partial", { write: true, create: true });
 * const summary = await createBackup({ loaded, out: file.writable, version: "1", now: Date.now });
 * const check = await verifyArchive("homed.tar.gz.partial", summary.sums);
 * check.files === summary.files; // true
 * ```
 */
export async function verifyArchive(path: string, packed: ReadonlyMap<string, string>): Promise<ArchiveCheck> {
  const bytes = (await Deno.stat(path)).size;
  const file = await Deno.open(path, { read: true });
  const seen = new Map<string, string>();
  let manifest = false;
  let listed: Map<string, string> | undefined;
  try {
    const stream = file.readable.pipeThrough(new DecompressionStream("gzip"));
    for await (const member of readTarMembers(stream)) {
      const quoted = JSON.stringify(member.path);
      if (!manifest) {
        if (member.path !== MANIFEST) throw new ArchiveError(`the first member is ${quoted}, not ${MANIFEST}`);
        const text = new TextDecoder().decode(await memberBytes(member));
        if ((JSON.parse(text) as { format?: unknown }).format !== BACKUP_FORMAT) {
          throw new ArchiveError(`${MANIFEST} does not name the format ${BACKUP_FORMAT}`);
        }
        manifest = true;
        continue;
      }
      if (listed) throw new ArchiveError(`member ${quoted} after ${CHECKSUMS}`);
      if (member.path === CHECKSUMS) {
        listed = parseChecksums(new TextDecoder().decode(await memberBytes(member)));
        continue;
      }
      if (member.type !== "file") continue;
      const hash = createHash("sha256");
      for await (const chunk of member.chunks()) hash.update(chunk);
      const sum = hash.digest("hex");
      if (seen.has(member.path)) throw new ArchiveError(`member ${quoted} appears twice`);
      seen.set(member.path, sum);
      const expected = packed.get(member.path);
      if (expected === undefined) throw new ArchiveError(`member ${quoted} was not packed`);
      if (sum !== expected) throw new ArchiveError(`member ${quoted} reads back with another sha256 than was packed`);
    }
  } catch (error) {
    if (error instanceof ArchiveError) throw error;
    throw new ArchiveError(`the archive does not read back: ${(error as Error).message}`, { cause: error });
  }
  if (!manifest) throw new ArchiveError(`the archive is empty: no ${MANIFEST}`);
  if (!listed) throw new ArchiveError(`no ${CHECKSUMS} at the end`);
  for (const [name, sum] of packed) {
    if (!seen.has(name)) throw new ArchiveError(`member ${JSON.stringify(name)} was packed but does not read back`);
    if (listed.get(name) !== sum) {
      throw new ArchiveError(`${CHECKSUMS} lists ${JSON.stringify(name)} with another sum than was packed`);
    }
  }
  if (listed.size !== packed.size) {
    throw new ArchiveError(`${CHECKSUMS} lists ${listed.size} files, ${packed.size} packed`);
  }
  return { files: seen.size, bytes };
}
