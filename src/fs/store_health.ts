/**
 * A full or read-only disk never breaks a turn (issue 38.2). Every writer of the data dir (the memory's journal and
 * `memory.db`, `context.json`, `usage.db`, `schedules.db`, the media cache, the search index) hands its write errors
 * here: {@link storageFault} tells a storage fault — the disk is full (`ENOSPC`, SQLite's "database or disk is full"),
 * read-only (`EROFS`, "attempt to write a readonly database") or failing (`EIO`, "disk I/O error") — from any other
 * error, and {@link StoreHealth} records the store as degraded (for `/api/status` `storage.degraded`) until its next
 * write succeeds. Its listeners hear once per episode — when the first store turns degraded, and when the last one
 * writes again — so the owner is told once, not once per store or per write.
 *
 * This is the one place that decides what a storage fault is; a writer that meets one goes on without that write
 * (the turn still gets its answer), and tries again on its next write — so writing resumes by itself when space
 * returns, without a restart.
 *
 * @module
 */

import { dirname, join } from "node:path";

/** What kind of storage fault: the disk is full, read-only, or failing. */
export type StorageFaultKind = "disk_full" | "read_only" | "io_error";

/** A storage fault, as {@link storageFault} reads it from an error. */
export interface StorageFault {
  kind: StorageFaultKind;
  /** The error's message, e.g. "No space left on device (os error 28)". */
  message: string;
}

/** One store that cannot write now, as `/api/status` shows it under `storage.degraded`. */
export interface DegradedStore {
  /** The store's name, e.g. "memory journal" or "usage.db". */
  store: string;
  /** The file or folder it writes. */
  path: string;
  kind: StorageFaultKind;
  /** The first error of this episode. */
  error: string;
  /** ISO time of the first failed write of this episode. */
  since: string;
}

/** What {@link StoreHealth}'s listeners hear: the first store degraded, or every store writing again. */
export type StoreHealthEvent =
  | { type: "degraded"; store: DegradedStore }
  | { type: "recovered"; at: string; last: string };

/** Told of each episode's start and end (see {@link StoreHealth.subscribe}). */
export type StoreHealthListener = (event: StoreHealthEvent) => void;

const FAULT_CODES: Readonly<Record<string, StorageFaultKind>> = {
  ENOSPC: "disk_full",
  EDQUOT: "disk_full",
  EROFS: "read_only",
  EIO: "io_error",
};

const FAULT_MESSAGES: readonly [RegExp, StorageFaultKind][] = [
  [/database or disk is full|No space left on device|SQLITE_FULL/i, "disk_full"],
  [/attempt to write a readonly database|Read-only file system|SQLITE_READONLY/i, "read_only"],
  [/disk I\/O error|Input\/output error|SQLITE_IOERR/i, "io_error"],
];

/**
 * The storage fault `error` is (looking through its `cause`s), or undefined for any other error.
 *
 * @example
 * ```ts
 * storageFault(new Error("database or disk is full")); // { kind: "disk_full", message: "database or disk is full" }
 * storageFault(Object.assign(new Error("Read-only file system (os error 30)"), { code: "EROFS" })); // read_only
 * storageFault(new Error("database is locked")); // undefined
 * ```
 */
export function storageFault(error: unknown): StorageFault | undefined {
  for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
    const message = cause instanceof Error ? cause.message : String(cause);
    const code = (cause as { code?: unknown }).code;
    const byCode = typeof code === "string" ? FAULT_CODES[code] : undefined;
    if (byCode) return { kind: byCode, message };
    const byMessage = FAULT_MESSAGES.find(([pattern]) => pattern.test(message));
    if (byMessage) return { kind: byMessage[1], message };
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return undefined;
}

/**
 * What a person reads for `kind`, with what to do.
 *
 * @example
 * ```ts
 * faultAdvice("disk_full"); // "the disk is full: delete files that are not needed (or move backup.dir to another disk)"
 * ```
 */
export function faultAdvice(kind: StorageFaultKind): string {
  switch (kind) {
    case "disk_full":
      return "the disk is full: delete files that are not needed (or move backup.dir to another disk)";
    case "read_only":
      return "the disk is read-only: it was mounted read-only or remounted so after errors; check it and remount it rw";
    case "io_error":
      return "the disk fails to write (I/O error): check the disk and its cable, and look at the kernel log (dmesg)";
  }
}

/**
 * The data dir's stores' health: which cannot write now, since when and why.
 *
 * @example
 * ```ts
 * let now = Date.parse("2026-12-04T02:00:00Z");
 * const health = new StoreHealth(() => now);
 * health.subscribe((event) => console.log(event.type));
 * health.failed("usage.db", "/var/lib/homed/usage.db", new Error("database or disk is full")); // true: "degraded"
 * health.degraded[0]!.since; // "2026-12-04T02:00:00.000Z"
 * now += 60_000;
 * health.succeeded("usage.db"); // "recovered"
 * ```
 */
export class StoreHealth {
  #now: () => number;
  #degraded = new Map<string, DegradedStore>();
  #listeners = new Set<StoreHealthListener>();

