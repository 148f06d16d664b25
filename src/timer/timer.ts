/**
 * The timer device (source `timer:<id>`): reminders and schedules that wake the butler. Each firing is an input
 * message from the schedule's creator, with their trust, whose reply goes to the schedule's channel. It offers the
 * tools `schedule_create`, `schedule_list` and `schedule_cancel`; it has no output of its own.
 *
 * Firing: one timer at the soonest `next_run` (re-armed at least every minute, so a clock jump or a machine sleep is
 * noticed). A firing is queued and written to the store in one synchronous step; when the disk cannot take the write
 * (full, read-only) the reminder is still delivered, `schedules.db` is marked degraded, and the firing is kept in
 * `schedules.fired` (`firing_ledger.ts`) and in memory until a later wake-up writes it — it never fires twice, after a
 * restart either. After a restart or
 * a sleep, a missed one-shot fires once with "late by N minutes"; a recurring schedule fires its latest missed run
 * once, late, if it is less than an hour old, and otherwise skips to its next run — missed runs are never replayed.
 * The heartbeat starts no turn; it only checks that the timer still wakes (a watchdog that wakes it and says so).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { loadCron, localTime, nextCronRun, parseScheduleTime, previousCronRun } from "./schedule_spec.ts";
import type { Schedule, ScheduleStore } from "./schedule_store.ts";
import type { FiringLedger, UnsavedFiring } from "./firing_ledger.ts";
import { faultAdvice, storageFault, type StoreHealth } from "../fs/store_health.ts";
import type { Tool, ToolContext } from "../tools/tool.ts";
import type { Device, DeviceContext, TurnEvent } from "../io/device.ts";
import type { OutputEvent } from "../io/event.ts";
import type { TimerStatus } from "./timer_status.ts";

/** Options of {@link TimerDevice}. */
export interface TimerOptions {
  store: ScheduleStore;
  clock: Clock;
  /** `daemon.timezone`: the zone of schedules that name none; empty: the system's, found when first needed. */
  timezone: string;
  /** Why a channel cannot take a message, or undefined (the IO manager's check). */
  checkChannel(channel: string): string | undefined;
  /** A person's own private chats (`people:`): theirs to schedule for, as the chat they asked on is. */
  personChannels?(name: string): readonly string[];
  logger: Logger;
  /** New schedule ids (tests pass a counter). */
  newId?: () => string;
  /** Most schedules active at once (10,000). */
  maxActive?: number;
  /** What one person other than the owner may hold (see {@link PERSON_LIMITS}). */
  personLimits?: Partial<PersonLimits>;
  /**
   * Where a schedule that cannot be stored for the disk (full, read-only) is recorded, with the store's file
   * (issue 38.2): such a schedule is refused naming the disk, never acknowledged.
   */
  health?: { record: Pick<StoreHealth, "failed" | "succeeded">; path: string };
  /**
   * Where a firing `schedules.db` cannot take (a full disk) is kept until it can, so that neither a later wake-up nor
   * a restart fires it again (`firing_ledger.ts`). Without one, such firings are kept in memory only.
   */
  ledger?: Pick<FiringLedger, "entries" | "put" | "remove">;
}

/** What one person other than the owner may schedule, so no one member can crowd out the household or the owner. */
export interface PersonLimits {
  /** Active schedules of one person at once. */
  active: number;
  /** Of one person's schedules, at most this many may be due within an hour of each other. */
  perHour: number;
  /** Of `maxActive`, this many are kept for the owner alone: others are refused above `maxActive - ownerReserve`. */
  ownerReserve: number;
}

/** The defaults: 200 active per person, 20 due within any hour, 1,000 of the 10,000 kept for the owner. */
export const PERSON_LIMITS: PersonLimits = { active: 200, perHour: 20, ownerReserve: 1_000 };

/** A firing later than this says so in minutes. */
export const LATE_AFTER_MS = 60_000;
/** A firing this late or later (a restart) says so in seconds. */
const LATE_SECONDS_MS = 1_000;
/** A recurring schedule's missed run older than this is skipped rather than fired late. */
export const CATCH_UP_MS = 3_600_000;
/** The timer wakes at least this often. */
const WAKE_MS = 60_000;
/** A wake-up later than two of {@link WAKE_MS} and this is taken as lost (a busy event loop is not a lost timer). */
const STALL_SLACK_MS = 30_000;

