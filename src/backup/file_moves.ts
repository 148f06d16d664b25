/**
 * The file moves a restore is made of: a rename, made to work across file systems (knowledge under `/etc`, data under
 * `/var`) by copying and removing, with a missing parent made only when needed (making an existing one would need
 * rights to it); and the small checks and clean-ups around them.
 *
 * @module
 */

import { dirname, join } from "node:path";

/**
 * Moves `from` to `to`: a rename, or a copy and removal onto another file system.
 *
 * @example
 * ```ts
 * await move("/var/lib/homed/.restore-1/knowledge/tea", "/opt/homed/knowledge/tea");
 * ```
 */
export async function move(from: string, to: string): Promise<void> {
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

/**
 * Whether anything (a file, a folder, a link) is at `path`, links not followed.
 *
 * @example
 * ```ts
 * await exists("/etc/homed/homed.yaml"); // true
 * ```
 */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes `dir` if it holds nothing but empty folders.
 *
 * @example
 * ```ts
 * await removeEmptyFolders("/var/lib/homed/.before-restore-2026-01-01T00-00-00-000Z");
 * ```
 */
export async function removeEmptyFolders(dir: string): Promise<void> {
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch {
    return;
  }
  for (const entry of entries) if (entry.isDirectory) await removeEmptyFolders(join(dir, entry.name));
  await Deno.remove(dir).catch(() => {});
}
