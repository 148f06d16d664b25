/**
 * The low-disk warning (issue 38.6): a disk that fills up is the one storage fault that gives notice, so on every
 * heartbeat homed reads the data dir's free space and, below `daemon.low_disk`, warns — in the log each time it
 * turns low, and its listeners (the owner's notice) at most once a day while it stays low, so a full disk is heard of
 * before a write fails and is not repeated every 15 seconds. The reading is in `/api/status` (`storage.free_bytes`,
 * `storage.total_bytes`, `storage.low`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { type FreeSpace, freeSpace } from "../fs/free_space.ts";
import type { Service } from "./service.ts";
import type { StoreHealth } from "../fs/store_health.ts";

/** How often, at most, the listeners hear of a disk that stays low. */
export const LOW_DISK_EVERY_MS = 86_400_000;

/** The re-check of degraded stores waits for at least this much free space (1 MiB), when the free space is known. */
export const RECHECK_FREE_BYTES = 1024 * 1024;

/** The data dir's disk as `/api/status` shows it under `storage`. */
export interface DiskSpaceBody {
  /** Bytes homed may still write there; null when it could not be read (`free_space_unknown` says why). */
  free_bytes: number | null;
  /** The disk's size in bytes; null when it could not be read. */
  total_bytes: number | null;
  /** Whether `free_bytes` is below `low_below`. */
  low: boolean;
  /** `daemon.low_disk` in bytes; 0: never low. */
  low_below: number;
  /** ISO time of the last reading; null before the first. */
  checked_at: string | null;
  /** Why the free space is unknown, when it is. */
  free_space_unknown?: string;
}

/** What a listener is told when the disk is low. */
export interface LowDisk {
  /** The data dir. */
  dir: string;
  free_bytes: number;
  total_bytes: number;
  /** `daemon.low_disk` in bytes. */
  low_below: number;
}

/** Options of {@link DiskWatch}. */
export interface DiskWatchOptions {
  /** The data dir. */
  dir: string;
  /** `daemon.low_disk` in bytes; 0 never warns. */
  lowBelow: number;
  clock: Pick<Clock, "now">;
  logger: Logger;
  /**
   * The stores' health: while a store is degraded, each heartbeat re-checks whether its folder takes a write again
   * ({@link StoreHealth.recheck}), so a store that rarely writes is not left degraded after the disk recovers.
   */
  health?: Pick<StoreHealth, "degraded" | "recheck">;
  /** Reads the free space (tests give a fake disk); default {@link freeSpace}. */
  measure?: (dir: string) => FreeSpace;
}

/** Reads the data dir's free space on start and on every heartbeat, and warns of a low disk. */
export class DiskWatch implements Service {
  readonly name = "disk";
  #options: DiskWatchOptions;
  #space: DiskSpaceBody;
  #warnedAt: number | undefined;
  #unknownLogged = false;
  #listeners = new Set<(low: LowDisk) => void>();

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   *
   * const disk = new DiskWatch({ dir: "/var/lib/homed", lowBelow: 500 * 1024 ** 2, clock: systemClock, logger: log() });
   * const stop = disk.onLow((low) => console.warn(`${low.dir}: only ${low.free_bytes} bytes free`));
   * await disk.start(); // reads once; the service host then reads again on every heartbeat
   * disk.space().low; // true below 500 MB free
   * stop();
   * ```
   */
  constructor(options: DiskWatchOptions) {
    this.#options = options;
    this.#space = { free_bytes: null, total_bytes: null, low: false, low_below: options.lowBelow, checked_at: null };
  }

  start(): Promise<void> {
    this.check();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  heartbeat(): void {
    this.check();
    const health = this.#options.health;
    // A disk with only a few pages free would take the probe but not the stores' writes: the episode would flap.
    const free = this.#space.free_bytes;
    if (health?.degraded.length && (free === null || free >= RECHECK_FREE_BYTES)) {
      const cleared = health.recheck();
      if (cleared.length) {
        this.#options.logger.info("The disk takes writes again: {stores} no longer degraded", {
          stores: cleared.join(", "),
        });
      }
    }
  }

  status(): Record<string, unknown> {
    return { ...this.#space };
  }

  /** The last reading. */
  space(): DiskSpaceBody {
    return { ...this.#space };
  }

  /** Calls `listener` when the disk is low: at once, then at most once a day while it stays low. Returns the unsubscribe. */
  onLow(listener: (low: LowDisk) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Reads the free space now, warns when it is due, and returns the reading. */
  check(): DiskSpaceBody {
    const { dir, lowBelow, clock, logger } = this.#options;
    const now = clock.now();
    const read = (this.#options.measure ?? freeSpace)(dir);
    const checkedAt = new Date(now).toISOString();
    if ("unknown" in read) {
      if (!this.#unknownLogged) logger.warning("{why}", { why: read.unknown });
      this.#unknownLogged = true;
      this.#space = { ...this.#space, free_bytes: null, total_bytes: null, low: false, checked_at: checkedAt };
      this.#space.free_space_unknown = read.unknown;
      return this.space();
    }
    const wasLow = this.#space.low;
    const low = read.free_bytes < lowBelow;
    this.#space = { ...read, low, low_below: lowBelow, checked_at: checkedAt };
    if (low && !wasLow) {
      logger.warning(
        "The disk of {dir} is nearly full: {free_bytes} bytes free of {total_bytes} (daemon.low_disk: " +
          "{low_below}); homed's writes fail when it is full",
        { dir, ...read, low_below: lowBelow },
      );
    } else if (!low && wasLow) {
      logger.info("The disk of {dir} has room again: {free_bytes} bytes free", { dir, ...read });
    }
    if (low && (this.#warnedAt === undefined || now - this.#warnedAt >= LOW_DISK_EVERY_MS)) {
      this.#warnedAt = now;
      const warning: LowDisk = { dir, ...read, low_below: lowBelow };
      for (const listener of this.#listeners) {
        try {
          listener(warning);
        } catch (error) {
          logger.warning("A low-disk listener failed: {error}", { error });
        }
      }
    }
    return this.space();
  }
}
