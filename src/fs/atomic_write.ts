/**
 * Writes a file so that a crash leaves either the old or the new content, never a torn one.
 *
 * @module
 */

import { dirname, join } from "node:path";

/**
 * Writes `text` to `path` through a temporary sibling, fsync and rename.
 *
 * @example
 * ```ts
 * await atomicWriteText("/var/lib/homed/routes.json", JSON.stringify(routes));
 * ```
 */
export async function atomicWriteText(path: string, text: string): Promise<void> {
  const temporary = join(dirname(path), `.${crypto.randomUUID()}.tmp`);
  const file = await Deno.open(temporary, { write: true, createNew: true, mode: 0o600 });
  try {
    const bytes = new TextEncoder().encode(text);
    let written = 0;
    while (written < bytes.length) written += await file.write(bytes.subarray(written));
    await file.sync();
  } finally {
    file.close();
  }
  try {
    await Deno.rename(temporary, path);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
}