  /** `now`: the clock's milliseconds since the epoch (the daemon's injected clock). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The stores that cannot write now, in the order they failed. */
  get degraded(): DegradedStore[] {
    return [...this.#degraded.values()];
  }

  /**
   * Records a failed write of `store`: true when `error` is a storage fault (the store is degraded; the caller goes
   * on without the write), false for any other error (the caller handles it as before).
   *
   * @example
   * ```ts
   * const health = new StoreHealth();
   * health.failed("context.json", "/var/lib/homed/memory/context.json", new Error("disk I/O error")); // true
   * ```
   */
  failed(store: string, path: string, error: unknown): boolean {
    const fault = storageFault(error);
    if (!fault) return false;
    if (this.#degraded.has(store)) return true;
    const first = this.#degraded.size === 0;
    const entry: DegradedStore = {
      store,
      path,
      kind: fault.kind,
      error: fault.message,
      since: new Date(this.#now()).toISOString(),
    };
    this.#degraded.set(store, entry);
    if (first) this.#tell({ type: "degraded", store: entry });
    return true;
  }

  /**
   * Records a write of `store` that succeeded: it is no longer degraded; when it was the last one, the episode ends.
   *
   * @example
   * ```ts
   * new StoreHealth().succeeded("memory journal"); // nothing was degraded: nothing happens
   * ```
   */
  succeeded(store: string): void {
    if (!this.#degraded.delete(store) || this.#degraded.size) return;
    this.#tell({ type: "recovered", at: new Date(this.#now()).toISOString(), last: store });
  }

  /**
   * Runs `write` for `store`: its result, or undefined when it failed with a storage fault (recorded); any other
   * error is thrown as it is.
   *
   * @example
   * ```ts
   * const health = new StoreHealth();
   * const saved = await health.guard("context.json", "/tmp/context.json", () => Deno.writeTextFile("/tmp/context.json", "{}"));
   * ```
   */
  async guard<T>(store: string, path: string, write: () => Promise<T>): Promise<T | undefined> {
    try {
      const result = await write();
      this.succeeded(store);
      return result;
    } catch (error) {
      if (this.failed(store, path, error)) return undefined;
      throw error;
    }
  }

  /**
   * {@link guard} for a synchronous write (SQLite's).
   *
   * @example
   * ```ts
   * import { DatabaseSync } from "node:sqlite";
   *
   * const db = new DatabaseSync(":memory:");
   * new StoreHealth().guardSync("usage.db", ":memory:", () => db.exec("CREATE TABLE t (x)"));
   * ```
   */
  guardSync<T>(store: string, path: string, write: () => T): T | undefined {
    try {
      const result = write();
      this.succeeded(store);
      return result;
    } catch (error) {
      if (this.failed(store, path, error)) return undefined;
      throw error;
    }
  }

  /**
   * Calls `listener` at each episode's start and end (and at once when an episode is under way); returns the
   * unsubscribe.
   *
   * @example
   * ```ts
   * const health = new StoreHealth();
   * const stop = health.subscribe((event) => console.warn(event.type));
   * stop();
   * ```
   */
  subscribe(listener: StoreHealthListener): () => void {
    const first = this.#degraded.values().next();
    if (!first.done) listener({ type: "degraded", store: first.value });
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The background re-check (issue 38.2) for stores that rarely write: a one-byte probe file is written, synced and
   * removed in each degraded store's folder, and each store whose folder takes it is no longer degraded — so
   * `storage.degraded` clears by itself once space returns or the disk is remounted rw. A store with changes still
   * to write writes them with its own next write (and is degraded again if that fails). Returns the stores cleared.
   *
   * @example
   * ```ts
   * const health = new StoreHealth();
   * health.failed("usage.db", "/tmp/usage.db", new Error("database or disk is full"));
   * health.recheck(); // ["usage.db"]: /tmp takes a write
   * ```
   */
  recheck(): string[] {
    const cleared: string[] = [];
    for (const { store, path } of this.degraded) {
      if (writable(path)) cleared.push(store);
    }
    for (const store of cleared) this.succeeded(store);
    return cleared;
  }

  #tell(event: StoreHealthEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure (a log sink, a notice) never fails a write.
      }
    }
  }
}

/** Whether the folder of `path` (or `path`, a folder) takes a one-byte file now: written, synced, removed. */
function writable(path: string): boolean {
  let folder = path;
  try {
    if (!Deno.statSync(path).isDirectory) folder = dirname(path);
  } catch {
    folder = dirname(path);
  }
  const probe = join(folder, `.homed-write-probe-${crypto.randomUUID().slice(0, 8)}`);
  try {
    const file = Deno.openSync(probe, { write: true, createNew: true });
    try {
      file.writeSync(new Uint8Array([0x0a]));
      file.syncSync();
    } finally {
      file.close();
    }
    return true;
  } catch {
    return false;
  } finally {
    try {
      Deno.removeSync(probe);
    } catch { /* never made */ }
  }
}
