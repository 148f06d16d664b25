/**
 * Writes a file so that a crash leaves either the old or the new content, never a torn one; and, for what homed
 * acknowledges to a person (issue 38: a knowledge entry, a forgotten journal line), so that a power cut after the
 * reply cannot undo it either (`durable`: the folder is fsync'd after the rename, which is what makes the rename
 * itself survive). The one place this policy lives for files; `src/sqlite/durability.ts` is its SQLite half.
 *
 * @module
 */

import { dirname, join } from "node:path";

/** Options of {@link atomicWriteText}. */
export interface AtomicWriteOptions {
  /** Permission bits of the new file (default 0o600); set explicitly, so the umask does not change them. */
  mode?: number;
  /** Owner to give the new file; a `Deno.errors.PermissionDenied` when the process may not. */
  owner?: { uid: number | null; gid: number | null };
  /**
   * Called once the new content is on disk beside the target, just before it replaces the target. Returning false
   * cancels the replacement (the temporary file is removed, the target untouched) and makes the call return false.
   */
  beforeReplace?: () => Promise<boolean> | boolean;
  /**
   * Also fsync the folder after the rename, so the new name survives a power cut (default false: the content is
   * fsync'd either way, but the rename may be lost). For writes a person is told of.
   */
  durable?: boolean;
}

/**
 * Writes `text` to `path` through a temporary sibling, fsync and rename. Returns false when `beforeReplace` vetoed
 * the replacement.
 *
 * @example
 * ```ts
 * await atomicWriteText("/var/lib/homed/routes.json", JSON.stringify({ kitchen: "light.kitchen" }));
 * ```
 */
export function atomicWriteText(path: string, text: string, options: AtomicWriteOptions = {}): Promise<boolean> {
  return atomicWriteBytes(path, new TextEncoder().encode(text), options);
}

/**
 * {@link atomicWriteText} for bytes.
 *
 * @example
 * ```ts
 * const bytes = await Deno.readFile("/tmp/logo.png");
 * await atomicWriteBytes("/srv/homed/knowledge/logo.png", bytes, { mode: 0o644 });
 * ```
 */
export async function atomicWriteBytes(
  path: string,
  bytes: Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<boolean> {
  const temporary = join(dirname(path), `.${crypto.randomUUID()}.tmp`);
  const mode = options.mode ?? 0o600;
  let replaced = false;
  try {
    await writeAllAndSync(await Deno.open(temporary, { write: true, createNew: true, mode }), bytes);
    await Deno.chmod(temporary, mode);
    const owner = options.owner;
    if (owner && (owner.uid !== null || owner.gid !== null)) {
      const info = await Deno.stat(temporary);
      if (info.uid !== owner.uid || info.gid !== owner.gid) await Deno.chown(temporary, owner.uid, owner.gid);
    }
    if (options.beforeReplace && !(await options.beforeReplace())) return false;
    await Deno.rename(temporary, path);
    replaced = true;
    if (options.durable) await syncFolder(dirname(path));
    return true;
  } finally {
    if (!replaced) await Deno.remove(temporary).catch(() => {});
  }
}

/**
 * fsyncs the folder `dir`: the names made, renamed or removed in it reach the disk (a file's own fsync does not
 * cover its name).
 *
 * @example
 * ```ts
 * const dir = await Deno.makeTempDir();
 * await Deno.rename(await Deno.makeTempFile({ dir }), `${dir}/content.md`);
 * await syncFolder(dir);
 * ```
 */
export async function syncFolder(dir: string): Promise<void> {
  const folder = await Deno.open(dir, { read: true });
  try {
    await folder.sync();
  } finally {
    folder.close();
  }
}

/**
 * Overwrites `path` in place (owner and mode stay, for a file homed may not give back its owner) and fsyncs it before
 * returning. Not atomic: the fallback for when {@link atomicWriteText} may not be used.
 *
 * @example
 * ```ts
 * const path = await Deno.makeTempFile();
 * await writeTextInPlace(path, "# Tea\n");
 * ```
 */
export async function writeTextInPlace(path: string, text: string): Promise<void> {
  await writeAllAndSync(await Deno.open(path, { write: true, truncate: true }), new TextEncoder().encode(text));
}

/** Writes all of `bytes` to `file` (a write may take part of them), fsyncs it and closes it, whatever fails. */
async function writeAllAndSync(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  try {
    let written = 0;
    while (written < bytes.length) written += await file.write(bytes.subarray(written));
    await file.sync();
  } finally {
    file.close();
  }
}
