/**
 * The tracker's only way into the trees it reads and writes (knowledge, plugins, the config file's and the persona's
 * folders, the overlay's layers, its own state): never through a symbolic link. People can drop a folder into
 * `knowledge/` or `plugins/`, and Deno checks its permissions on the path as given, so a link on the way would turn a
 * read or a revert into one anywhere the link points.
 *
 * Every access names a `base` folder — a tracked part's own path, as configured, taken as given — and a `/`-separated
 * name inside it. Each folder between them is checked with `lstat` right before the access and again right after it
 * (same device and inode, still no link): a link there means the entry is not in the tree at all for a read, and a
 * refusal for a write. An entry that is itself a link is reported as one ({@link Entry}), its target read with
 * `readlink`, never followed; a write replaces such a link with a rename, never writes through it. Deno has no
 * `openat`, so a folder swapped for a link and back between two checks is the one gap left; a file read is also
 * checked to be the very inode its `lstat` showed.
 *
 * Hard links: a caller that knows how many of a file's links its tree holds says so ({@link ReadOptions}), and a file
 * with more (a link from elsewhere) is reported, never read ({@link Entry} `hardlinked`). Nothing here writes into a
 * file with more than one link: `writeEntryFile` and `replaceFile` rename a new file over the name, and
 * `writeInPlace` refuses such a file.
 *
 * @module
 */

import { join } from "node:path";

/**
 * What a name in a tree holds: a regular file's bytes and permission bits, a symbolic link's target, or — when the
 * caller counts hard links ({@link ReadOptions}) — a file with links outside the tree, not read: how many links it
 * has, how many the tree holds, and which file it is.
 */
export type Entry =
  | { kind: "file"; data: Uint8Array; mode: number }
  | { kind: "link"; target: string }
  | { kind: "hardlinked"; links: number; inside: number; dev: number; ino: number | null };

/** Options of {@link findEntry} and {@link readEntry}. */
export interface ReadOptions {
  /**
   * How many hard links of the file `info` (its `lstat`) the caller's tree holds, this name included: a file with more
   * links than that is not read but reported as `hardlinked`, and one that is read must still have, once opened, the
   * link count its `lstat` showed.
   */
  linksInside?: (info: Deno.FileInfo) => number;
}

/** A symbolic link on the way to a name: `at` is the link's name, relative to the base like the name itself. */
export interface LinkOnTheWay {
  at: string;
  target: string;
}

/** A folder between the base and an entry, as checked. */
interface Folder {
  path: string;
  dev: number;
  ino: number | null;
}

/** The components of a name; a name that could leave the base is a caller's error. */
function components(name: string): string[] {
  if (name === "") return [];
  const parts = name.split("/");
  if (parts.some((part) => part === "" || part === "." || part === "..")) {
    throw new TypeError(`${JSON.stringify(name)} is not a plain relative name (empty, "." or ".." component)`);
  }
  return parts;
}

async function lstatOrUndefined(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return undefined;
    throw error;
  }
}

/**
 * The folders of `parts` under `base`, each `lstat`ed: stops at the first that is missing, not a folder, or a link.
 */
async function walkFolders(base: string, parts: string[]): Promise<{
  folders: Folder[];
  link?: LinkOnTheWay;
  missing?: boolean;
  /** A file (not a folder) on the way. */
  blocked?: boolean;
}> {
  const folders: Folder[] = [];
  let path = base;
  for (let index = 0; index < parts.length; index++) {
    path = join(path, parts[index]!);
    const info = await lstatOrUndefined(path);
    if (!info) return { folders, missing: true };
    if (info.isSymlink) {
      return { folders, link: { at: parts.slice(0, index + 1).join("/"), target: await Deno.readLink(path) } };
    }
    if (!info.isDirectory) return { folders, blocked: true };
    folders.push({ path, dev: info.dev, ino: info.ino });
  }
  return { folders };
}

/** Whether every folder is still the same folder, not a link. */
async function unchanged(folders: Folder[]): Promise<boolean> {
  for (const folder of folders) {
    const info = await lstatOrUndefined(folder.path);
    if (!info || info.isSymlink || !info.isDirectory || info.dev !== folder.dev || info.ino !== folder.ino) {
      return false;
    }
  }
  return true;
}

function changedWhileRead(path: string): Error {
  return new Error(`${path} changed while the tracker read it (a folder on the way was replaced); run it again`);
}

function changedWhileWritten(path: string): Error {
  return new Error(
    `${path} changed while the tracker wrote it (a folder on the way was replaced); check it and run again`,
  );
}

