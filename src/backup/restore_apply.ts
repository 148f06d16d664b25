/**
 * Restore's swap, once the archive passed every check: what is in each part's place here is checked to be of the
 * part's kind, then the parts are swapped in move by move — what is there now aside into `previous`, the staged
 * entries in — each move recorded, so that when one fails everything moved so far is moved back (newest first) and
 * the error says what was put back.
 *
 * @module
 */

import { dirname, join, resolve, sep } from "node:path";
import type { HomePart } from "../config/parts.ts";
import { BACKUP_OWN, type PartName } from "./backup_layout.ts";
import { exists, move, removeEmptyFolders } from "./file_moves.ts";
import { partOf } from "./member_checks.ts";
import type { Unpacked } from "./restore_unpack.ts";

/**
 * What is in each part's place here must be of the part's kind; a file part whose folder is missing needs the right
 * to make it (restore's rights name the file, not its folder).
 *
 * @example
 * ```ts
 * import type { HomePart } from "../config/parts.ts";
 *
 * declare const applied: HomePart[];
 * await checkHere(applied); // throws, saying nothing was restored, when a part's place holds the wrong kind
 * ```
 */
export async function checkHere(roots: HomePart[]): Promise<void> {
  for (const root of roots) {
    const info = await Deno.stat(root.path).catch(() => undefined);
    if (info && root.kind === "dir" && !info.isDirectory) {
      throw new Error(`${root.path} (${root.name}) is a file here, not a folder; nothing was restored`);
    }
    if (info && root.kind === "file" && info.isDirectory) {
      throw new Error(`${root.path} (${root.name}) is a folder here, not a file; nothing was restored`);
    }
    const folder = dirname(root.path);
    if (
      !info && root.kind === "file" &&
      Deno.permissions.querySync({ name: "write", path: folder }).state !== "granted" &&
      Deno.permissions.querySync({ name: "read", path: folder }).state === "granted" && !(await exists(folder))
    ) {
      throw new Error(
        `the folder of ${root.path} (${root.name}) does not exist and restore may not make it; nothing was restored`,
      );
    }
  }
}

/**
 * Swaps the staged parts in, recording every move; when one fails, moves everything back (newest first) and says
 * so. What is there now goes to `previous`.
 *
 * @example
 * ```ts
 * import type { HomePart } from "../config/parts.ts";
 * import type { Unpacked } from "./restore_unpack.ts";
 *
 * declare const roots: HomePart[];
 * declare const unpacked: Unpacked;
 * await apply(roots, roots, unpacked, "/var/lib/homed/.restore-1", "/var/lib/homed/.before-restore-1", "homed.tar.gz");
 * ```
 */
export async function apply(
  applied: HomePart[],
  roots: HomePart[],
  unpacked: Unpacked,
  staging: string,
  previous: string,
  label: string,
): Promise<void> {
  const moves: Array<{ from: string; to: string }> = [];
  const made: string[] = [];
  const step = async (from: string, to: string, aside: boolean) => {
    try {
      await move(from, to);
    } catch (error) {
      const what = aside ? `moving ${from} aside` : `putting ${to} in place`;
      throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
    }
    moves.push({ from, to });
  };
  const present = new Set([...unpacked.staged.keys()].map((path) => partOf(path, label)));
  try {
    for (const root of applied) {
      const others = roots.filter((other) => other !== root).map((other) => resolve(other.path));
      if (root.kind === "file") {
        if (!present.has(root.name as PartName)) continue;
        if (await exists(root.path)) await step(root.path, join(previous, root.name), true);
        await step(join(staging, root.name), root.path, false);
        continue;
      }
      if (!(await exists(root.path))) {
        await Deno.mkdir(root.path, { recursive: true });
        made.push(root.path);
      }
      // Aside: everything but the parts living inside this one (and, in the data dir, backup's own folders); a folder
      // holding such a part is gone through instead of moved whole.
      const aside = async (live: string, kept: string, top: boolean): Promise<void> => {
        for (const entry of await Array.fromAsync(Deno.readDir(live))) {
          const path = resolve(live, entry.name);
          if (others.includes(path) || (top && root.name === "data" && BACKUP_OWN.test(entry.name))) continue;
          if (entry.isDirectory && others.some((other) => other.startsWith(path + sep))) {
            await aside(path, join(kept, entry.name), false);
          } else {
            await step(path, join(kept, entry.name), true);
          }
        }
      };
      // In: a staged entry whose place is still taken is one of those folders (checked when unpacking), gone into.
      const putIn = async (from: string, live: string): Promise<void> => {
        for (const entry of await Array.fromAsync(Deno.readDir(from))) {
          const to = join(live, entry.name);
          if (entry.isDirectory && await exists(to)) await putIn(join(from, entry.name), to);
          else await step(join(from, entry.name), to, false);
        }
      };
      await aside(root.path, join(previous, root.name), true);
      if (await exists(join(staging, root.name))) await putIn(join(staging, root.name), root.path);
    }
  } catch (error) {
    const failed: string[] = [];
    for (const { from, to } of moves.reverse()) {
      try {
        await move(to, from);
      } catch (undo) {
        failed.push(`${to} → ${from} (${(undo as Error).message})`);
      }
    }
    for (const dir of made) await Deno.remove(dir).catch(() => {});
    if (failed.length === 0) await removeEmptyFolders(previous);
    throw new Error(
      `could not put ${label} in place (${(error as Error).message}); ` +
        (failed.length === 0
          ? "every file moved was put back, nothing changed"
          : `moving back failed for ${failed.join(", ")}; the rest of what was there is in ${previous}`),
      { cause: error },
    );
  }
}
