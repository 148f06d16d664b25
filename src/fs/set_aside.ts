/**
 * A damaged file never means a crash loop (issue 38). When a store finds its file damaged at start — a SQLite
 * database that is "malformed" or "not a database", a search segment or log cut short, a `routes.json` cut in half, a
 * journal line cut in half — it moves the file aside as `<name>.damaged-<ISO time>` beside it, through
 * {@link DamagedFiles}, and starts with what is intact (a new empty store, or the intact part). The same
 * {@link DamagedFiles} records each file it set aside, so the daemon can say exactly what was set aside: in
 * `/api/status` (`storage.set_aside`), in the log and once to the owner. Nothing is ever deleted: the owner may look
 * at the damaged file, or restore the last automatic backup (`homed restore --latest`).
 *
 * This is the one place that moves a damaged file aside; every store's open path calls it.
 *
 * @module
 */

/** One file set aside, as `/api/status` shows it under `storage.set_aside`. */
export interface SetAsideFile {
  /** The damaged file's path. */
  file: string;
  /** Where it is now: `<file>.damaged-<ISO time>` beside it. */
  moved_to: string;
  /** What was wrong with it, e.g. "database disk image is malformed". */
  why: string;
  /** What homed started with instead, e.g. "a new, empty database". */
  kept: string;
  /** The same in Chinese (the owner's notice speaks the persona's language). */
  kept_zh: string;
  /** ISO time it was set aside. */
  at: string;
}

/** Options of {@link DamagedFiles.setAside}. */
export interface SetAsideOptions {
  /**
   * Suffixes of the file's side files that go with it (SQLite's `-wal` and `-shm`): each one present is moved to
   * the new name plus the same suffix, so the set-aside copy still opens with them.
   */
  companions?: readonly string[];
  /** What homed starts with instead (default: a new, empty file), in English and Chinese. */
  kept?: KeptText;
}

/** What a store starts with instead of a damaged file, in English and Chinese (for status and the owner's notice). */
export interface KeptText {
  en: string;
  zh: string;
}

/** What a store starts with by default: a new, empty file. */
const NEW_EMPTY_FILE: KeptText = { en: "a new, empty file", zh: "一个新的空文件" };

/** How a store's open path tells damage from other failures, for {@link DamagedFiles.open}. */
export interface DamageRule {
  /** Why `error` means the file is damaged (a phrase: "database disk image is malformed"), or undefined. */
  damage(error: unknown): string | undefined;
  /** Side files that go with the file (see {@link SetAsideOptions.companions}). */
  companions?: readonly string[];
  /** What the store starts with once the file is set aside. */
  kept: KeptText;
}

/** Told of each file set aside (see {@link DamagedFiles.subscribe}). */
export type SetAsideListener = (entry: SetAsideFile) => void;

/**
 * Moves damaged files aside and remembers each one for the life of the process.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(join(dir, "routes.json"), '{"http": "qq:pri');
 * const damaged = new DamagedFiles(() => Date.parse("2026-12-04T02:00:00Z"));
 * damaged.setAside(join(dir, "routes.json"), "it is cut off (not JSON)", { kept: { en: "the config's routes", zh: "配置文件里的路由" } });
 * damaged.entries[0]!.moved_to; // ".../routes.json.damaged-2026-12-04T02:00:00.000Z"
 * ```
 */
export class DamagedFiles {
  #now: () => number;
  #entries: SetAsideFile[] = [];
  #listeners = new Set<SetAsideListener>();

  /** `now`: the clock's milliseconds since the epoch (the daemon's injected clock). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Every file set aside so far, oldest first. */
  get entries(): readonly SetAsideFile[] {
    return this.#entries;
  }

  /**
   * Moves `path` (and its `companions`) to `<path>.damaged-<ISO time>` and records it; tells the listeners. A name
   * already taken gets `-2`, `-3`… after the time. Throws what the rename throws (the file is then left where it is).
   *
   * @example
   * ```ts
   * import { join } from "node:path";
   *
   * const path = join(Deno.makeTempDirSync(), "schedules.db");
   * Deno.writeTextFileSync(path, "not a database");
   * const entry = new DamagedFiles().setAside(path, "file is not a database", {
   *   companions: ["-wal", "-shm"],
   *   kept: { en: "a new, empty database", zh: "一个新的空数据库" },
   * });
   * entry.why; // "file is not a database"
   * ```
   */
  setAside(path: string, why: string, options: SetAsideOptions = {}): SetAsideFile {
    const at = new Date(this.#now()).toISOString();
    const movedTo = freeName(`${path}.damaged-${at}`, options.companions ?? []);
    Deno.renameSync(path, movedTo);
    for (const suffix of options.companions ?? []) {
      if (exists(`${path}${suffix}`)) Deno.renameSync(`${path}${suffix}`, `${movedTo}${suffix}`);
    }
    const kept = options.kept ?? NEW_EMPTY_FILE;
    const entry: SetAsideFile = { file: path, moved_to: movedTo, why, kept: kept.en, kept_zh: kept.zh, at };
    this.#entries.push(entry);
    for (const listener of this.#listeners) {
      try {
        listener(entry);
      } catch {
        // A listener's failure (a log sink, a notice) never stops a store from opening.
      }
    }
    return entry;
  }

  /**
   * `open(path)`; when that fails because the file is damaged (`rule.damage` says why), the file is set aside and
   * `open(path)` runs again on a fresh one. Other failures are thrown as they are.
   *
   * @example
   * ```ts
   * import { DatabaseSync } from "node:sqlite";
   * import { join } from "node:path";
   *
   * const path = join(Deno.makeTempDirSync(), "usage.db");
   * Deno.writeTextFileSync(path, "x".repeat(4096));
   * const damaged = new DamagedFiles();
   * const db = damaged.open(path, (file) => {
   *   const db = new DatabaseSync(file);
   *   try {
   *     db.exec("PRAGMA journal_mode = WAL");
   *     return db;
   *   } catch (error) {
   *     db.close();
   *     throw error;
   *   }
   * }, {
   *   damage: (error) => /file is not a database/.test(String(error)) ? "file is not a database" : undefined,
   *   kept: { en: "a new, empty database", zh: "一个新的空数据库" },
   * });
   * damaged.entries.length; // 1
   * db.close();
   * ```
   */
  open<T>(path: string, open: (path: string) => T, rule: DamageRule): T {
    try {
      return open(path);
    } catch (error) {
      const why = rule.damage(error);
      if (why === undefined || !exists(path)) throw error;
      this.setAside(path, why, { kept: rule.kept, ...(rule.companions ? { companions: rule.companions } : {}) });
      return open(path);
    }
  }

  /**
   * Calls `listener` for every file set aside so far, then for each one set aside later; returns the unsubscribe.
   * So a listener made after the stores opened (the owner's notice needs the IO layer) still hears of each file once.
   *
   * @example
   * ```ts
   * const damaged = new DamagedFiles();
   * const stop = damaged.subscribe((entry) => console.warn(`${entry.file} was set aside as ${entry.moved_to}`));
   * stop();
   * ```
   */
  subscribe(listener: SetAsideListener): () => void {
    for (const entry of this.#entries) listener(entry);
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** `wanted`, or `wanted-2`, `-3`… : the first name free together with its companions' names. */
function freeName(wanted: string, companions: readonly string[]): string {
  const taken = (name: string) => exists(name) || companions.some((suffix) => exists(`${name}${suffix}`));
  let name = wanted;
  for (let n = 2; taken(name); n++) name = `${wanted}-${n}`;
  return name;
}
