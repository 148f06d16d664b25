/**
 * `homed supervise`: the daemon as a child process of a {@link Supervisor}, started exactly as `homed flags` says (a
 * `deno run` of this checkout with the daemon's computed flags, or this binary's own `run`), with SIGTERM, SIGINT and
 * SIGHUP passed on. From a checkout it runs the bundle (`dist/homed.js`: less memory, a faster start) with the same
 * flags, building it once at the start when it is missing or stale; a build that fails leaves the sources, said in
 * the log — a failed build never keeps the house from running.
 *
 * @module
 */

import { dirname } from "node:path";
import { systemClock } from "../clock.ts";
import { runsOnDeno } from "../config/runs_on_deno.ts";
import { selfCommand } from "../rights/self_command.ts";
import { DAEMON_ENV } from "../rights/command_flags.ts";
import type { DaemonEntry } from "../rights/daemon_entry.ts";
import { sourceCheckout } from "../rights/daemon_entry.ts";
import { preparedEntry } from "../rights/bundle_build.ts";
import { type Layout, type LoadedConfig, safeEnvReader } from "../config/load.ts";
import { log } from "../log/logging.ts";
import { pluginRights } from "../plugin/rights.ts";
import { type Child, Supervisor } from "./supervisor.ts";

/**
 * The daemon's command line: the Deno this runs on with the daemon's flags and this main module (or `entry`, the
 * checkout's bundle or sources as `daemon_entry.ts` chose), or — in a compiled binary, whose rights are built in —
 * the binary itself.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * await daemonCommand(loaded, "repo", undefined);
 * // ["/usr/bin/deno", ["run", "--no-prompt", "--allow-read=…", …, "/srv/homed/src/main.ts", "run"]]
 * ```
 *
 * @example The checkout's fresh bundle
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 * import { daemonEntry, sourceCheckout } from "../rights/daemon_entry.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * await daemonCommand(loaded, "repo", undefined, daemonEntry(sourceCheckout()));
 * // ["/usr/bin/deno", ["run", "--no-config", "--no-prompt", "--allow-read=…,/srv/homed/dist/glue.wasm,…", …, "/srv/homed/dist/homed.js", "run"]]
 * ```
 */
export async function daemonCommand(
  loaded: LoadedConfig,
  layout: Layout,
  config: string | undefined,
  entry?: DaemonEntry,
): Promise<[string, string[]]> {
  const tail = [
    ...(layout === "standard" ? ["--standard-layout"] : []),
    "run",
    ...(config ? ["--config", config] : []),
  ];
  const extra = runsOnDeno() ? await pluginRights(loaded.config, safeEnvReader(new Set())) : undefined;
  return selfCommand(loaded, "run", tail, extra, entry);
}

/**
 * Supervises the daemon until it is stopped, exits cleanly or crash-loops; resolves to the exit code.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * Deno.exit(await superviseDaemon({ loaded, layout: "repo", config: undefined, pidFile: "/var/lib/homed/homed.pid" }));
 * ```
 */
export async function superviseDaemon(
  options: { loaded: LoadedConfig; layout: Layout; config: string | undefined; pidFile: string },
): Promise<number> {
  const logger = log("supervisor");
  const entry = await entryAtStart(logger);
  if (entry === "stopped") return 0;
  logger.info("Supervisor: {reason}", { reason: entry.reason });
  const [program, args] = await daemonCommand(options.loaded, options.layout, options.config, entry);
  try {
    await Deno.mkdir(dirname(options.pidFile), { recursive: true });
  } catch (error) {
    throw new Error(`cannot make the folder of the pid file ${options.pidFile}: ${(error as Error).message}`);
  }
  const spawn = (): Child => {
    const child = new Deno.Command(program, { args, env: { ...DAEMON_ENV }, stdin: "null" }).spawn();
    return {
      pid: child.pid,
      status: child.status.then((status) => ({ code: status.code, signal: status.signal })),
      kill: (signal) => child.kill(signal),
    };
  };
  const supervisor = new Supervisor({ spawn, clock: systemClock, logger, pidFile: options.pidFile });
  const signals: Deno.Signal[] = ["SIGTERM", "SIGINT", "SIGHUP"];
  const handlers = signals.map((signal) => [signal, () => supervisor.signal(signal)] as const);
  for (const [signal, handler] of handlers) Deno.addSignalListener(signal, handler);
  try {
    return (await supervisor.run()).code;
  } finally {
    for (const [signal, handler] of handlers) Deno.removeSignalListener(signal, handler);
  }
}

/**
 * The entry the daemon runs from: a checkout's bundle, built first when it is missing or stale (once, here; a crash
 * restarts the same entry). A SIGTERM, SIGINT or SIGHUP meanwhile gives the build up and ends the supervisor:
 * "stopped".
 */
async function entryAtStart(logger: ReturnType<typeof log>): Promise<DaemonEntry | "stopped"> {
  const root = sourceCheckout();
  if (root === undefined) return { kind: "self", reason: "running itself (the bundle or a compiled homed)" };
  const abort = new AbortController();
  const signals: Deno.Signal[] = ["SIGTERM", "SIGINT", "SIGHUP"];
  const stop = () => abort.abort();
  for (const signal of signals) Deno.addSignalListener(signal, stop);
  try {
    const entry = await preparedEntry(root, {
      build: true,
      say: (line) => logger.info("Supervisor: {line}", { line }),
      signal: abort.signal,
    });
    return abort.signal.aborted ? "stopped" : entry;
  } finally {
    for (const signal of signals) Deno.removeSignalListener(signal, stop);
  }
}
