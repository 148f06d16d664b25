/**
 * Reading files in folders homed shares with people (knowledge, the data dir, plugins) without being led out
 * of them: a symbolic link or an extra hard link is refused — reported, never followed, never replaced by a copy of
 * what it points to.
 *
 * @module
 */

import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

/** A path is (or passes through) a link homed will not follow; callers report it and skip the file. */
export class LinkError extends Error {
  /**
   * @example
   * ```ts
   * const error = new LinkError("knowledge/leak/content.md is a symbolic link; homed does not follow links");
   * error.name; // "LinkError"
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "LinkError";
  }
}

/**
 * Whether `path` lies below `root` (not `root` itself), by name alone: `..` is resolved, links are not looked at —
 * resolve them first (`Deno.realPath`) where a link must not lead out, or use {@link checkContained}.
 *
 * @example
 * ```ts
 * isInside("/srv/skills/lamp", "/srv/skills/lamp/references/howto.md"); // true
 * isInside("/srv/skills/lamp", "/srv/skills/lamp/../secret.txt"); // false
 * isInside("/srv/skills/lamp", "/srv/skills/lamp"); // false
 * ```
 */
export function isInside(root: string, path: string): boolean {
  const rel = relative(resolve(root), resolve(path));
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * Checks that `path` is inside `root` and that neither it nor any folder between them is a symbolic link; a file must
 * be a regular file with one hard link. Returns its `lstat`, or `undefined` when it does not exist.
 *
 * @example
 * ```ts
 * await checkContained("/srv/knowledge", "/srv/knowledge/cooking/content.md"); // FileInfo, or throws LinkError
 * ```
 */
export async function checkContained(root: string, path: string): Promise<Deno.FileInfo | undefined> {
  const base = resolve(root);
  const target = resolve(path);
  if (!isInside(base, target)) {
    throw new LinkError(`${target} is not inside ${base}`);
  }
  for (let dir = dirname(target); dir !== base && dir.startsWith(base + sep); dir = dirname(dir)) {
    const folder = await lstatIfExists(dir);
    if (folder?.isSymlink) {
      throw new LinkError(`${dir} is a symbolic link; homed does not follow links out of ${base}`);
    }
  }
  const info = await lstatIfExists(target);
  if (!info) return undefined;
  if (info.isSymlink) throw new LinkError(`${target} is a symbolic link; homed does not follow links out of ${base}`);
  if (info.isFile && (info.nlink ?? 1) > 1) {
    throw new LinkError(`${target} has ${info.nlink} hard links; homed reads only files that are not linked elsewhere`);
  }
  return info;
}

/**
 * Reads a regular file under `root` (see {@link checkContained}); the file opened must be the one checked, so a link
 * swapped in between is caught. `undefined` when the file does not exist.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 *
 * const knowledgeDir = "/srv/homed/knowledge";
 * const found = await readContainedText(knowledgeDir, join(knowledgeDir, "cooking", "content.md"));
 * found?.text; // the file's content, or undefined when it does not exist
 * ```
 */
export async function readContainedText(
  root: string,
  path: string,
): Promise<{ text: string; info: Deno.FileInfo } | undefined> {
  const info = await checkContained(root, path);
  if (!info) return undefined;
  if (!info.isFile) throw new LinkError(`${resolve(path)} is not a regular file`);
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  const opened = await file.stat();
  if (opened.ino !== info.ino || opened.dev !== info.dev) {
    file.close();
    throw new LinkError(`${resolve(path)} was replaced while homed opened it`);
  }
  return { text: await new Response(file.readable).text(), info };
}

async function lstatIfExists(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}
