/**
 * A periodic job that can fail without harming anything else: runs never overlap (the next run is scheduled when
 * the previous one ended), a throw is logged with the job's name, counted and retried with exponential backoff, and
 * nothing it does can reach the daemon as an uncaught error. A run has a deadline: past it, its signal is aborted
 * (a run that listens ends and counts as failed), the overrun is logged and counted, and status shows the job
 * `overdue` until the run ends — a hung run holds back its own job only, and is seen.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { exponentialBackoff } from "./backoff.ts";

/** Options of {@link Job}. */
export interface JobOptions {
  /** Full name, e.g. `knowledge.reindex`. */
  name: string;
  everyMs: number;
  run(signal: AbortSignal): Promise<void> | void;
  clock: Clock;
  logger: Logger;
  /** First retry delay after a failure; doubled per consecutive failure. */
  retryBaseMs?: number;
  /** Longest retry delay; at least `everyMs`. */
  retryMaxMs?: number;
  /** Delay before the first run (default: `everyMs`). */
  firstRunMs?: number;
  /** How long a run may take before it is aborted and reported (default: two intervals, at least a minute). */
  deadlineMs?: number;
}

/** What `/api/status` shows of a job. */
export interface JobStatus {
  every_ms: number;
  runs: number;
  failures: number;
  consecutive_failures: number;
  running: boolean;
  last_run_at: string | null;
  last_duration_ms: number | null;
  last_error: string | null;
  next_run_at: string | null;
  /** A run's deadline. */
  deadline_ms: number;
  /** Runs that went past it. */
  overruns: number;
  /** The run in progress is past its deadline (aborted, not ended yet). */
  overdue: boolean;
}

/**
 * The delay before the next run after `consecutiveFailures` failures in a row (0: the normal interval).
 *
 * @example
 * ```ts
 * retryDelay(60_000, 3, 1_000, 300_000); // 4000
 * ```
 */
export function retryDelay(everyMs: number, consecutiveFailures: number, baseMs: number, maxMs: number): number {
  if (consecutiveFailures === 0) return everyMs;
  return exponentialBackoff(consecutiveFailures - 1, { minMs: baseMs, maxMs: Math.max(maxMs, everyMs) });
}

/** A scheduled, isolated, non-overlapping periodic job. */
export class Job {
  readonly name: string;
  #options: JobOptions;
  #cancelTimer: (() => void) | undefined;
  #stop = new AbortController();
  #running: Promise<void> | undefined;
  #state = {
    runs: 0,
    failures: 0,
    consecutive: 0,
    lastRunAt: undefined as number | undefined,
    lastDurationMs: undefined as number | undefined,
    lastError: undefined as string | undefined,
    nextRunAt: undefined as number | undefined,
    overruns: 0,
    overdue: false,
  };

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
   * import { log } from "../log/logging.ts";
   *
   * declare const kb: KnowledgeBase;
   * const job = new Job({
   *   name: "knowledge.reindex",
   *   everyMs: 1_800_000,
   *   run: () => kb.reindex(),
   *   clock: systemClock,
   *   logger: log("service"),
   * });
   * job.start();
   * ```
   */
  constructor(options: JobOptions) {
    this.name = options.name;
    this.#options = options;
  }

  /** Schedules the first run. */
  start(): void {
    if (this.#stop.signal.aborted) return;
    this.#schedule(this.#options.firstRunMs ?? this.#options.everyMs);
  }

  #schedule(delay: number): void {
    if (this.#stop.signal.aborted) return;
    this.#state.nextRunAt = this.#options.clock.now() + delay;
    this.#cancelTimer = this.#options.clock.after(delay, () => {
      this.#cancelTimer = undefined;
      void this.runOnce();
    });
  }

  /**
   * Runs the job now (unless a run is in progress, whose end it then awaits) and schedules the next run. Never
   * throws. A run asked for here (the console's "now") is one {@link Job.stop} waits for, as a scheduled one.
   */
  runOnce(): Promise<void> {
    this.#running ??= this.#run().finally(() => (this.#running = undefined));
    return this.#running;
  }

  async #run(): Promise<void> {
    const { clock, logger } = this.#options;
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#state.nextRunAt = undefined;
    const started = clock.monotonic();
    this.#state.lastRunAt = clock.now();
    // The run's own signal: aborted by stop() or by its deadline. A listener, not AbortSignal.any: a composite per
    // run would be one more dependent on the job's lifelong stop signal each time, for a job that runs every minute.
    const run = new AbortController();
    const stop = this.#stop.signal;
    const stopped = () => run.abort(stop.reason);
    if (stop.aborted) stopped();
    else stop.addEventListener("abort", stopped, { once: true });
    const deadlineMs = this.#deadlineMs;
    const cancelDeadline = clock.after(deadlineMs, () => {
      this.#state.overruns++;
      this.#state.overdue = true;
      logger.error("Job {job} has run past its deadline of {deadlineMs} ms; aborted", { job: this.name, deadlineMs });
      run.abort(new Error(`Job ${this.name} ran past its deadline of ${deadlineMs} ms`));
    });
    try {
      await this.#options.run(run.signal);
      this.#state.consecutive = 0;
      this.#state.lastError = undefined;
    } catch (error) {
      if (this.#stop.signal.aborted) return;
      this.#state.failures++;
      this.#state.consecutive++;
      const message = (error as Error)?.message ?? String(error);
      this.#state.lastError = message;
      const delay = this.#nextDelay();
      logger.error("Job {job} failed ({failures} in a row): {message}; next try in {delayMs} ms", {
        job: this.name,
        failures: this.#state.consecutive,
        message,
        delayMs: delay,
        error,
      });
    } finally {
      stop.removeEventListener("abort", stopped);
      cancelDeadline();
      this.#state.overdue = false;
      this.#state.runs++;
      this.#state.lastDurationMs = Math.round(clock.monotonic() - started);
    }
    this.#schedule(this.#nextDelay());
  }

  get #deadlineMs(): number {
    return this.#options.deadlineMs ?? Math.max(2 * this.#options.everyMs, 60_000);
  }

  #nextDelay(): number {
    const { everyMs, retryBaseMs = 1_000, retryMaxMs = 300_000 } = this.#options;
    return retryDelay(everyMs, this.#state.consecutive, retryBaseMs, retryMaxMs);
  }

  /** Resolves when no run is in progress (a run the timer started has ended). */
  async idle(): Promise<void> {
    await this.#running;
  }

  /** Cancels the schedule, aborts a run in progress and waits for it to end. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error(`Job ${this.name} stopped`));
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#state.nextRunAt = undefined;
    await this.#running;
  }

  /** Counters for status. */
  status(): JobStatus {
    const s = this.#state;
    const iso = (ms: number | undefined) => ms === undefined ? null : new Date(ms).toISOString();
    return {
      every_ms: this.#options.everyMs,
      runs: s.runs,
      failures: s.failures,
      consecutive_failures: s.consecutive,
      running: this.#running !== undefined,
      last_run_at: iso(s.lastRunAt),
      last_duration_ms: s.lastDurationMs ?? null,
      last_error: s.lastError ?? null,
      next_run_at: iso(s.nextRunAt),
      deadline_ms: this.#deadlineMs,
      overruns: s.overruns,
      overdue: s.overdue,
    };
  }
}