/** A schedule as tools and the API show it. */
export function scheduleView(schedule: Schedule): Record<string, unknown> {
  return {
    id: schedule.id,
    text: schedule.text,
    ...(schedule.kind === "cron" ? { cron: schedule.cron } : {}),
    timezone: schedule.timezone,
    next_run: schedule.nextRun === null ? null : new Date(schedule.nextRun).toISOString(),
    next_run_local: schedule.nextRun === null ? null : localTime(schedule.nextRun, schedule.timezone),
    channel: schedule.channel,
    creator: schedule.creator,
    created: new Date(schedule.created).toISOString(),
    runs: schedule.runs,
  };
}

/** Why {@link TimerDevice.cancel} did not cancel: no such active schedule, or one that is not the canceller's. */
export class ScheduleCancelRefused extends Error {
  override readonly name = "ScheduleCancelRefused";

  /**
   * @example
   * ```ts
   * const refused = new ScheduleCancelRefused("not_found", 'no active schedule "s9"; schedule_list shows them');
   * refused.reason; // "not_found"
   * ```
   */
  constructor(
    readonly reason: "not_found" | "forbidden",
    message: string,
    /** The schedule, when it exists (`forbidden`). */
    readonly schedule?: Schedule,
  ) {
    super(message);
  }
}

/** The `timer` device. */
export class TimerDevice implements Device {
  readonly name = "timer";
  readonly type = "timer";
  readonly description = "Reminders and schedules: wakes the butler at set times (no output of its own)";
  #options: TimerOptions;
  #context: DeviceContext | undefined;
  #cancelTimer: (() => void) | undefined;
  #fired = 0;
  #failures = 0;
  /** When the timer last woke (`clock.now()`), for status. */
  #lastWake: number | undefined;
  /** The same on the monotonic clock, for the heartbeat's watchdog. */
  #lastWakeMonotonic: number | undefined;
  /** Wake-ups the watchdog found lost. */
  #stalls = 0;
  /** Firings (and skipped runs) `schedules.db` has not taken yet, by schedule id: they count as done. */
  #unsaved = new Map<string, UnsavedFiring>();

  constructor(options: TimerOptions) {
    this.#options = options;
  }

