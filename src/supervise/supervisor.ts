/**
 * `homed supervise`, for machines without systemd: runs the daemon as a child, restarts it when it crashes (after 1 s,
 * then doubling up to a minute; a run that lasted 10 minutes counts as healthy and resets the delay), and gives up
 * after a crash loop (5 crashes within 10 minutes) with a clear log line. SIGTERM and SIGINT are passed to the child
 * and end the supervision once it exits; SIGHUP is passed on (the daemon reloads its plugins). A pid file, when asked
 * for, holds the supervisor's pid while it runs.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";

/** A running child, as the supervisor needs it. */
export interface Child {
  readonly pid: number;
  status: Promise<{ code: number; signal: string | null }>;
  kill(signal: Deno.Signal): void;
}

/** Options of {@link Supervisor}. */
export interface SupervisorOptions {
  /** Starts the daemon. */
  spawn: () => Child;
  clock: Clock;
  logger: Logger;
  /** First restart delay, doubled per consecutive crash up to `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Giving up: this many crashes within `windowMs`. */
  crashLoop?: { count: number; windowMs: number };
  /** A run at least this long resets the delay. */
  healthyAfterMs?: number;
  /** Written with the supervisor's pid at start, removed at the end. */
  pidFile?: string;
}

/** How the supervision ended. */
export interface SupervisionEnd {
  /** The exit code for the supervisor: the daemon's on a requested stop or clean exit, 1 after a crash loop. */
  code: number;
  reason: "stopped" | "exited" | "crash_loop";
  restarts: number;
}

/** The supervisor. */
export class Supervisor {
  #options: SupervisorOptions;
  #child: Child | undefined;
  #stopping = false;
  #wake: (() => void) | undefined;
  readonly delays: number[] = [];

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   *
   * const spawn = (): Child => {
   *   const child = new Deno.Command(Deno.execPath(), { args: ["run", "src/main.ts", "run"], stdin: "null" }).spawn();
   *   return {
   *     pid: child.pid,
   *     status: child.status.then(({ code, signal }) => ({ code, signal })),
   *     kill: (signal) => child.kill(signal),
   *   };
   * };
   * const logger = log("supervisor");
   * const supervisor = new Supervisor({ spawn, clock: systemClock, logger, pidFile: "/run/homed.pid" });
   * Deno.exit((await supervisor.run()).code);
   * ```
   */
  constructor(options: SupervisorOptions) {
    this.#options = options;
  }

  /**
   * Passes a signal to the daemon; SIGTERM and SIGINT also end the supervision once it has exited.
   *
   * @example
   * ```ts
   * declare const supervisor: Supervisor;
   * Deno.addSignalListener("SIGTERM", () => supervisor.signal("SIGTERM"));
   * ```
   */
  signal(signal: Deno.Signal): void {
    if (signal === "SIGTERM" || signal === "SIGINT") {
      this.#stopping = true;
      this.#wake?.(); // a pending restart is not made
    }
    try {
      this.#child?.kill(signal);
    } catch { /* it already exited */ }
  }

  /** Supervises until a requested stop, a clean exit of the daemon, or a crash loop. */
  async run(): Promise<SupervisionEnd> {
    const { clock, logger, pidFile } = this.#options;
    const initial = this.#options.initialDelayMs ?? 1_000;
    const max = this.#options.maxDelayMs ?? 60_000;
    const loop = this.#options.crashLoop ?? { count: 5, windowMs: 10 * 60_000 };
    const healthyAfter = this.#options.healthyAfterMs ?? 10 * 60_000;
    if (pidFile) await Deno.writeTextFile(pidFile, `${Deno.pid}\n`);
    const crashes: number[] = [];
    let consecutive = 0;
    let restarts = 0;
    try {
      for (;;) {
        const started = clock.monotonic();
        const child = this.#options.spawn();
        this.#child = child;
        logger.info("Supervisor: homed started (pid {pid})", { pid: child.pid });
        const status = await child.status;
        this.#child = undefined;
        const ran = clock.monotonic() - started;
        if (this.#stopping) {
          logger.info("Supervisor: homed stopped (exit {code}); done", { code: status.code });
          return { code: status.code, reason: "stopped", restarts };
        }
        if (status.code === 0 && status.signal === null) {
          logger.info("Supervisor: homed exited cleanly; done");
          return { code: 0, reason: "exited", restarts };
        }
        const now = clock.monotonic();
        crashes.push(now);
        while (crashes.length && now - crashes[0]! > loop.windowMs) crashes.shift();
        const how = status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
        if (crashes.length >= loop.count) {
          logger.error(
            "Supervisor: homed crashed {count} times within {minutes} minutes (last: {how}); giving up — see its log",
            { count: crashes.length, minutes: Math.round(loop.windowMs / 60_000), how },
          );
          return { code: 1, reason: "crash_loop", restarts };
        }
        consecutive = ran >= healthyAfter ? 1 : consecutive + 1;
        const delay = Math.min(initial * 2 ** (consecutive - 1), max);
        this.delays.push(delay);
        logger.warning("Supervisor: homed crashed ({how}); restarting in {delay} ms", { how, delay });
        await new Promise<void>((resolve) => {
          const cancel = clock.after(delay, resolve);
          this.#wake = () => {
            cancel();
            resolve();
          };
        });
        this.#wake = undefined;
        if (this.#stopping) return { code: 0, reason: "stopped", restarts };
        restarts++;
      }
    } finally {
      if (pidFile) await Deno.remove(pidFile).catch(() => {});
    }
  }
}
