/**
 * The tracker's manifest (`<data dir>/tracker/manifest.json`) and the one check of it that the tracker (on every
 * read) and restore (on the copy inside an archive) both run. The manifest is a file in the data dir, which a restore
 * brings back from an archive and people can edit, so every entry is checked before its name reaches a path: a
 * relative name inside one of the tracked parts — no `..`, `.` or empty segment, not absolute, no NUL — holding a file
 * (`{sha256, size, mode}`), a link (`{link}`) or a deletion (`{deleted: true}`). A bad entry is left out and named
 * with why; the rest of the manifest stands.
 *
 * @module
 */

/** The manifest's own place, relative to the data dir (its copy in a backup is `data/tracker/manifest.json`). */
export const TRACKER_MANIFEST_IN_DATA = "tracker/manifest.json";

/** A committed file: its bytes are `objects/<sha256>`. */
export interface ManifestFile {
  sha256: string;
  size: number;
  mode: number;
}

/** One entry: a file, a symbolic link's target (never followed), or a deletion of what the lower layer holds. */
export type ManifestEntry = ManifestFile | { link: string } | { deleted: true };

/** The manifest: what the last commit recorded, by tracked name (`knowledge/tea/content.md`). */
export interface TrackerManifest {
  format: "homed-tracker";
  version: 1;
  committed: string;
  files: Record<string, ManifestEntry>;
}

/** A tracked part as the check sees it: its name and whether it is a folder or a single file. */
export interface TrackerPart {
  name: string;
  kind: "dir" | "file";
}

/** An entry left out, and why: `reason` follows `entry "<name>" ` in a sentence. */
export interface SkippedEntry {
  entry: string;
  reason: string;
}

/** A value for a message: its JSON, cut at 64 characters. */
function shown(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 64 ? `${json.slice(0, 64)}…` : json;
}

/** Why `name` cannot be a tracked name in `parts`, or `undefined`. */
function badName(name: string, parts: readonly TrackerPart[]): string | undefined {
  if (name.includes("\0")) return "has a NUL character in its path";
  if (name.startsWith("/")) return "has an absolute path";
  const segments = name.split("/");
  if (segments.includes("..")) return 'has a ".." segment in its path';
  if (segments.includes(".")) return 'has a "." segment in its path';
  if (segments.includes("")) return "has an empty segment in its path";
  for (const part of parts) {
    if (name === part.name) {
      return part.kind === "file" ? undefined : `is the folder part ${part.name} itself, not a file inside it`;
    }
    if (name.startsWith(`${part.name}/`)) {
      return part.kind === "dir" ? undefined : `is inside ${part.name}, which is a single file`;
    }
  }
  return `is not inside a tracked part (${parts.map((part) => part.name).join(", ")})`;
}

/** Why `value` is not a manifest entry, or `undefined`. */
function badEntry(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `has the value ${shown(value)}, not an object`;
  }
  const entry = value as Record<string, unknown>;
  const kinds = ["sha256" in entry || "size" in entry || "mode" in entry, "link" in entry, "deleted" in entry];
  if (kinds.filter(Boolean).length !== 1) {
    return `has the value ${shown(value)}, not exactly one of a file ({sha256, size, mode}), a link ({link}) or a ` +
      "deletion ({deleted: true})";
  }
  if ("deleted" in entry) {
    return entry.deleted === true ? undefined : `has "deleted": ${shown(entry.deleted)}, not true`;
  }
  if ("link" in entry) {
    return typeof entry.link === "string" && entry.link !== "" && !entry.link.includes("\0")
      ? undefined
      : `has "link": ${shown(entry.link)}, not a link target (text, not empty, without NUL)`;
  }
  if (typeof entry.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(entry.sha256)) {
    return `has "sha256": ${shown(entry.sha256)}, not 64 lowercase hex digits`;
  }
  if (!Number.isSafeInteger(entry.size) || (entry.size as number) < 0) {
    return `has "size": ${shown(entry.size)}, not a whole number of bytes`;
  }
  if (!Number.isInteger(entry.mode) || (entry.mode as number) < 0 || (entry.mode as number) > 0o7777) {
    return `has "mode": ${shown(entry.mode)}, not permission bits (a whole number from 0 to 0o7777)`;
  }
  return undefined;
}

/**
 * Reads a tracker manifest's text, keeping every entry that is a safe name inside one of `parts` with a sound shape
 * and listing the others in `skipped` (in the manifest's order), each with why. Throws a `TypeError` saying why when
 * the text is not a tracker manifest at all (not JSON, another format, no object of entries).
 *
 * @example
 * ```ts
 * const parts: TrackerPart[] = [{ name: "knowledge", kind: "dir" }, { name: "config/homed.yaml", kind: "file" }];
 * const { manifest, skipped } = parseTrackerManifest(
 *   JSON.stringify({
 *     format: "homed-tracker",
 *     version: 1,
 *     committed: "2026-11-30T12:00:00.000Z",
 *     files: { "knowledge/old.md": { deleted: true }, "knowledge/../../etc/passwd": { deleted: true } },
 *   }),
 *   parts,
 * );
 * Object.keys(manifest.files); // ["knowledge/old.md"]
 * skipped; // [{ entry: "knowledge/../../etc/passwd", reason: 'has a ".." segment in its path' }]
 * ```
 */
export function parseTrackerManifest(
  text: string,
  parts: readonly TrackerPart[],
): { manifest: TrackerManifest; skipped: SkippedEntry[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TypeError(`it is not JSON (${(error as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`it holds ${shown(value)}, not an object`);
  }
  const raw = value as { format?: unknown; committed?: unknown; files?: unknown };
  if (raw.format !== "homed-tracker") throw new TypeError(`its format is ${shown(raw.format)}, not "homed-tracker"`);
  if (typeof raw.files !== "object" || raw.files === null || Array.isArray(raw.files)) {
    throw new TypeError("its files are not an object of entries");
  }
  const kept: Array<[string, ManifestEntry]> = [];
  const skipped: SkippedEntry[] = [];
  for (const [entry, body] of Object.entries(raw.files)) {
    const reason = badName(entry, parts) ?? badEntry(body);
    if (reason) skipped.push({ entry, reason });
    else kept.push([entry, body as ManifestEntry]);
  }
  return {
    manifest: {
      format: "homed-tracker",
      version: 1,
      committed: typeof raw.committed === "string" ? raw.committed : String(raw.committed ?? "unknown"),
      // fromEntries defines each name as its own property: a "__proto__" entry cannot reach the prototype.
      files: Object.fromEntries(kept),
    },
    skipped,
  };
}
