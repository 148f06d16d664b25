/**
 * Restore's checking pass over what was staged, before anything here moves: every staged file's sum against the
 * archive's checksums, every listed file present, every SQLite database's integrity, and the tracker manifest's
 * entries as the tracker reads them. A failure is an {@link ArchiveError} naming the file.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { parseTrackerManifest, type SkippedEntry, TRACKER_MANIFEST_IN_DATA } from "../tracker/manifest.ts";
import { CHECKSUMS, parseChecksums, PART_KINDS, PART_NAMES } from "./backup_layout.ts";
import type { Unpacked } from "./restore_unpack.ts";
import { ArchiveError } from "./tar.ts";

/**
 * The checking pass over what was staged in `staging`: every sum, every listed file present, every database sound,
 * the tracker manifest's entries safe.
 *
 * @example
 * ```ts
 * import type { Unpacked } from "./restore_unpack.ts";
 *
 * declare const unpacked: Unpacked;
 * verify(unpacked, "/var/lib/homed/.restore-2026-01-01T00-00-00-000Z", "homed.tar.gz"); // throws when damaged
 * ```
 */
export function verify(unpacked: Unpacked, staging: string, label: string): void {
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
