/**
 * Where an archive member may go, checked before a byte of it is written: a safe relative path inside one of the
 * parts a backup holds, of the kind its part is (a folder part holds files under its name, a file part is exactly one
 * file), no name twice nor inside a file, and not landing on another part that lives inside a folder part here. A
 * member failing one is an {@link ArchiveError} naming it, and the restore changes nothing.
 *
 * @module
 */

import { resolve, sep } from "node:path";
import type { HomePart } from "../config/parts.ts";
import { PART_KINDS, PART_NAMES, type PartName } from "./backup_layout.ts";
import { ArchiveError, type TarMember } from "./tar.ts";

/**
 * The part of the archive a member belongs to, or why it may not be there.
 *
 * @example
 * ```ts
 * partOf("knowledge/tea/content.md", "homed.tar.gz"); // "knowledge"
 * ```
 */
export function partOf(path: string, label: string): PartName {
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

/**
 * Checks a member of `part` before it is unpacked: its kind, that its name is new and not inside a file (`files` and
 * `dirs` hold the names seen so far, and take this one's), and where it would land among `roots`.
 *
 * @example
 * ```ts
 * import type { HomePart } from "../config/parts.ts";
 * import type { TarMember } from "./tar.ts";
 *
 * declare const member: TarMember;
 * declare const roots: HomePart[];
 * const files = new Set<string>(), dirs = new Set<string>();
 * checkMember(member, partOf(member.path, "homed.tar.gz"), roots, files, dirs, "homed.tar.gz");
 * ```
 */
export function checkMember(
  member: TarMember,
  part: PartName,
  roots: HomePart[],
  files: Set<string>,
  dirs: Set<string>,
  label: string,
): void {
  checkKind(member, part, label);
  checkUnique(member, part, files, dirs, label);
  checkLanding(member, part, roots, label);
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
