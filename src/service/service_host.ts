/**
 * Holds the daemon's services: starts them in order, runs their heartbeats and jobs as isolated {@link Job}s, stops
 * them in reverse under a deadline each, and reports their status.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, deadline } from "../clock.ts";
import { Job } from "./job.ts";
import type { Service } from "./service.ts";

/** Options of {@link ServiceHost}. */
export interface ServiceHostOptions {
  clock: Clock;
  logger: Logger;
  /** `daemon.heartbeat_interval`. */
  heartbeatMs: number;
}

interface Entry {
  service: Service;
  state: "running" | "stopping" | "stopped" | "failed";
  startedAt: number;
  jobs: Job[];
}

/** The list of running services. */
export class ServiceHost {
  #options: ServiceHostOptions;
  #entries: Entry[] = [];
  #scheduled = false;
  #stopping: Promise<void> | undefined;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { KnowledgeService, type KnowledgeServiceOptions } from "../knowledge/knowledge_service.ts";
   * import { log } from "../log/logging.ts";
   *
   * declare const options: KnowledgeServiceOptions;
   * const services = new ServiceHost({ clock: systemClock, logger: log("service"), heartbeatMs: 15_000 });
   * const knowledge = await services.start(new KnowledgeService(options));
   * services.schedule(); // heartbeats and jobs begin
   * await services.stop(); // in reverse start order
   * ```
   */
  constructor(options: ServiceHostOptions) {
    this.#options = options;
  }

  /**
   * Starts `service` and appends it to the list (so it stops before everything started earlier). A throw is
   * rethrown as an `Error` naming the service; the caller then stops what did start.
   */
  async start<S extends Service>(service: S): Promise<S> {
    if (this.#entries.some((entry) => entry.service.name === service.name)) {
      throw new TypeError(`Two services are named "${service.name}"`);
    }
    if (this.#stopping) throw new RangeError(`Cannot start service "${service.name}": homed is stopping`);
    try {
      await service.start();
    } catch (error) {
      throw new Error(`Service ${service.name} failed to start: ${(error as Error)?.message ?? String(error)}`, {
        cause: error,
      });
    }
    const entry: Entry = { service, state: "running", startedAt: this.#options.clock.now(), jobs: [] };
    this.#entries.push(entry);
    if (this.#scheduled) this.#scheduleJobs(entry);
    return service;
  }

  /** Starts every service's heartbeat and jobs (call once start-up is complete). */
  schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    for (const entry of this.#entries) this.#scheduleJobs(entry);
  }

  #scheduleJobs(entry: Entry): void {
    const { clock, logger, heartbeatMs } = this.#options;
    const { service } = entry;
    if (service.heartbeat) {
      const beat = service.heartbeat.bind(service);
      entry.jobs.push(
        new Job({ name: `${service.name}.heartbeat`, everyMs: heartbeatMs, run: () => beat(), clock, logger }),
      );
    }
    for (const spec of service.jobs?.() ?? []) {
      entry.jobs.push(
        new Job({ name: `${service.name}.${spec.name}`, everyMs: spec.everyMs, run: spec.run, clock, logger }),
      );
    }
    for (const job of entry.jobs) job.start();
  }

  /** The job named `<service>.<job>`, for running it on demand (tests, `/api` triggers). */
  job(name: string): Job | undefined {
    for (const entry of this.#entries) {
      const job = entry.jobs.find((j) => j.name === name);
      if (job) return job;
    }
    return undefined;
  }

  /**
   * Stops every service in reverse start order — first its jobs, then the service — all within `budgetMs` in total
   * (each gets what is left, at least 100 ms). A service that does not stop in time is logged and left behind, so
   * shutdown stays bounded. Idempotent.
   */
  stop(budgetMs = 5_000): Promise<void> {
    this.#stopping ??= (async () => {
      const { clock } = this.#options;
      const deadline = clock.monotonic() + budgetMs;
      for (const entry of [...this.#entries].reverse()) {
        entry.state = "stopping";
        const remaining = Math.max(100, deadline - clock.monotonic());
        const ok = await this.#bounded(entry.service.name, remaining, async () => {
          await Promise.all(entry.jobs.map((job) => job.stop()));
          await entry.service.stop();
        });
        entry.state = ok ? "stopped" : "failed";
      }
    })();
    return this.#stopping;
  }

  /** Stops one service under a deadline; false when it threw or took too long. */
  async #bounded(name: string, deadlineMs: number, work: () => Promise<void>): Promise<boolean> {
    const { clock, logger } = this.#options;
    const limit = deadline(clock, deadlineMs);
    try {
      if ((await limit.race(work())).late) {
        logger.error("Service {service} did not stop within {deadlineMs} ms; leaving it behind", {
          service: name,
          deadlineMs,
        });
        return false;
      }
      return true;
    } catch (error) {
      logger.error("Service {service} failed to stop cleanly: {error}", { service: name, error });
      return false;
    } finally {
      limit.cancel();
    }
  }

  /** Each service's state, start time, own counters and jobs, by name. */
  status(): Record<string, Record<string, unknown>> {
    const out: Record<string, Record<string, unknown>> = {};
    for (const entry of this.#entries) {
      let own: Record<string, unknown>;
      try {
        own = entry.service.status();
      } catch (error) {
        own = { status_error: (error as Error)?.message ?? String(error) };
      }
      out[entry.service.name] = {
        state: entry.state,
        started_at: new Date(entry.startedAt).toISOString(),
        ...own,
        jobs: Object.fromEntries(entry.jobs.map((job) => [job.name, job.status()])),
      };
    }
    return out;
  }
}
