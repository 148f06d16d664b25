/**
 * The on-disk cache of media homed received (photos, voice notes, files), so a message can refer to a file by a
 * short id instead of carrying its bytes, and a file sent twice is kept once. Files are named by their SHA-256 and
 * extension, written beside their final name and renamed into place (a crash never leaves half a file under a real
 * name), and the folder is bounded: past `maxBytes` the least recently used files go first. A file's last use is its
 * modification time, so the order survives a restart.
 *
 * @module
 */

import { join } from "node:path";
import type { Clock } from "../clock.ts";
import { atomicWriteBytes } from "../fs/atomic_write.ts";
import { faultAdvice, storageFault, type StoreHealth } from "../fs/store_health.ts";
import { sha256Hex } from "../text/sha256_hex.ts";
import { escapeControl } from "../text/untrusted.ts";
import { extensionFor } from "../fs/media_type.ts";

/** A file in the cache. */
export interface MediaRef {
  /** `<sha256 hex>.<ext>`: the content's hash and the extension of its type. */
  id: string;
  /** The MIME type it was put with. */
  mime: string;
  /** Its size in bytes. */
  size: number;
}

/** Options of {@link MediaCache.open}. */
export interface MediaCacheOptions {
  /** The folder of the cache (created when missing); nothing else should write there. */
  dir: string;
  /** The most bytes the cache keeps (the newest file stays even when it alone is larger). */
  maxBytes: number;
  /** Gives the last-use times. */
  clock: Clock;
  /**
   * Where a write that fails for the disk is recorded (issue 38.2: `/api/status` `storage.degraded`). On a full disk
   * the cache first gives space back — its oldest files first — and refuses the new file only when none is left.
   */
  health?: Pick<StoreHealth, "failed" | "succeeded"> | undefined;
}

/** What {@link MediaCache.status} reports. */
export interface MediaCacheStatus {
  files: number;
  bytes: number;
  max_bytes: number;
}

/** A cache id: 64 lower-case hex digits, a dot, a short extension. Nothing else ever reaches the file system. */
export const MEDIA_ID = /^[0-9a-f]{64}\.[a-z0-9]{1,8}$/;
/** The temporary files of `atomicWriteBytes`, left behind when homed stopped in the middle of a write. */
const LEFTOVER = /^\.[0-9a-f-]{36}\.tmp$/;

interface Entry {
  size: number;
}

function isNotFound(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound;
}

/** A bounded, content-addressed folder of media files, least recently used evicted first. */
export class MediaCache {
  readonly #dir: string;
  readonly #maxBytes: number;
  readonly #clock: Clock;
  readonly #health: Pick<StoreHealth, "failed" | "succeeded"> | undefined;
  /** Least recently used first: a use moves an entry to the end. */
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  private constructor(options: MediaCacheOptions) {
    this.#dir = options.dir;
    this.#maxBytes = options.maxBytes;
    this.#clock = options.clock;
    this.#health = options.health;
  }

  /**
   * Opens (or creates) the cache in `dir`: the files already there are listed with their modification time as last
   * use, temporary files of interrupted writes are deleted, and the oldest go when they are over `maxBytes`.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const cache = await MediaCache.open({ dir: "/var/lib/homed/media", maxBytes: 200 * 1024 * 1024, clock: systemClock });
   * cache.status(); // { files: 12, bytes: 3481092, max_bytes: 209715200 }
   * ```
   */
  static async open(options: MediaCacheOptions): Promise<MediaCache> {
    if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes <= 0) {
      throw new RangeError(
        `The media cache size limit must be a positive whole number of bytes; got ${options.maxBytes}`,
      );
    }
    const cache = new MediaCache(options);
    await Deno.mkdir(options.dir, { recursive: true, mode: 0o700 });
    const found: Array<{ id: string; size: number; used: number }> = [];
    for await (const entry of Deno.readDir(options.dir)) {
      if (!entry.isFile) continue; // links and folders are not ours to follow or count
      const path = join(options.dir, entry.name);
      if (LEFTOVER.test(entry.name)) {
        await Deno.remove(path).catch((error) => {
          if (!isNotFound(error)) throw error;
        });
      } else if (MEDIA_ID.test(entry.name)) {
        try {
          const info = await Deno.lstat(path);
          found.push({ id: entry.name, size: info.size, used: info.mtime?.getTime() ?? 0 });
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      }
    }
    found.sort((a, b) => a.used - b.used || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const { id, size } of found) cache.#remember(id, size);
    await cache.#evict(undefined);
    return cache;
  }

