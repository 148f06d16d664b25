/**
 * How much room the data dir's disk has left (issue 38.6): a full disk is the storage fault that comes with a warning,
 * so homed reads it and says so before a write fails. Deno has no `statfs` of its own; Node's `fs.statfsSync` (in
 * Deno's `node:fs`) is one system call, needs nothing but the narrow `--allow-sys=statfs` beside the read right to the
 * folder, and never starts a program (`df` would need `--allow-run`, which the daemon does not get for this).
 *
 * @module
 */

import { statfsSync } from "node:fs";

/** One reading of a folder's file system, or why there is none. */
export type FreeSpace =
  | {
    /** Bytes an unprivileged process may still write (statfs `bavail`: root's reserve left out, as `df` shows). */
    free_bytes: number;
    /** The file system's size in bytes. */
    total_bytes: number;
  }
  | {
    /** Why the folder's free space could not be read, in a sentence that says what to do. */
    unknown: string;
  };

/** The right {@link freeSpace} needs beside read access to the folder: `--allow-sys=statfs`. */
export const FREE_SPACE_RIGHT = "statfs";

/**
 * Reads the free and total bytes of the file system `dir` is on; never throws.
 *
 * @example
 * ```ts
 * const space = freeSpace("/var/lib/homed");
 * if ("free_bytes" in space) console.log(`${formatBytes(space.free_bytes)} free of ${formatBytes(space.total_bytes)}`);
 * else console.warn(space.unknown); // e.g. without --allow-sys=statfs
 * ```
 */
export function freeSpace(dir: string): FreeSpace {
  try {
    const stats = statfsSync(dir);
    return { free_bytes: stats.bavail * stats.bsize, total_bytes: stats.blocks * stats.bsize };
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable && /sys/i.test(error.message)) {
      return {
        unknown: `homed may not read the free space of ${dir}: it needs --allow-sys=${FREE_SPACE_RIGHT} (start it ` +
          "with the flags of `homed flags`, or run `homed service install` again)",
      };
    }
    return { unknown: `cannot read the free space of ${dir}: ${(error as Error)?.message ?? String(error)}` };
  }
}

const UNITS = ["B", "KB", "MB", "GB", "TB", "PB"] as const;

/**
 * A byte count as people read it: 1024-based, one decimal below 10 of a unit ("512 B", "3.4 MB", "120 GB").
 *
 * @example
 * ```ts
 * formatBytes(268_435_456); // "256 MB"
 * formatBytes(1_610_612_736); // "1.5 GB"
 * ```
 */
export function formatBytes(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit === 0 || value >= 10 ? String(Math.round(value)) : value.toFixed(1).replace(/\.0$/, "");
  return `${shown} ${UNITS[unit]}`;
}
