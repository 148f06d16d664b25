/**
 * A real disk that goes read-only the way an SD card does, for the storage tests: an ext4 file system on a loop
 * device, mounted `errors=remount-ro`, whose image is a sparse file on a small tmpfs. Filling that tmpfs makes the loop
 * device's writes fail (the kernel logs "Buffer I/O error on device loopN"), jbd2 aborts the journal, and ext4 turns
 * itself read-only: every later write on it gets a real `EROFS` from the kernel, open files included — which
 * `mount -o remount,ro` cannot do while SQLite holds its databases open read-write (EBUSY).
 *
 * Found by experiment on Linux 6.18: once the journal is aborted, `mount -o remount,rw` reports success but the file
 * system stays read-only (mountinfo keeps `emergency_ro`), and `remount,ro` is refused; the way back is to stop the
 * writers, unmount, `e2fsck -fy` and mount again ({@link LoopExt4.repair}).
 *
 * One probe decides whether this machine can (ignored outside CI when it cannot; a failure under CI=true).
 *
 * @module
 */

import { join } from "node:path";
import { outsideNeed } from "./outside_tool.ts";
import { fillDisk, run, tmpfs } from "./tmpfs.ts";

/** Sizes of a {@link LoopExt4}. */
export interface LoopExt4Sizes {
  /** The tmpfs the image lives on (mount's `size=`), e.g. "32m": what the "SD card" can really hold. */
  tmpfsSize: string;
  /** The image's apparent size (sparse), e.g. "64m": what ext4 believes it has. */
  imageSize: string;
}

/** Runs `program` and returns its exit code and output (for tools whose non-zero codes carry meaning: e2fsck). */
async function output(program: string, args: string[]): Promise<{ code: number; text: string }> {
  const { code, stdout, stderr } = await new Deno.Command(program, { args, stdin: "null" }).output();
  const decoder = new TextDecoder();
  return { code, text: `${decoder.decode(stdout)}${decoder.decode(stderr)}`.trim() };
}

/**
 * An ext4 file system on a loop device whose image lives on a small tmpfs under `dir`: `dir/back` (the tmpfs and the
 * image) and `dir/data` (the mount point).
 *
 * @example
 * ```ts
 * const dir = await Deno.makeTempDir({ dir: "/tmp" });
 * const disk = await LoopExt4.create(dir, { tmpfsSize: "32m", imageSize: "64m" });
 * await Deno.writeTextFile(`${disk.mountPoint}/hello`, "hi\n");
 * await disk.failBacking(); // the next writes reach the "SD card" and fail: ext4 goes read-only
 * await disk.destroy();
 * ```
 */
export class LoopExt4 {
  /** Where the ext4 file system is mounted. */
  readonly mountPoint: string;
  /** The loop device, e.g. /dev/loop0. */
  readonly device: string;
  #back: string;
  #filler: string;
  #mounted = true;

  private constructor(mountPoint: string, device: string, back: string) {
    this.mountPoint = mountPoint;
    this.device = device;
    this.#back = back;
    this.#filler = join(back, "filler");
  }

  /**
   * Mounts a tmpfs at `dir/back`, makes a sparse ext4 image there, attaches it to a free loop device and mounts it at
   * `dir/data` with `errors=remount-ro` (as Raspberry Pi OS mounts its root) and `commit=1`, so the journal commits —
   * and meets a failing device — within a second of a write, not five.
   */
  static async create(dir: string, sizes: LoopExt4Sizes): Promise<LoopExt4> {
    const back = join(dir, "back");
    const mountPoint = join(dir, "data");
    await Deno.mkdir(back, { recursive: true });
    await Deno.mkdir(mountPoint, { recursive: true });
    await run("mount", ["-t", "tmpfs", "-o", `size=${sizes.tmpfsSize}`, "tmpfs", back]);
    const image = join(back, "disk.img");
    let device: string | undefined;
    try {
      // A sparse image: the tmpfs holds only the pages ext4 has written.
      const file = await Deno.open(image, { create: true, write: true });
      try {
        await file.truncate(parseSize(sizes.imageSize));
      } finally {
        file.close();
      }
      await run("mkfs.ext4", ["-q", "-F", image]);
      const attached = await output("losetup", ["--find", "--show", image]);
      if (attached.code !== 0) throw new Error(`losetup --find --show ${image} failed: ${attached.text}`);
      device = attached.text;
      await run("mount", ["-t", "ext4", "-o", "errors=remount-ro,commit=1", device, mountPoint]);
      return new LoopExt4(mountPoint, device, back);
    } catch (error) {
      if (device) await run("losetup", ["--detach", device]).catch(() => {});
      await run("umount", [back]).catch(() => {});
      throw error;
    }
  }

  /**
   * Fills the tmpfs under the image to the last byte: from now on every write that needs a new page of the image
   * (new data, the journal's next blocks) fails in the loop device, as a worn-out SD card's writes do.
   */
  async failBacking(): Promise<void> {
    await fillDisk(this.#filler);
  }

  /**
   * The way back after ext4 aborted its journal (call once nothing has files open on it): unmount, give the device
   * its space back, `e2fsck -fy` (replays the journal, fixes the counts), mount again. Returns e2fsck's output; throws
   * when e2fsck could not repair (exit code 4 or more: 0 is clean, 1 and 2 are "errors corrected").
   */
  async repair(): Promise<string> {
    await this.unmount();
    await Deno.remove(this.#filler).catch(() => {});
    const check = await output("e2fsck", ["-fy", this.device]);
    if (check.code >= 4) {
      throw new Error(`e2fsck -fy ${this.device} could not repair (code ${check.code}): ${check.text}`);
    }
    await run("mount", ["-t", "ext4", "-o", "errors=remount-ro,commit=1", this.device, this.mountPoint]);
    this.#mounted = true;
    return check.text;
  }

  /** Unmounts the ext4 file system (idempotent). */
  async unmount(): Promise<void> {
    if (!this.#mounted) return;
    await run("umount", [this.mountPoint]);
    this.#mounted = false;
  }

  /** Unmounts everything and detaches the loop device; the folders under `dir` stay for the caller to remove. */
  async destroy(): Promise<void> {
    const errors: unknown[] = [];
    for (
      const step of [
        () => this.unmount(),
        () => run("losetup", ["--detach", this.device]),
        () => run("umount", [this.#back]),
      ]
    ) {
      try {
        await step();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length) throw new AggregateError(errors, `Could not take ${this.device} apart`);
  }
}

/** Whether an ext4 image on a loop device can be made and mounted here (root, losetup, mkfs.ext4, e2fsck), probed once. */
export const loopExt4 = await outsideNeed(
  "an ext4 image on a loop device (root, losetup, mkfs.ext4, e2fsck)",
  async () => {
    if (tmpfs.missing) return tmpfs.missing;
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-loop-probe-" });
    try {
      const disk = await LoopExt4.create(dir, { tmpfsSize: "8m", imageSize: "8m" });
      await disk.destroy();
      return undefined;
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

/** "64m" → bytes. */
function parseSize(size: string): number {
  const match = /^(\d+)([kmg]?)$/i.exec(size);
  if (!match) throw new Error(`Not a size: ${size}`);
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase() as "" | "k" | "m" | "g"];
  return Number(match[1]) * unit;
}