  /**
   * Stores `bytes` under their hash and the extension of `mime` and returns the reference; the same content put
   * again is the same file (now the most recently used). Older files go when the cache is over its limit.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const cache = await MediaCache.open({ dir: "/tmp/homed-media", maxBytes: 1024 * 1024, clock: systemClock });
   * const ref = await cache.put(new Uint8Array([0x89, 0x50, 0x4e, 0x47]), "image/png");
   * ref.id; // "0f4636c78f65d3639ece5a064b5ae753e3408614a14fb18ab4d7540d2c248543.png"
   * ```
   */
  async put(bytes: Uint8Array, mime: string): Promise<MediaRef> {
    const id = `${await sha256Hex(bytes)}.${extensionFor(mime)}`;
    const path = join(this.#dir, id);
    if (!(this.#entries.has(id) && await this.#touch(id))) {
      await this.#write(id, path, bytes);
      await this.#stamp(path);
      this.#remember(id, bytes.byteLength);
    }
    await this.#evict(id);
    return { id, mime, size: bytes.byteLength };
  }

  /**
   * The bytes of a cached file (now the most recently used), or undefined when the cache does not have it. An id
   * that is not a cache id (`../x`, `a/b`) is a TypeError, and the file system is not touched.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const cache = await MediaCache.open({ dir: "/tmp/homed-media", maxBytes: 1024 * 1024, clock: systemClock });
   * const bytes = await cache.read("0f4636c78f65d3639ece5a064b5ae753e3408614a14fb18ab4d7540d2c248543.png");
   * bytes?.length; // 4, or undefined once evicted
   * ```
   */
  async read(id: string): Promise<Uint8Array | undefined> {
    checkId(id);
    if (!this.#entries.has(id)) return undefined;
    try {
      const bytes = await Deno.readFile(join(this.#dir, id));
      await this.#touch(id);
      return bytes;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.#forget(id);
      return undefined;
    }
  }

  /**
   * Whether the cache has the file (a look does not count as a use). An id that is not a cache id is a TypeError.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const cache = await MediaCache.open({ dir: "/tmp/homed-media", maxBytes: 1024 * 1024, clock: systemClock });
   * await cache.has("0f4636c78f65d3639ece5a064b5ae753e3408614a14fb18ab4d7540d2c248543.png"); // true or false
   * ```
   */
  async has(id: string): Promise<boolean> {
    checkId(id);
    if (!this.#entries.has(id)) return false;
    try {
      await Deno.lstat(join(this.#dir, id));
      return true;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.#forget(id);
      return false;
    }
  }

  /**
   * How many files and bytes the cache holds, and its limit (for the status page).
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const cache = await MediaCache.open({ dir: "/tmp/homed-media", maxBytes: 1024 * 1024, clock: systemClock });
   * cache.status().max_bytes; // 1048576
   * ```
   */
  status(): MediaCacheStatus {
    return { files: this.#entries.size, bytes: this.#bytes, max_bytes: this.#maxBytes };
  }

  /**
   * Writes a new file; on a full disk the least recently used files are deleted, one at a time, until it fits — and
   * when none is left, the file is refused naming the disk (no half file is left: the write is atomic).
   */
  async #write(id: string, path: string, bytes: Uint8Array): Promise<void> {
    for (;;) {
      try {
        await atomicWriteBytes(path, bytes, { mode: 0o600 });
        this.#health?.succeeded("media cache");
        return;
      } catch (error) {
        const fault = storageFault(error);
        if (!fault) throw error;
        const oldest = [...this.#entries.keys()].find((other) => other !== id);
        if (fault.kind !== "disk_full" || oldest === undefined) {
          this.#health?.failed("media cache", this.#dir, error);
          throw new Error(
            `The media cache cannot keep a file of ${bytes.byteLength} bytes in ${this.#dir} (${fault.message})` +
              `${fault.kind === "disk_full" ? " and has no older file left to delete" : ""}: ${
                faultAdvice(fault.kind)
              }`,
            { cause: error },
          );
        }
        this.#forget(oldest);
        await Deno.remove(join(this.#dir, oldest)).catch((error) => {
          if (!isNotFound(error)) throw error;
        });
      }
    }
  }

  #remember(id: string, size: number): void {
    this.#forget(id);
    this.#entries.set(id, { size });
    this.#bytes += size;
  }

  #forget(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    this.#bytes -= entry.size;
  }

  /** Sets a file's modification time to now, its last use; false when the file is gone (then it is forgotten). */
  async #touch(id: string): Promise<boolean> {
    const entry = this.#entries.get(id);
    try {
      await this.#stamp(join(this.#dir, id));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.#forget(id);
      return false;
    }
    if (entry && this.#entries.get(id) === entry) {
      this.#entries.delete(id);
      this.#entries.set(id, entry);
    }
    return true;
  }

  async #stamp(path: string): Promise<void> {
    const now = new Date(this.#clock.now());
    await Deno.utime(path, now, now);
  }

  /**
   * Deletes the least recently used files until the cache fits, never `keep`. The index is updated before the files
   * go, so two evictions at once never pick the same file twice.
   */
  async #evict(keep: string | undefined): Promise<void> {
    const victims: string[] = [];
    for (const [id] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      if (id === keep) continue;
      this.#forget(id);
      victims.push(id);
    }
    for (const id of victims) {
      await Deno.remove(join(this.#dir, id)).catch((error) => {
        if (!isNotFound(error)) throw error;
      });
    }
  }
}

function checkId(id: string): void {
  if (!MEDIA_ID.test(id)) {
    throw new TypeError(
      `The media id "${escapeControl(id.slice(0, 100))}" is not a cache id (64 hex digits, a dot and an extension)`,
    );
  }
}
