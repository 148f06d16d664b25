/**
 * Automatic backups in the running daemon: a {@link Service} that takes one ({@link takeBackup}) at each time of
 * `backup.schedule` (a 5-field cron in `daemon.timezone`; `""` turns it off) on the injected clock, never two at once,
 * and says in `/api/status` (`backups`) where they go, the last one, the next time, how many are kept and the last
 * error. A backup reads the stores through SQLite's online backup and awaits its I/O, so turns go on meanwhile. A
 * failed run is logged and shown; the next try is the schedule's next time.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Cron } from "croner";
import type { Clock } from "../clock.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { Service } from "../service/service.ts";
import { join } from "node:path";
import type { StoreHealth } from "../fs/store_health.ts";
import { BACKUP_LIST, type BackupRecord, type BackupRun, readBackupList, takeBackup } from "./auto_backup.ts";

/** The store name of `backup.dir` in `/api/status` `storage.degraded`. */
const BACKUPS_STORE = "backups";

/** What `/api/status` shows under `backups`. */
export interface BackupsStatus {
  /** `backup.dir`. */
  dir: string;
  /** `backup.schedule` (`""`: automatic backups are off). */
  schedule: string;
  /** The newest verified automatic backup, or null. */
  last: { file: string; at: string; bytes: number; verified: boolean } | null;
  /** When the next one is due (ISO time), or null when none is scheduled. */
  next_at: string | null;
  /** Archives kept in `backup.dir` by `backup.keep`. */
  kept: number;
  /** Why the last run failed, or null when it did not. */
  last_error: string | null;
}

/** Options of {@link BackupService}. */
export interface BackupServiceOptions {
  loaded: LoadedConfig;
  clock: Clock;
  logger: Logger;
  /** homed's version, for each archive's manifest. */
  version: string;
  /**
   * Where a full, read-only or failing `backup.dir` is recorded (store "backups", `/api/status` `storage.degraded`)
   * and cleared by the next backup that is written, or by the heartbeat's re-check.
   */
  health?: Pick<StoreHealth, "failed" | "succeeded">;
}

/** The automatic backups of a running homed. */
export class BackupService implements Service {
  readonly name = "backup";
  #options: BackupServiceOptions;
  #cron: Cron | undefined;
  #cancelTimer: (() => void) | undefined;
  #nextAt: number | undefined;
  #running: Promise<BackupRun | undefined> | undefined;
  #stopped = false;
  /** Aborted by {@link stop}: a backup in progress ends between two writes instead of holding up the shutdown. */
  readonly #abort = new AbortController();
  #last: BackupRecord | undefined;
  #kept = 0;
  #lastError: string | undefined;
  #runs = 0;
  #failures = 0;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { loadConfig } from "../config/load.ts";
   * import { log } from "../log/logging.ts";
   *
   * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
   * const backups = new BackupService({ loaded, clock: systemClock, logger: log("backup"), version: "1.0.0" });
   * await backups.start(); // the first one at the schedule's next time
   * backups.backups().next_at; // "2026-12-01T19:30:00.000Z"
   * ```
   */
  constructor(options: BackupServiceOptions) {
    this.#options = options;
  }

  /** The zone days, weeks and the schedule are counted in: `daemon.timezone`, or the system's. */
  get #timezone(): string {
    return this.#options.loaded.config.daemon.timezone || Intl.DateTimeFormat().resolvedOptions().timeZone;
  }

  /** Reads the list of kept backups and arms the first run (croner is loaded only when a schedule is set). */
  async start(): Promise<void> {
    const { backup } = this.#options.loaded.config;
    try {
      const list = await readBackupList(backup.dir);
      this.#last = list[0];
      this.#kept = list.length;
    } catch (error) {
      // A folder not there yet (another disk not mounted) is the next run's problem, and said then.
      if (!(error instanceof Deno.errors.NotFound)) this.#lastError = (error as Error).message;
    }
    if (backup.schedule === "") return;
    const { Cron } = await import("croner");
    this.#cron = new Cron(backup.schedule, { timezone: this.#timezone, paused: true, mode: "5-part" });
    this.#arm();
  }

  /** Arms the timer for the schedule's next time after now. */
  #arm(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#nextAt = undefined;
    if (this.#stopped || !this.#cron) return;
    const { clock } = this.#options;
    const next = this.#cron.nextRun(new Date(clock.now()))?.getTime();
    if (next === undefined) return;
    this.#nextAt = next;
    this.#cancelTimer = clock.after(next - clock.now(), () => {
      this.#cancelTimer = undefined;
      void this.runNow();
    });
  }

  /**
   * Takes a backup now (or awaits the one in progress), then arms the next scheduled one. Resolves to what it did,
   * or `undefined` when it failed (logged, and shown as `last_error`). Never throws.
   */
  runNow(): Promise<BackupRun | undefined> {
    if (this.#running) return this.#running;
    const { loaded, clock, logger, version } = this.#options;
    this.#running = (async () => {
      try {
        const run = await takeBackup({
          loaded,
          now: () => clock.now(),
          version,
          timezone: this.#timezone,
          signal: this.#abort.signal,
        });
        this.#last = run.record;
        this.#kept = run.kept.length;
        this.#lastError = undefined;
        this.#options.health?.succeeded(BACKUPS_STORE);
        logger.info("Backed up {files} files to {file} ({bytes} bytes, verified); {kept} kept, {deleted} deleted", {
          files: run.record.files,
          file: run.record.file,
          bytes: run.record.bytes,
          kept: run.kept.length,
          deleted: run.deleted.length,
        });
        for (const line of run.skipped) logger.warn("Not backed up: {line}", { line });
        return run;
      } catch (error) {
        this.#failures++;
        this.#lastError = (error as Error)?.message ?? String(error);
        const { dir } = loaded.config.backup;
        this.#options.health?.failed(BACKUPS_STORE, join(dir, BACKUP_LIST), error);
        logger.error("Automatic backup failed: {message}", { message: this.#lastError, error });
        return undefined;
      } finally {
        this.#runs++;
      }
    })().finally(() => {
      this.#running = undefined;
      this.#arm();
    });
    return this.#running;
  }

  /** Cancels the schedule and stops a backup in progress (its partial archive removed), waiting for it to end. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort(
      new Error("homed is stopping: the backup in progress was stopped; the next one runs as scheduled"),
    );
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#nextAt = undefined;
    await this.#running;
  }

  /** The service's counters for `/api/status` `services.backup`. */
  status(): Record<string, unknown> {
    return { runs: this.#runs, failures: this.#failures, running: this.#running !== undefined };
  }

  /** What `/api/status` shows under `backups`. */
  backups(): BackupsStatus {
    const { dir, schedule } = this.#options.loaded.config.backup;
    const last = this.#last;
    return {
      dir,
      schedule,
      last: last ? { file: last.file, at: last.at, bytes: last.bytes, verified: last.verified } : null,
      next_at: this.#nextAt === undefined ? null : new Date(this.#nextAt).toISOString(),
      kept: this.#kept,
      last_error: this.#lastError ?? null,
    };
  }
}
