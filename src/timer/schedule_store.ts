/**
 * Schedules on disk: `<data dir>/schedules.db` (SQLite, WAL, `synchronous = FULL`: a schedule created or cancelled is
 * fsync'd before the tool or the API says so — issue 38, `src/sqlite/durability.ts`). A firing is written before its input is queued, in the
 * same synchronous step, so a restart never fires a one-shot twice; what was due while homed was down is found by
 * its `next_run`.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import type { Trust } from "../identity/trust.ts";
import { type Durability, useWal } from "../sqlite/durability.ts";
import { prepared } from "../sqlite/prepared.ts";
import type { UnsavedFiring } from "./firing_ledger.ts";

/** One schedule. */
export interface Schedule {
  id: string;
  text: string;
  kind: "at" | "cron";
  /** For `cron`: the 5-field pattern. */
  cron: string | null;
  timezone: string;
  /** Where the butler's message goes. */
  channel: string;
  /** Who made it, and with what trust (its turns run as them). */
  creator: string;
  trust: Trust;
  /** The channel it was made from. */
  source: string;
  created: number;
  /** Epoch ms of the next firing; null once a one-shot has fired or it was cancelled. */
  nextRun: number | null;
  lastRun: number | null;
  /** How many times it fired. */
  runs: number;
}

interface Row {
  id: string;
  text: string;
  kind: string;
  cron: string | null;
  timezone: string;
  channel: string;
  creator: string;
  trust: string;
  source: string;
  created: number;
  next_run: number | null;
  last_run: number | null;
  runs: number;
}

function fromRow(row: Row): Schedule {
  return {
    id: row.id,
    text: row.text,
    kind: row.kind === "cron" ? "cron" : "at",
    cron: row.cron,
    timezone: row.timezone,
    channel: row.channel,
    creator: row.creator,
    trust: row.trust as Trust,
    source: row.source,
    created: row.created,
    nextRun: row.next_run,
    lastRun: row.last_run,
    runs: row.runs,
  };
}

/**
 * The schedule table.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 *
 * const store = ScheduleStore.open(join(Deno.makeTempDirSync(), "schedules.db"));
 * store.insert({
 *   id: "s-1f3a9c2e",
 *   text: "Remind alice to take out the trash",
 *   kind: "at",
 *   cron: null,
 *   timezone: "Asia/Shanghai",
 *   channel: "http",
 *   creator: "alice",
 *   trust: "household",
 *   source: "http",
 *   created: Date.parse("2026-11-30T09:00:00Z"),
 *   nextRun: Date.parse("2026-12-01T12:00:00Z"),
 *   lastRun: null,
 *   runs: 0,
 * });
 * store.count(); // 1
 * store.close();
 * ```
 */
export class ScheduleStore {
  #db: DatabaseSync;

  private constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Opens (creating) the database at `path`. `durability` is `acknowledged` (FULL) for homed; `derived` (NORMAL, what
   * homed used before issue 38) only for `deno task bench:durable`'s comparison.
   */
  static open(path: string, durability: Durability = "acknowledged"): ScheduleStore {
    const db = new DatabaseSync(path);
    useWal(db, durability);
    db.exec(`CREATE TABLE IF NOT EXISTS schedules (
      id TEXT PRIMARY KEY, text TEXT NOT NULL, kind TEXT NOT NULL, cron TEXT, timezone TEXT NOT NULL,
      channel TEXT NOT NULL, creator TEXT NOT NULL, trust TEXT NOT NULL, source TEXT NOT NULL,
      created INTEGER NOT NULL, next_run INTEGER, last_run INTEGER, runs INTEGER NOT NULL DEFAULT 0,
      seq INTEGER NOT NULL)`);
    db.exec("CREATE INDEX IF NOT EXISTS schedules_next ON schedules (next_run) WHERE next_run IS NOT NULL");
    return new ScheduleStore(db);
  }