/**
 * The first symbolic link among the folders between `base` and `name` (not `name` itself), or `undefined`.
 *
 * @example
 * ```ts
 * await linkOnTheWay("/srv/homed/knowledge", "notes/a.md"); // { at: "notes", target: "/home/eve" } when notes is a link
 * ```
 */
export async function linkOnTheWay(base: string, name: string): Promise<LinkOnTheWay | undefined> {
  return (await walkFolders(base, components(name).slice(0, -1))).link;
}

/**
 * The `lstat` of `name` under `base` (a link's own), or `undefined` when it is missing or a link lies on the way.
 *
 * @example
 * ```ts
 * (await lstatEntry("/var/lib/homed-overlay/upper/knowledge", "tea/content.md"))?.isFile; // true
 * ```
 */
export async function lstatEntry(base: string, name: string): Promise<Deno.FileInfo | undefined> {
  const parts = components(name);
  const way = await walkFolders(base, parts.slice(0, -1));
  if (way.link || way.missing || way.blocked) return undefined;
  const info = parts.length ? await lstatOrUndefined(join(base, ...parts)) : await lstatOrUndefined(base);
  if (!(await unchanged(way.folders))) throw changedWhileRead(join(base, ...parts));
  return info;
}

/**
 * The entries of the folder `name` under `base` (`""`: the base itself), or `undefined` when it is missing, not a
 * folder, a link or behind one.
 *
 * @example
 * ```ts
 * const entries = await listFolder("/srv/homed/knowledge", "tea"); // [{ name: "content.md", isFile: true, … }]
 * ```
 */
export async function listFolder(base: string, name: string): Promise<Deno.DirEntry[] | undefined> {
  const parts = components(name);
  const way = await walkFolders(base, parts);
  if (way.link || way.missing || way.blocked) return undefined;
  const path = join(base, ...parts);
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return undefined;
    throw error;
  }
  if (!(await unchanged(way.folders))) throw changedWhileRead(path);
  return entries;
}

/**
 * What `name` under `base` holds: `"missing"` when nothing is there, `"other"` when a link or a file lies on the way
 * or it is a folder or a special file; else the file's bytes or the link's target (never followed), or with
 * `options.linksInside` a file linked from outside the caller's tree, unread.
 *
 * @example
 * ```ts
 * const found = await findEntry("/opt/homed.ro/knowledge", "tea/content.md");
 * if (typeof found === "object" && found.kind === "file") found.data; // the deployed bytes
 * const counted = await findEntry("/srv/homed/knowledge", "leak.md", { linksInside: () => 1 });
 * if (typeof counted === "object" && counted.kind === "hardlinked") counted.links; // 2: not read
 * ```
 */
export async function findEntry(
  base: string,
  name: string,
  options: ReadOptions = {},
): Promise<Entry | "missing" | "other"> {
  const parts = components(name);
  if (!parts.length) throw new TypeError("findEntry: name the entry inside the base");
  const way = await walkFolders(base, parts.slice(0, -1));
  if (way.link || way.blocked) return "other";
  if (way.missing) return "missing";
  const path = join(base, ...parts);
  const info = await lstatOrUndefined(path);
  let found: Entry | "missing" | "other";
  if (!info) found = "missing";
  else if (info.isSymlink) found = { kind: "link", target: await Deno.readLink(path) };
  else if (!info.isFile) found = "other";
  else if (options.linksInside && (info.nlink ?? 1) > options.linksInside(info)) {
    const inside = options.linksInside(info);
    found = { kind: "hardlinked", links: info.nlink ?? 1, inside, dev: info.dev, ino: info.ino };
  } else {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) throw changedWhileRead(path);
      throw error;
    }
    try {
      const opened = await file.stat();
      if (opened.dev !== info.dev || opened.ino !== info.ino) throw changedWhileRead(path);
      // Linked from elsewhere since its lstat: the count it was judged by no longer holds.
      if (options.linksInside && opened.nlink !== info.nlink) throw changedWhileRead(path);
      const data = new Uint8Array(await new Response(file.readable).arrayBuffer());
      found = { kind: "file", data, mode: (info.mode ?? 0o644) & 0o777 };
    } finally {
      try {
        file.close();
      } catch {
        // The readable stream closed it.
      }
    }
  }
  if (!(await unchanged(way.folders))) throw changedWhileRead(path);
  return found;
}

/**
 * {@link findEntry} for the tracker's comparisons: `undefined` for anything that is not a file or a link in the tree.
 *
 * @example
 * ```ts
 * const entry = await readEntry("/srv/homed/knowledge", "notes/a.md"); // undefined when notes is a link
 * ```
 */
export async function readEntry(base: string, name: string, options: ReadOptions = {}): Promise<Entry | undefined> {
  const found = await findEntry(base, name, options);
  return typeof found === "object" ? found : undefined;
}

