/**
 * What every long-lived part of homed is: a {@link Service} with a lifecycle, a heartbeat, periodic jobs and a
 * status. The daemon holds them in a {@link ServiceHost}, which starts them in order, stops them in reverse, runs
 * their heartbeats and jobs in isolation, and builds `/api/status` from them.
 *
 * @module
 */

/** A periodic job a service owns (a re-index, a compaction, later the memory distiller). */
export interface JobSpec {
  /** Short name, unique within the service; logs and status show `<service>.<job>`. */
  name: string;
  /** Time between the end of one run and the start of the next. */
  everyMs: number;
  /**
   * One run. It may take long but must yield to the event loop (await between slices); `signal` aborts at shutdown.
   * A throw is logged, counted and retried with backoff; it never reaches the daemon.
   */
  run(signal: AbortSignal): Promise<void> | void;
}

/** A long-lived part of homed. */
export interface Service {
  /** Unique name, shown in logs and `/api/status` (`knowledge`, `io`, `agent`, `http`). */
  readonly name: string;
  /** Brings the service up; a throw stops start-up with the service named. */
  start(): Promise<void>;
  /** Releases everything; called once, in reverse start order, under a deadline. */
  stop(): Promise<void>;
  /** Cheap local bookkeeping on every daemon heartbeat; never calls the LLM. Isolated like a job. */
  heartbeat?(): Promise<void> | void;
  /** Periodic jobs; scheduled once every service has started. */
  jobs?(): JobSpec[];
  /** Counters for `/api/status`: plain JSON, times as ISO strings, durations in whole milliseconds. */
  status(): Record<string, unknown>;
}