  /** Adds one (its `seq` keeps creation order among schedules due at the same moment). */
  insert(schedule: Schedule): void {
    prepared(
      this.#db,
      `INSERT INTO schedules (id, text, kind, cron, timezone, channel, creator, trust, source, created, next_run,
        last_run, runs, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
        (SELECT COALESCE(MAX(seq), 0) + 1 FROM schedules))`,
    ).run(
      schedule.id,
      schedule.text,
      schedule.kind,
      schedule.cron,
      schedule.timezone,
      schedule.channel,
      schedule.creator,
      schedule.trust,
      schedule.source,
      schedule.created,
      schedule.nextRun,
      schedule.lastRun,
      schedule.runs,
    );
  }

  /** One schedule by id, active or not. */
  get(id: string): Schedule | undefined {
    const row = prepared(this.#db, "SELECT * FROM schedules WHERE id = ?").get(id) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** The schedules still to fire, soonest first (then in creation order). */
  active(): Schedule[] {
    return (prepared(this.#db, "SELECT * FROM schedules WHERE next_run IS NOT NULL ORDER BY next_run, seq")
      .all() as unknown as Row[]).map(fromRow);
  }

  /** Schedules due at or before `now`, in firing order. */
  due(now: number): Schedule[] {
    return (prepared(
      this.#db,
      "SELECT * FROM schedules WHERE next_run IS NOT NULL AND next_run <= ? ORDER BY next_run, seq",
    ).all(now) as unknown as Row[]).map(fromRow);
  }

  /** The soonest `next_run`, if any. */
  soonest(): number | undefined {
    const row = prepared(this.#db, "SELECT MIN(next_run) AS next FROM schedules WHERE next_run IS NOT NULL").get() as
      | { next: number | null }
      | undefined;
    return row?.next ?? undefined;
  }

  /**
   * How many are still to fire — all, or only those of `creator`, and only those whose next run lies in
   * `[from, to]` (milliseconds) when a window is given.
   *
   * @example
   * ```ts
   * const store = ScheduleStore.open(":memory:");
   * store.count(); // 0
   * store.count({ creator: "alice", from: Date.parse("2026-12-01T12:00:00Z"), to: Date.parse("2026-12-01T13:00:00Z") });
   * store.close();
   * ```
   */
  count(filter: { creator?: string; from?: number; to?: number } = {}): number {
    const where = ["next_run IS NOT NULL"];
    const values: Array<string | number> = [];
    if (filter.creator !== undefined) where.push("creator = ?"), values.push(filter.creator);
    if (filter.from !== undefined) where.push("next_run >= ?"), values.push(filter.from);
    if (filter.to !== undefined) where.push("next_run <= ?"), values.push(filter.to);
    const row = prepared(this.#db, `SELECT COUNT(*) AS n FROM schedules WHERE ${where.join(" AND ")}`).get(...values);
    return Number((row as { n: number }).n);
  }

  /** Records a firing at `firedAt` and the next run (null: done). */
  fired(id: string, firedAt: number, nextRun: number | null): void {
    prepared(this.#db, "UPDATE schedules SET last_run = ?, next_run = ?, runs = runs + 1 WHERE id = ?").run(
      firedAt,
      nextRun,
      id,
    );
  }

  /**
   * Sets a schedule's state after firings recorded elsewhere first (`firing_ledger.ts`, a full disk): its last run
   * (kept when null), next run and run count — absolute, so writing it twice does no harm.
   */
  record(state: UnsavedFiring): void {
    prepared(this.#db, "UPDATE schedules SET last_run = COALESCE(?, last_run), next_run = ?, runs = ? WHERE id = ?")
      .run(state.lastRun, state.nextRun, state.runs, state.id);
  }

  /** Moves the next run without firing (missed runs of a recurring schedule that are not replayed). */
  reschedule(id: string, nextRun: number | null): void {
    prepared(this.#db, "UPDATE schedules SET next_run = ? WHERE id = ?").run(nextRun, id);
  }

  /** Stops a schedule; false when there is no active one with that id. */
  cancel(id: string): boolean {
    return Number(
      prepared(this.#db, "UPDATE schedules SET next_run = NULL WHERE id = ? AND next_run IS NOT NULL").run(id)
        .changes,
    ) > 0;
  }

  close(): void {
    this.#db.close();
  }
}
