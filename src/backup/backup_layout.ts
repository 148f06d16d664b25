/**
 * What a backup holds and where each part lives on this machine: the data dir, knowledge, plugins, the config file and
 * the persona, under fixed names in the archive so a backup restores into another layout.
 *
 * @module
 */

/** The archive's first member: says what the archive is. */
export const MANIFEST = "homed-backup.json";
/** The archive's last member: `sha256  path` lines of every file. */
export const CHECKSUMS = "homed-backup.sha256";
/** The `format` a manifest must name. */
export const BACKUP_FORMAT = "homed-backup";
/** The archive layout version this homed writes and reads. */
export const BACKUP_VERSION = 1;

/** Folders of the data dir the butler's writes go to that come back by themselves (derived indexes) or are ours. */
const SKIPPED_DATA = [/^vector(\/|$)/, /^memory\/(documents|graph)-index(\/|$)/];

/**
 * Entries of the data dir that belong to backup and restore themselves — the backups, the staging of one in progress,
 * what an earlier restore replaced: never archived, and left in place by a restore.
 */
export const BACKUP_OWN = /^(backups|\.(backup|restore|before-restore)-)/;

/** Every part an archive may hold, by its name there. */
export const PART_NAMES = ["data", "knowledge", "plugins", "config/homed.yaml", "config/personal.md"] as const;

/** A part's name in an archive. */
export type PartName = typeof PART_NAMES[number];

/** What each part is, whatever this machine has in its place: an archive member must fit it. */
export const PART_KINDS: Readonly<Record<PartName, "dir" | "file">> = {
  data: "dir",
  knowledge: "dir",
  plugins: "dir",
  "config/homed.yaml": "file",
  "config/personal.md": "file",
};
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
 * One line of {@link CHECKSUMS}, as `sha256sum` writes it: `<sha256>  <name>`, and for a name holding a backslash, a
 * line break or a carriage return a leading backslash with those written `\\`, `\n`, `\r` — so every name takes
 * exactly one line and `sha256sum -c` reads the file too.
 *
 * @example
 * ```ts
 * const sum = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
 * checksumLine(sum, "knowledge/tea.md"); // `${sum}  knowledge/tea.md\n`
 * checksumLine(sum, "knowledge/a\nb.md"); // `\\${sum}  knowledge/a\\nb.md\n`
 * ```
 */
export function checksumLine(sum: string, name: string): string {
  if (!/[\\\n\r]/.test(name)) return `${sum}  ${name}\n`;
  const escaped = name.replace(/[\\\n\r]/g, (char) => char === "\\" ? "\\\\" : char === "\n" ? "\\n" : "\\r");
  return `\\${sum}  ${escaped}\n`;
}

/**
 * The names and sums of a {@link CHECKSUMS} text: lines of {@link checksumLine}, and those of archives written before
 * names were escaped (a raw name; one a line break split goes on over the next lines, which do not start with a sum).
 * Throws an `Error` naming the first line it cannot read, or a name listed twice.
 *
 * @example
 * ```ts
 * const sum = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
 * parseChecksums(`\\${sum}  knowledge/a\\nb.md\n${sum}  knowledge/old\nsplit.md\n`);
 * // Map { "knowledge/a\nb.md" => sum, "knowledge/old\nsplit.md" => sum }
 * ```
 */
export function parseChecksums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  const add = (name: string, sum: string) => {
    if (sums.has(name)) throw new Error(`${JSON.stringify(name)} is listed twice`);
    sums.set(name, sum);
  };
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  // The last unescaped line: an old writer's name may go on over the next lines.
  let pending: { name: string; sum: string } | undefined;
  for (const line of lines) {
    const match = /^(\\?)([0-9a-f]{64}) {2}(.+)$/s.exec(line);
    if (!match) {
      if (!pending) throw new Error(`bad line ${JSON.stringify(line)}`);
      pending.name = `${pending.name}\n${line}`;
      continue;
    }
    if (pending) add(pending.name, pending.sum);
    pending = undefined;
    const [, escaped, sum, name] = match as unknown as [string, string, string, string];
    if (!escaped) {
      pending = { name, sum };
      continue;
    }
    add(
      name.replace(/\\(.?)/gs, (whole, char: string) => {
        if (char === "\\") return "\\";
        if (char === "n") return "\n";
        if (char === "r") return "\r";
        throw new Error(`bad escape ${JSON.stringify(whole)} in line ${JSON.stringify(line)}`);
      }),
      sum,
    );
  }
  if (pending) add(pending.name, pending.sum);
  return sums;
}
