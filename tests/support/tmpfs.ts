/**
 * A real full or read-only disk for the storage tests: a tmpfs mounted as root. One probe decides whether this machine
 * can (ignored outside CI when it cannot; a failure under CI=true, as every outside need).
 *
 * @module
 */

import { outsideNeed } from "./outside_tool.ts";

/**
 * Runs `program` and throws with its standard error when it fails.
 *
 * @example
 * ```ts
 * await run("umount", ["/tmp/homed-tmpfs"]);
 * ```
 */
export async function run(program: string, args: string[]): Promise<void> {
  const { code, stderr } = await new Deno.Command(program, { args, stdin: "null", stdout: "null", stderr: "piped" })
    .output();
  if (code !== 0) throw new Error(`${program} ${args.join(" ")} failed: ${new TextDecoder().decode(stderr).trim()}`);
}

/** Whether a tmpfs can be mounted here (root, mount and umount), probed once. */
export const tmpfs = await outsideNeed("mounting a tmpfs (root, mount and umount)", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-tmpfs-probe-" });
  try {
    await run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]);
    await run("umount", [dir]);
    return undefined;
  } finally {
    await Deno.remove(dir);
  }
});

/**
 * Writes zeros to `path` until its disk is full to the last byte (smaller and smaller writes, down to one byte);
 * returns how many bytes it took.
 *
 * @example
 * ```ts
 * await fillDisk("/tmp/homed-tmpfs/filler"); // every later write there that needs a new block fails: ENOSPC
 * ```
 */
export async function fillDisk(path: string): Promise<number> {
  const file = await Deno.open(path, { create: true, write: true });
  let size = 0;
  try {
    for (let chunk = 1 << 20; chunk >= 1; chunk >>= 1) {
      const zeros = new Uint8Array(chunk);
      try {
        for (;;) size += await file.write(zeros);
      } catch (error) {
        if ((error as { code?: string }).code !== "ENOSPC") throw error;
      }
    }
  } finally {
    file.close();
  }
  return size;
}