/** The folders of `parts` under `base`, made where missing; a link or a file on the way is refused. */
async function makeFolders(base: string, parts: string[]): Promise<Folder[]> {
  const folders: Folder[] = [];
  let path = base;
  for (const part of parts) {
    path = join(path, part);
    let info = await lstatOrUndefined(path);
    if (!info) {
      // Right before the mkdir, the folders above are still the ones checked.
      if (!(await unchanged(folders))) throw changedWhileWritten(path);
      try {
        await Deno.mkdir(path);
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      }
      info = await lstatOrUndefined(path);
    }
    if (info?.isSymlink) {
      throw new Error(`${path} is a symbolic link, and the tracker never writes through a link`);
    }
    if (!info?.isDirectory) throw new Error(`${path} is not a folder, so the tracker cannot write into it`);
    folders.push({ path, dev: info.dev, ino: info.ino });
  }
  if (!(await unchanged(folders))) throw changedWhileWritten(path);
  return folders;
}

/** Our own temporary file, wherever a swapped folder put it: removed only when it is the one opened. */
async function removeOwnTemporary(temporary: string, opened: Deno.FileInfo | undefined): Promise<void> {
  const left = await lstatOrUndefined(temporary);
  if (left && opened && left.dev === opened.dev && left.ino === opened.ino) {
    await Deno.remove(temporary).catch(() => {});
  }
}

async function writeAll(file: Deno.FsFile, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) written += await file.write(data.subarray(written));
  await file.sync();
}

/**
 * Writes `name` under `base` atomically (a temporary sibling, fsync, rename), making missing folders; every folder on
 * the way is checked right before each step, and a link at `name` itself is replaced, never written through.
 *
 * @example
 * ```ts
 * await writeEntryFile("/srv/homed/knowledge", "tea/content.md", new TextEncoder().encode("# Tea\n"), 0o644);
 * ```
 */
export async function writeEntryFile(base: string, name: string, data: Uint8Array, mode: number): Promise<void> {
  const parts = components(name);
  if (!parts.length) throw new TypeError("writeEntryFile: name the file inside the base");
  const folders = await makeFolders(base, parts.slice(0, -1));
  const path = join(base, ...parts);
  const temporary = join(base, ...parts.slice(0, -1), `.${crypto.randomUUID()}.tmp`);
  const file = await Deno.open(temporary, { write: true, createNew: true, mode });
  let opened: Deno.FileInfo | undefined;
  // Still the folders checked, and the temporary file there the one opened: checked before each step.
  const same = async () =>
    await unchanged(folders) && opened !== undefined && (await lstatOrUndefined(temporary))?.ino === opened.ino;
  let renamed = false;
  try {
    try {
      opened = await file.stat();
      if (!(await same())) throw changedWhileWritten(path);
      await writeAll(file, data);
    } finally {
      file.close();
    }
    if (!(await same())) throw changedWhileWritten(path);
    await Deno.chmod(temporary, mode);
    if (!(await same())) throw changedWhileWritten(path);
    // rename replaces a link at `path` itself; it never writes through one.
    await Deno.rename(temporary, path);
    renamed = true;
  } finally {
    if (!renamed) await removeOwnTemporary(temporary, opened);
  }
  const written = await lstatOrUndefined(path);
  if (!(await unchanged(folders)) || written?.ino !== opened?.ino) throw changedWhileWritten(path);
}

/**
 * Overwrites the file `name` directly in `base` in place (for the config file and the persona, whose folder may not
 * be homed's to make a temporary file in): the file opened must be the one `lstat` showed, so a link swapped in is
 * never written through; a missing file is created only where nothing, not even a link, is. A file with more than
 * one hard link is refused (writing it would change the file at its other links too): {@link replaceFile} is for it.
 *
 * @example
 * ```ts
 * await writeInPlace("/etc/homed", "homed.yaml", new TextEncoder().encode("daemon: {}\n"), 0o640);
 * ```
 */