  /** Made once, so every device-table change registers the same objects. */
  #tools: readonly Tool[] = [
    {
      name: "schedule_create",
      effect: "act",
      allow: "household",
      description:
        "Schedule a reminder or a task for later: you will receive `text` as a message at that time and act " +
        "on it (remind, check, report). Give exactly one of `at` (once: an ISO-8601 time with its offset — resolve " +
        '"at 8 pm", "in 20 minutes" from the current time) or `cron` (repeating: 5 fields, minute hour day month ' +
        'weekday, e.g. "0 7 * * 1-5" for weekdays at 07:00). The reply goes to the current channel unless `channel` ' +
        "names another (the owner only).",
      parameters: {
        type: "object",
        properties: {
          text: { type: "string", minLength: 1, maxLength: 2000, description: "What to do or say then" },
          at: {
            type: "string",
            description: "Once, at this ISO-8601 time: the household's local time as it is (2026-12-01T20:00), " +
              "or with an offset (2026-12-01T20:00:00+08:00)",
          },
          cron: { type: "string", description: "Repeating, 5-field cron, e.g. 30 7 * * *" },
          timezone: { type: "string", description: "IANA zone for cron (default: the household's)" },
          channel: { type: "string", minLength: 1, description: "Where the message goes (default: this channel)" },
        },
        required: ["text"],
        additionalProperties: false,
      },
      execute: async (args, context) => {
        // The cron library loads only when a recurring schedule is made (or exists at start).
        if (args.cron !== undefined) await loadCron();
        return this.#create(args, context);
      },
    },
    {
      name: "schedule_list",
      effect: "read",
      allow: "household",
      description: "List the active reminders and schedules (the owner sees all, others their own), with the next run.",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      execute: (_args, context) =>
        this.list({ name: context.sender, owner: context.trust === "owner" }).map(scheduleView),
    },
    {
      name: "schedule_cancel",
      effect: "act",
      allow: "household",
      description: "Cancel a reminder or schedule by its id (from schedule_list or schedule_create).",
      parameters: {
        type: "object",
        properties: { id: { type: "string", minLength: 1 } },
        required: ["id"],
        additionalProperties: false,
      },
      execute: (args, context) => this.#cancel(String(args.id), context),
    },
  ];

  tools(): readonly Tool[] {
    return this.#tools;
  }

  async start(context: DeviceContext): Promise<void> {
    // Firings recorded before a restart that `schedules.db` did not take: done, never fired again. An entry older than
    // the row (the row took a later firing) is stale.
    for (const entry of this.#options.ledger?.entries() ?? []) {
      const row = this.#options.store.get(entry.id);
      if (row && row.nextRun !== null && entry.runs >= row.runs) this.#unsaved.set(entry.id, entry);
      else this.#options.ledger?.remove(entry.id);
    }
    // The cron library loads only when a recurring schedule exists (or is made).
    if (this.#options.store.active().some((schedule) => schedule.kind === "cron")) await loadCron();
    this.#context = context;
    this.#tick();
  }

  stop(): Promise<void> {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#context = undefined;
    return Promise.resolve();
  }

  outputCapabilities(): number {
    return 0;
  }

  send(event: OutputEvent): Promise<void> {
    return Promise.reject(new Error(`The timer device takes no output (${event.type} to ${event.target})`));
  }

  /** A schedule's turn that failed is logged: nobody waits for it. */
  onTurnEvent(event: TurnEvent): void {
    if (event.type === "done" && event.result.error) {
      this.#options.logger.warning("A scheduled turn ({id}) failed: {message}", {
        id: event.eventId,
        message: event.result.error.message,
      });
    }
  }

  status(): TimerStatus {
    const soonest = this.#soonest();
    return {
      active: this.#options.store.count(),
      next_run: soonest === undefined ? null : new Date(soonest).toISOString(),
      fired: this.#fired,
      failed_firings: this.#failures,
      last_wake: this.#lastWake === undefined ? null : new Date(this.#lastWake).toISOString(),
      stalls: this.#stalls,
      unsaved_firings: this.#unsaved.size,
    };
  }

  /** Active schedules the viewer may see: all for the owner, else their own. */
  list(viewer?: { name: string; owner: boolean }): Schedule[] {
    const all = this.#active();
    return !viewer || viewer.owner ? all : all.filter((schedule) => schedule.creator === viewer.name);
  }

  #create(args: Record<string, unknown>, context: ToolContext): Record<string, unknown> {
    const { store, clock } = this.#options;
    const now = clock.now();
    const time = parseScheduleTime(args, { now, timezone: this.#timezone() });
    // Others schedule only for the channel they asked on: the turn's reply channel may have been switched by
    // output_set_channel, which must not become a way round this rule.
    const owner = context.trust === "owner";
    const own = owner ? context.replyChannel() : context.source;
    const channel = typeof args.channel === "string" ? args.channel : own;
    // "Remind me on QQ", asked on WeChat: a person's own private chats elsewhere are theirs too.
    const theirs = this.#options.personChannels?.(context.sender) ?? [];
    if (channel !== own && !owner && !theirs.includes(channel)) {
      throw new Error(
        `channel: only the owner may schedule for another channel (${channel}); yours ${
          theirs.length ? `are ${[own, ...theirs.filter((c) => c !== own)].join(", ")}` : `is ${own}`
        }`,
      );
    }
    const problem = this.#options.checkChannel(channel);
    if (problem) throw new Error(`channel: ${problem}`);
    const max = this.#options.maxActive ?? 10_000;
    if (store.count() >= max) {
      throw new Error(`There are already ${max} active schedules; cancel some first (schedule_list shows them)`);
    }
    const nextRun = time.kind === "at" ? time.at : nextCronRun(time.cron, time.timezone, now)!;
    if (!owner) this.#checkPersonLimits(context.sender, nextRun, max);
    const schedule: Schedule = {
      id: this.#options.newId?.() ?? `s-${crypto.randomUUID().slice(0, 8)}`,
      text: String(args.text),
      kind: time.kind,
      cron: time.kind === "cron" ? time.cron : null,
      timezone: time.timezone,
      channel,
      creator: context.sender,
      trust: context.trust,
      source: context.source,
      created: now,
      nextRun,
      lastRun: null,
      runs: 0,
    };
    this.#store(schedule);
    this.#options.logger.info("Schedule {id} by {creator}: {when}, to {channel}", {
      id: schedule.id,
      creator: schedule.creator,
      when: schedule.kind === "cron" ? `${schedule.cron} (${schedule.timezone})` : localTime(nextRun, time.timezone),
      channel,
    });
    this.#arm();
    return scheduleView(schedule);
  }

  /** Stores `schedule`, or refuses it naming the disk when the disk cannot take it (nothing is acknowledged then). */
  #store(schedule: Schedule): void {
    const { store, health } = this.#options;
    try {
      store.insert(schedule);
      health?.record.succeeded("schedules.db");
    } catch (error) {
      const fault = storageFault(error);
      if (!fault) throw error;
      const path = health?.path ?? "schedules.db";
      health?.record.failed("schedules.db", path, error);
      throw new Error(
        `The schedule was NOT stored: homed cannot write ${path} (${fault.message}); ${faultAdvice(fault.kind)}. ` +
          "Nothing was scheduled: ask again once the disk has room.",
        { cause: error },
      );
    }
  }

  /** Refuses a schedule of `sender` (not the owner) that would pass one of the {@link PersonLimits}. */
  #checkPersonLimits(sender: string, nextRun: number, max: number): void {
    const { store } = this.#options;
    const limits = { ...PERSON_LIMITS, ...this.#options.personLimits };
    const active = store.count();
    if (active >= max - limits.ownerReserve) {
      throw new Error(
        `There are already ${active} active schedules; the last ${limits.ownerReserve} of ${max} are kept ` +
          `for the owner`,
      );
    }
    const own = store.count({ creator: sender });
    if (own >= limits.active) {
      throw new Error(
        `${sender} already has ${own} active schedules, the most one person may have (${limits.active}); ` +
          `cancel some first (schedule_list shows them)`,
      );
    }
    const HOUR = 3_600_000;
    const near = store.count({ creator: sender, from: nextRun - HOUR, to: nextRun + HOUR });
    if (near >= limits.perHour) {
      throw new Error(
        `${sender} already has ${near} schedules due within an hour of ${new Date(nextRun).toISOString()}; ` +
          `one person may have at most ${limits.perHour} within an hour of each other`,
      );
    }
  }

  #cancel(id: string, context: ToolContext): string {
    try {
      const schedule = this.cancel(id, { name: context.sender, owner: context.trust === "owner" });
      return `Cancelled ${id} (${schedule.text})`;
    } catch (error) {
      // The tool names the argument that was wrong.
      if (error instanceof ScheduleCancelRefused) throw new Error(`id: ${error.message}`);
      throw error;
    }
  }

  /**
   * Cancels active schedule `id` for `by` — its creator or the owner (the rule of `schedule_cancel`) — and returns
   * it. Throws {@link ScheduleCancelRefused}: `not_found` when there is no such active schedule, `forbidden` (with
   * the schedule) when `by` is someone else.
   *
   * @example
   * ```ts
   * declare const timer: TimerDevice;
   * timer.cancel("k3f9", { name: "alice", owner: false }).text; // "Take the medicine"
   * ```
   */
  cancel(id: string, by: { name: string; owner: boolean }): Schedule {
    const { store } = this.#options;
    const stored = store.get(id);
    const schedule = stored && this.#current(stored);
    if (!schedule || schedule.nextRun === null) {
      throw new ScheduleCancelRefused(
        "not_found",
        `no active schedule ${JSON.stringify(id)}; schedule_list shows them`,
      );
    }
    if (schedule.creator !== by.name && !by.owner) {
      throw new ScheduleCancelRefused(
        "forbidden",
        `schedule ${id} belongs to ${schedule.creator}; only they or the owner may cancel it`,
        schedule,
      );
    }
    store.cancel(id);
    // Cancelled: a firing not yet written must not bring its next run back.
    if (this.#unsaved.delete(id)) this.#options.ledger?.remove(id);
    this.#arm();
    this.#options.logger.info("Schedule {id} cancelled by {name}", { id, name: by.name });
    return schedule;
  }

  /**
   * The household's zone. The system's is looked up only here, when a schedule is made: Intl's time-zone data costs
   * ≈ 6 MB of resident memory, which a homed without reminders should not pay at start.
   */
  #timezone(): string {
    return this.#options.timezone || Intl.DateTimeFormat().resolvedOptions().timeZone;
  }

  /**
   * Sets the one timer for the soonest schedule (or the periodic wake-up). It always sets one while the timer runs:
   * when the store cannot be read now, the next wake-up reads it again — an error here (thrown into a tool call that
   * made or cancelled a schedule) must not end the chain of wake-ups.
   */
  #arm(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    if (!this.#context) return;
    let delay = WAKE_MS;
    try {
      const soonest = this.#soonest();
      const now = this.#options.clock.now();
      // Still due right after a tick means it could not fire (homed is stopping): try again at the next wake-up.
      if (soonest !== undefined && soonest > now) delay = Math.min(WAKE_MS, soonest - now);
    } catch (error) {
      this.#failures++;
      this.#options.logger.error("Schedules could not be read ({error}); read again in a minute", { error });
    }
    this.#cancelTimer = this.#options.clock.after(delay, () => this.#tick());
  }

  /**
   * The watchdog, on the daemon's heartbeat: a timer that has not woken for two wake-ups lost its timer somehow (it
   * should never happen) — it is said in the log and in status (`stalls`), and the timer wakes now.
   */
  heartbeat(): void {
    if (!this.#context || this.#lastWakeMonotonic === undefined) return;
    // Silence on the monotonic clock: the wall clock's jumps (NTP, a box resumed from sleep) are no lost wake-up.
    const silentMs = this.#options.clock.monotonic() - this.#lastWakeMonotonic;
    if (silentMs <= 2 * WAKE_MS + STALL_SLACK_MS) return;
    this.#stalls++;
    this.#options.logger.error("The timer had not woken for {seconds} s (its wake-up was lost); woken now", {
      seconds: Math.round(silentMs / 1_000),
    });
    this.#tick();
  }

  /** Fires everything due, in order, then re-arms. A failure is logged and retried at the next wake-up. */
  #tick(): void {
    this.#lastWake = this.#options.clock.now();
    this.#lastWakeMonotonic = this.#options.clock.monotonic();
    try {
      const now = this.#options.clock.now();
      this.#saveUnsaved();
      for (const stored of this.#options.store.due(now)) {
        const schedule = this.#current(stored);
        if (schedule.nextRun !== null && schedule.nextRun <= now) this.#fire(schedule, now);
      }
    } catch (error) {
      this.#failures++;
      this.#options.logger.error("Schedules could not be fired: {error}", { error });
    }
    this.#arm();
  }

  #fire(schedule: Schedule, now: number): void {
    const { logger } = this.#options;
    const context = this.#context;
    if (!context || schedule.nextRun === null) return;
    const next = schedule.kind === "cron" ? nextCronRun(schedule.cron!, schedule.timezone, now) ?? null : null;
    // A recurring schedule that missed runs stands for its latest one only.
    const due = schedule.kind === "cron"
      ? previousCronRun(schedule.cron!, schedule.timezone, now) ?? schedule.nextRun
      : schedule.nextRun;
    const late = now - due;
    if (schedule.kind === "cron" && late > CATCH_UP_MS) {
      this.#record({ id: schedule.id, lastRun: null, nextRun: next, runs: schedule.runs });
      logger.info("Schedule {id} missed its runs since {due}; not replayed, next at {next}", {
        id: schedule.id,
        due: localTime(schedule.nextRun, schedule.timezone),
        next: next === null ? "never" : localTime(next, schedule.timezone),
      });
      return;
    }
    const lateMinutes = late > LATE_AFTER_MS ? Math.round(late / 60_000) : 0;
    const lateBy = lateMinutes
      ? `${lateMinutes} minutes`
      : late >= LATE_SECONDS_MS
      ? `${Math.round(late / 1_000)} seconds`
      : "";
    const note = [
      `Scheduled by ${schedule.creator}`,
      schedule.kind === "cron" ? `repeating ${schedule.cron} (${schedule.timezone})` : "",
      `due ${localTime(due, schedule.timezone)}`,
      lateBy ? `late by ${lateBy} (homed was not running or the machine slept)` : "",
    ].filter(Boolean).join("; ");
    try {
      context.emit({
        source: `timer:${schedule.id}`,
        sender: schedule.creator,
        trust: schedule.trust,
        type: "message",
        payload: {
          text: `[${note}] ${schedule.text}`,
          schedule: schedule.id,
          schedule_text: schedule.text,
          created_by: schedule.creator,
          late_minutes: lateMinutes,
        },
        reply: schedule.channel,
      });
    } catch (error) {
      // Refused (homed is stopping, or the creator already has as many inputs waiting as one sender may): nothing is
      // recorded, so it is still due — tried again at the next wake-up, or on the next start.
      logger.warning("Schedule {id} could not fire now ({error}); it is tried again at the next wake-up", {
        id: schedule.id,
        error: (error as Error).message,
      });
      return;
    }
    // Queued and recorded in one synchronous step: no restart can come between them to fire it twice or lose it.
    this.#record({ id: schedule.id, lastRun: now, nextRun: next, runs: schedule.runs + 1 });
    this.#fired++;
  }

  /** `schedule` as it is now: with its firings that `schedules.db` has not taken yet. */
  #current(schedule: Schedule): Schedule {
    const unsaved = this.#unsaved.get(schedule.id);
    if (!unsaved) return schedule;
    return { ...schedule, lastRun: unsaved.lastRun ?? schedule.lastRun, nextRun: unsaved.nextRun, runs: unsaved.runs };
  }

  #active(): Schedule[] {
    const all = this.#options.store.active();
    if (!this.#unsaved.size) return all;
    return all.map((schedule) => this.#current(schedule)).filter((schedule) => schedule.nextRun !== null)
      .sort((a, b) => a.nextRun! - b.nextRun!);
  }

  #soonest(): number | undefined {
    if (!this.#unsaved.size) return this.#options.store.soonest();
    return this.#active()[0]?.nextRun ?? undefined;
  }

  /**
   * Writes a schedule's state after a firing (or a skipped run). When the disk cannot take it, the store is marked
   * degraded and the state is kept — in the ledger's slot (on disk, so a restart does not fire it again) and in
   * memory — until a later wake-up writes it; any other error is thrown as before.
   */
  #record(state: UnsavedFiring): void {
    const { store, health, ledger, logger } = this.#options;
    try {
      store.record(state);
    } catch (error) {
      const fault = storageFault(error);
      if (!fault) throw error;
      const path = health?.path ?? "schedules.db";
      health?.record.failed("schedules.db", path, error);
      this.#unsaved.set(state.id, state);
      const kept = ledger?.put(state) ?? false;
      logger.warning(
        "Schedule {id} fired but {path} cannot record it ({error}); {advice}. It is kept {where} and written once " +
          "the disk takes it: it does not fire again",
        {
          id: state.id,
          path,
          error: fault.message,
          advice: faultAdvice(fault.kind),
          where: kept ? "in schedules.fired" : "in memory only (a restart before then fires it again)",
        },
      );
      return;
    }
    health?.record.succeeded("schedules.db");
    if (this.#unsaved.delete(state.id)) ledger?.remove(state.id);
  }

  /** Writes the firings kept while the disk was full; stops at the first that still cannot be written. */
  #saveUnsaved(): void {
    const { store, health, ledger } = this.#options;
    for (const state of [...this.#unsaved.values()]) {
      try {
        store.record(state);
      } catch (error) {
        if (!storageFault(error)) throw error;
        health?.record.failed("schedules.db", health.path, error);
        return;
      }
      this.#unsaved.delete(state.id);
      ledger?.remove(state.id);
      health?.record.succeeded("schedules.db");
    }
  }
}
