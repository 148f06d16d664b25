/**
 * `homed run`: starts the daemon after the rights check, tells systemd when it listens, and stops it on SIGINT or
 * SIGTERM within its grace period; SIGHUP rescans the plugins.
 *
 * @module
 */

import { startDaemon, StartupError } from "../daemon.ts";
import { log, setupLogging, stopLogging } from "../log/logging.ts";
import { RecentLines } from "../log/recent_lines.ts";
import { notifyClientPath, notifySocket, sdNotify } from "../service/sd_notify.ts";
import { safeEnvReader } from "../config/load.ts";
import { kindSecrets } from "../devices/kinds.ts";
import type { CommandLine } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { EXIT_FAILED, fail } from "./output.ts";
import { checkRights } from "./rights_check.ts";

/**
 * Runs the daemon; resolves once it listens (the signal handlers keep homed running and end it).
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await runCli(parseCommandLine(["run", "--config", "/etc/homed/homed.yaml"]));
 * ```
 */
export async function runCli(line: CommandLine): Promise<void> {
  const { loaded, denied } = await loadCommandConfig(line.options.config, line.layout);
  checkRights(loaded, "run", denied);
  const { config } = loaded;
  // The newest lines stay in memory too, for the console's status page (GET /api/logs).
  const recentLog = new RecentLines();
  setupLogging({
    recent: recentLog,
    level: config.log.level,
    format: config.log.format,
    secrets: [
      config.llm.api_key,
      ...config.llm.fallbacks.map((fallback) => fallback.api_key),
      config.daemon.api_token,
      ...Object.values(config.daemon.api_tokens).map((person) => person.token),
      // The keys of the servers homed talks to on the household's behalf: never in a log line.
      config.vision?.api_key ?? "",
      config.speech.stt?.api_key ?? "",
      config.speech.tts?.api_key ?? "",
      // And every configured device kind's (tokens, passwords).
      ...kindSecrets(config),
    ].filter((secret) => secret !== ""),
  });
  let daemon;
  try {
    daemon = await startDaemon(loaded, { recentLog });
  } catch (error) {
    stopLogging();
    if (error instanceof StartupError) return fail(error.message, EXIT_FAILED);
    throw error;
  }
  const notify = notifySocket(safeEnvReader(new Set()));
  const tellSystemd = async (state: string) => {
    if (!notify) return;
    const why = await sdNotify(state, { socket: notify, client: notifyClientPath(config.daemon.data_dir) });
    if (why) log().warning("sd_notify to {socket} failed: {why}", { socket: notify, why });
  };
  // Under `deno task`, a Ctrl-C or a kill reaches homed twice (from the terminal or sender, and forwarded by the task
  // runner): repeats within two seconds are the same request; a later one means "stop now".
  let firstSignal: number | undefined;
  const onSignal = async () => {
    const now = Date.now();
    if (firstSignal !== undefined) {
      if (now - firstSignal < 2_000) return;
      log().warning("Second signal: exiting now");
      Deno.exit(1);
    }
    firstSignal = now;
    // Whatever hangs (a peer, a device, a disk), homed is gone within the grace period plus 2 s.
    const limitMs = config.daemon.shutdown_grace + 1_800;
    const watchdog = setTimeout(() => {
      log().error("Shutdown took longer than {limitMs} ms; exiting now", { limitMs });
      stopLogging();
      Deno.exit(1);
    }, limitMs);
    await tellSystemd("STOPPING=1");
    await daemon.stop();
    clearTimeout(watchdog);
    stopLogging();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  // SIGHUP (from `homed supervise` or `kill -HUP`): rescan the plugins; the config is read at start only.
  Deno.addSignalListener("SIGHUP", () => {
    daemon.reloadPlugins().then(
      (report) => log().info("SIGHUP: plugins reloaded, {eligible} of {skills} skills offered", report),
      (error) => log().error("SIGHUP: the plugin reload failed: {error}", { error }),
    );
  });
  // Ready only once a stop request is handled: a SIGTERM right after READY=1 (a supervisor, systemd) is a clean stop,
  // never a kill by the default action.
  await tellSystemd(`READY=1\nSTATUS=Listening on ${daemon.url}`);
}