export async function writeInPlace(base: string, name: string, data: Uint8Array, mode: number): Promise<void> {
  const parts = components(name);
  if (parts.length !== 1) {
    throw new TypeError(`writeInPlace: ${JSON.stringify(name)} must be a file directly in the base`);
  }
  const path = join(base, name);
  const info = await lstatOrUndefined(path);
  if (info && !info.isFile) {
    throw new Error(
      `${path} is ${info.isSymlink ? "a symbolic link" : "not a regular file"}; the tracker does not write it`,
    );
  }
  if (info && (info.nlink ?? 1) > 1) throw hardLinkedInPlace(path, info.nlink ?? 1);
  const file = info
    ? await Deno.open(path, { write: true })
    : await Deno.open(path, { write: true, createNew: true, mode });
  let opened: Deno.FileInfo;
  try {
    opened = await file.stat();
    if (info && (opened.dev !== info.dev || opened.ino !== info.ino)) {
      throw new Error(`${path} was replaced while the tracker opened it; nothing was written`);
    }
    // Checked on the file opened too: a link made since the lstat.
    if ((opened.nlink ?? 1) > 1) throw hardLinkedInPlace(path, opened.nlink ?? 1);
    await file.truncate(0);
    await writeAll(file, data);
  } finally {
    file.close();
  }
  // chmod follows a link: only the file just written, checked right before.
  const now = await lstatOrUndefined(path);
  if (!now?.isFile || now.dev !== opened.dev || now.ino !== opened.ino) throw changedWhileWritten(path);
  await Deno.chmod(path, mode);
}

function hardLinkedInPlace(path: string, links: number): Error {
  return new Error(
    `${path} has ${links} hard links; the tracker never writes into such a file in place (the file at its other ` +
      `link${links > 2 ? "s" : ""} would change too); nothing was written`,
  );
}

/**
 * Replaces the file `name` directly in `base` by a new one holding `data`: written in `scratch` (a folder of the
 * caller's, checked by it, on the same file system), fsynced, then renamed over the name — for a file of a single-file
 * part with more than one hard link, whose folder may not be homed's to make a temporary file in. The other links keep
 * the old file; a link at the name itself is replaced, never written through.
 *
 * @example
 * ```ts
 * const data = new TextEncoder().encode("daemon: {}\n");
 * await replaceFile("/etc/homed", "homed.yaml", data, 0o640, "/var/lib/homed/tracker");
 * ```
 */
export async function replaceFile(
  base: string,
  name: string,
  data: Uint8Array,
  mode: number,
  scratch: string,
): Promise<void> {
  const parts = components(name);
  if (parts.length !== 1) {
    throw new TypeError(`replaceFile: ${JSON.stringify(name)} must be a file directly in the base`);
  }
  const path = join(base, name);
  const temporary = join(scratch, `.${crypto.randomUUID()}.tmp`);
  const file = await Deno.open(temporary, { write: true, createNew: true, mode });
  let opened: Deno.FileInfo | undefined;
  let renamed = false;
  try {
    try {
      opened = await file.stat();
      await writeAll(file, data);
    } finally {
      file.close();
    }
    await Deno.chmod(temporary, mode);
    if ((await lstatOrUndefined(temporary))?.ino !== opened.ino) throw changedWhileWritten(path);
    try {
      await Deno.rename(temporary, path);
    } catch (error) {
      const why = (error as Error).message;
      throw new Error(`${path} could not be replaced by a new file (${why}); nothing was written`, { cause: error });
    }
    renamed = true;
  } finally {
    if (!renamed) await removeOwnTemporary(temporary, opened);
  }
  if ((await lstatOrUndefined(path))?.ino !== opened?.ino) throw changedWhileWritten(path);
}

/**
 * Removes the entry `name` under `base` — a file, a link (the link itself; its target is left alone), a name of a
 * file with other hard links (the file stays at those) or an empty folder — after checking that no folder on the way
 * is a link; `expect` says what must be there.
 *
 * @example
 * ```ts
 * await removeEntry("/srv/homed/knowledge", "notes", { kind: "link", target: "/home/eve" });
 * ```
 */
export async function removeEntry(
  base: string,
  name: string,
  expect:
    | { kind: "file" }
    | { kind: "link"; target: string }
    | { kind: "hardlinked"; dev: number; ino: number | null },
): Promise<void> {
  const parts = components(name);
  if (!parts.length) throw new TypeError("removeEntry: name the entry inside the base");
  const way = await walkFolders(base, parts.slice(0, -1));
  const path = join(base, ...parts);
  if (way.link) {
    throw new Error(`${join(base, way.link.at)} is a symbolic link, and the tracker never removes through a link`);
  }
  const info = way.missing || way.blocked ? undefined : await lstatOrUndefined(path);
  let matches: boolean;
  if (expect.kind === "file") matches = info?.isFile === true;
  else if (expect.kind === "link") matches = info?.isSymlink === true && await Deno.readLink(path) === expect.target;
  else {
    // Still that file, and still linked elsewhere: removing this name leaves it there.
    matches = info?.isFile === true && info.dev === expect.dev && info.ino === expect.ino && (info.nlink ?? 1) > 1;
  }
  if (!matches || !(await unchanged(way.folders))) {
    throw new Error(`${path} changed since the tracker looked at it; run it again`);
  }
  await Deno.remove(path);
}
