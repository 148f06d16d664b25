/**
 * `homed`: the CLI and entry point. `homed run` (default), `chat`, `doctor`, `init`, `flags`.
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { taskCommand } from "./cli/commands.ts";
import { ConfigError } from "./config/config_error.ts";
import { connectHost } from "./config/listen_addr.ts";
import { type Layout, loadConfig, type LoadedConfig, safeEnvReader } from "./config/load.ts";
import { commandFlags } from "./config/command_flags.ts";
import { pluginRights } from "./plugin/rights.ts";
import {
  initPermissions,
  missingPermissions,
  PERMISSION_MODES,
  type PermissionMode,
  requiredPermissions,
  toFlags,
  unsplittablePaths,
} from "./config/permissions.ts";
import { initTarget } from "./flags.ts";
import { startDaemon, StartupError } from "./daemon.ts";
import { log, setupLogging, stopLogging } from "./log/logging.ts";
import { COMMIT } from "./build_info.ts";
import { pathExists } from "./fs/path_exists.ts";
import { notifyClientPath, notifySocket, sdNotify } from "./service/sd_notify.ts";
import { VERSION } from "./version.ts";

const USAGE = `homed ${VERSION}: a 24/7 butler for one household

Usage: homed [--standard-layout] <command> [options]

Commands:
  run      Run the daemon (default)             [--config FILE]
  chat     Chat with a running daemon            [--config FILE] [--user NAME] [--message TEXT] [--url URL]
  doctor   Check config, rights, data dir, LLM   [--config FILE]
  init     Ask for the LLM, key and LAN; write the config, persona and homed.env; run doctor
           [--config FILE (default config/homed.yaml)] [--force] [--provider deepseek|ollama|URL] [--model M] [--lan] [--port N]
  flags    Print the deno permission flags       [--config FILE] [--mode MODE] [--file ARCHIVE]
  version  Print the version, commit and Deno version
  supervise  Run the daemon and restart it when it crashes (no systemd)  [--config FILE] [--pid-file FILE]
  service  install|uninstall|status|unit — the systemd unit     [--config FILE] [--unit-dir DIR]
  backup   [FILE|-] — data, knowledge, plugins, config and persona in one .tar.gz (default data/backups/)
  tracker  status|diff|commit|revert [PATH…] [--all] — what changed in knowledge, plugins, config, persona
  restore  FILE|- — check a backup whole, then put it in place (homed stopped; the old files are kept)

Config lookup: --config, then $HOMED_CONFIG, then config/homed.yaml (with --standard-layout:
/etc/homed/homed.yaml and data in /var/lib/homed), then the embedded defaults.`;

const encoder = new TextEncoder();
const print = (text: string) => Deno.stdout.writeSync(encoder.encode(text));
const fail = (message: string, code = 2): never => {
  Deno.stderr.writeSync(encoder.encode(`homed: ${message}\n`));
  Deno.exit(code);
};

async function load(flag: string | undefined, layout: Layout): Promise<{ loaded: LoadedConfig; denied: Set<string> }> {
  const denied = new Set<string>();
  try {
    const loaded = await loadConfig({ flag, readEnv: safeEnvReader(denied), cwd: Deno.cwd(), layout });
    return { loaded, denied };
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message);
    throw error;
  }
}

function checkRights(
  loaded: LoadedConfig,
  mode: PermissionMode,
  denied: Set<string>,
  rights = requiredPermissions(loaded, mode),
): void {
  const missing = missingPermissions(rights);
  for (const name of denied) {
    const line = `env access to ${name}`;
    if (!missing.includes(line)) missing.push(line);
  }
  reportMissing(missing, mode, unsplittablePaths(rights));
}

function reportMissing(missing: string[], mode: PermissionMode, spaced: string[]): void {
  if (!missing.length) return;
  fail(
    [
      `homed lacks rights its config needs: ${missing.join("; ")}.`,
      `Run it with the flags \`homed flags --mode ${mode}${
        mode === "backup" || mode === "restore" ? " --file ARCHIVE" : ""
      }\` prints (${taskCommand(mode === "run" ? "start" : mode)}`,
      "does this; with deno task, name the config through HOMED_CONFIG rather than --config).",
      spaced.length ? `Paths with spaces or commas cannot pass through deno task: ${spaced.join(", ")}.` : "",
    ].filter(Boolean).join("\n"),
  );
}

async function run(flag: string | undefined, layout: Layout): Promise<void> {
  const { loaded, denied } = await load(flag, layout);
  checkRights(loaded, "run", denied);
  const { config } = loaded;
  setupLogging({
    level: config.log.level,
    format: config.log.format,
    secrets: [
      config.llm.api_key,
      config.daemon.api_token,
      config.onebot.access_token,
      ...Object.values(config.daemon.api_tokens).map((person) => person.token),
    ],
  });
  let daemon;
  try {
    daemon = await startDaemon(loaded);
  } catch (error) {
    stopLogging();
    if (error instanceof StartupError) return fail(error.message, 1);
    throw error;
  }
  const notify = notifySocket(safeEnvReader(new Set()));
  const tellSystemd = async (state: string) => {
    if (!notify) return;
    const why = await sdNotify(state, { socket: notify, client: notifyClientPath(config.daemon.data_dir) });
    if (why) log().warning("sd_notify to {socket} failed: {why}", { socket: notify, why });
  };
  await tellSystemd(`READY=1\nSTATUS=Listening on ${daemon.url}`);
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
}

/**
 * `homed version`: homed's version, the commit it was built from, and the Deno, V8 and TypeScript it runs on.
 *
 * @example
 * ```ts
 * versionLine(); // "homed 0.1.0 (commit dev; deno 2.9.6, v8 15.0.245.2, typescript 6.0.3)"
 * ```
 */
export function versionLine(): string {
  const { deno, v8, typescript } = Deno.version;
  return `homed ${VERSION} (commit ${COMMIT}; deno ${deno}, v8 ${v8}, typescript ${typescript})`;
}

async function main(argv: string[]): Promise<void> {
  let layout: Layout = "repo";
  if (argv[0] === "--standard-layout") {
    layout = "standard";
    argv = argv.slice(1);
  }
  const command = argv[0] && !argv[0].startsWith("-") ? argv[0] : "run";
  let rest = argv[0] === command ? argv.slice(1) : argv;
  // `service` takes an action word first: homed service install|uninstall|status|unit.
  let action = "";
  if (command === "service" && rest[0] && !rest[0].startsWith("-")) [action, rest] = [rest[0], rest.slice(1)];
  // `backup` and `restore` take the archive first; `-` is standard output or input.
  if ((command === "backup" || command === "restore") && rest[0] && (rest[0] === "-" || !rest[0].startsWith("-"))) {
    [action, rest] = [rest[0], rest.slice(1)];
  }
  let values, positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      options: {
        config: { type: "string" },
        user: { type: "string" },
        message: { type: "string" },
        url: { type: "string" },
        mode: { type: "string" },
        force: { type: "boolean" },
        "pid-file": { type: "string" },
        "unit-dir": { type: "string" },
        file: { type: "string" },
        provider: { type: "string" },
        model: { type: "string" },
        lan: { type: "boolean" },
        port: { type: "string" },
        all: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
      },
      strict: true,
      // `tracker` takes an action word, then the paths it applies to.
      allowPositionals: command === "tracker",
    }));
  } catch (error) {
    return fail(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (values.help || command === "help") return void print(`${USAGE}\n`);
  if (values.version || command === "version") return void print(`${versionLine()}\n`);

  switch (command) {
    case "run":
      return await run(values.config, layout);
    case "flags": {
      const mode = (values.mode ?? "run") as PermissionMode;
      if (!PERMISSION_MODES.includes(mode)) {
        fail(`--mode ${JSON.stringify(mode)} is not one of ${PERMISSION_MODES.join(", ")}`);
      }
      if (mode === "init") {
        const target = initTarget({ flag: values.config, cwd: Deno.cwd(), readEnv: safeEnvReader(new Set()) });
        return void print(`${toFlags(initPermissions(target, Deno.cwd())).join(" ")}\n`);
      }
      const { loaded } = await load(values.config, layout);
      const extra = mode === "run" || mode === "doctor"
        ? await pluginRights(loaded.config, safeEnvReader(new Set()))
        : undefined;
      const file = values.file === undefined ? {} : { file: values.file };
      return void print(`${commandFlags(loaded, mode, extra, file).join(" ")}\n`);
    }
    case "chat": {
      const { loaded, denied } = await load(values.config, layout);
      if (!values.url) checkRights(loaded, "chat", denied);
      const listen = loaded.config.daemon.listen_addr;
      // Each command loads only what it uses: the daemon's start-up does not pay for the CLI clients.
      const { runChat } = await import("./cli/chat.ts");
      const code = await runChat({
        url: values.url ?? `http://${connectHost(listen)}:${listen.port}`,
        token: loaded.config.daemon.api_token,
        user: values.user ?? "owner",
        message: values.message,
        input: Deno.stdin.readable,
        write: print,
        interactive: Deno.stdin.isTerminal(),
      });
      return Deno.exit(code);
    }
    case "service": {
      const { loaded, denied } = await load(values.config, layout);
      const { serviceAction, UNIT_DIR } = await import("./cli/service.ts");
      const unitDir = values["unit-dir"] ?? UNIT_DIR;
      if (action !== "unit") {
        checkRights(loaded, "service", denied, requiredPermissions(loaded, "service", { unitDir }));
      }
      try {
        return void print(`${await serviceAction(action || "status", { loaded, layout, unitDir })}\n`);
      } catch (error) {
        return fail(`service: ${(error as Error).message}`, error instanceof TypeError ? 2 : 1);
      }
    }
    case "backup":
    case "restore": {
      const { loaded, denied } = await load(values.config, layout);
      const archive = action === "" ? undefined : action;
      checkRights(
        loaded,
        command,
        denied,
        requiredPermissions(loaded, command, archive === undefined ? {} : { file: archive }),
      );
      const { runBackup, runRestore } = await import("./cli/backup_command.ts");
      try {
        return void print(
          command === "backup"
            ? await runBackup({ loaded, file: archive })
            : await runRestore({ loaded, file: archive }),
        );
      } catch (error) {
        return fail(`${command}: ${(error as Error).message}`, error instanceof TypeError ? 2 : 1);
      }
    }
    case "tracker": {
      const { loaded, denied } = await load(values.config, layout);
      checkRights(loaded, "tracker", denied);
      const { runTracker } = await import("./cli/tracker_command.ts");
      const { trackerFor } = await import("./tracker/tracker_for.ts");
      try {
        return void print(
          await runTracker(trackerFor(loaded, Date.now), positionals[0] ?? "status", positionals.slice(1), {
            all: values.all ?? false,
          }),
        );
      } catch (error) {
        return fail(`tracker: ${(error as Error).message}`, error instanceof TypeError ? 2 : 1);
      }
    }
    case "supervise": {
      const { loaded, denied } = await load(values.config, layout);
      checkRights(loaded, "supervise", denied);
      setupLogging({ level: loaded.config.log.level, format: loaded.config.log.format, secrets: [] });
      const { superviseDaemon } = await import("./supervise/supervise_command.ts");
      let code: number;
      try {
        code = await superviseDaemon({
          loaded,
          layout,
          config: values.config,
          pidFile: values["pid-file"] ?? join(loaded.config.daemon.data_dir, "homed.pid"),
        });
      } catch (error) {
        stopLogging();
        return fail(`supervise: ${(error as Error).message}`, 1);
      }
      stopLogging();
      return Deno.exit(code);
    }
    case "doctor": {
      const { loaded } = await load(values.config, layout);
      const { runDoctor } = await import("./cli/doctor.ts");
      const checks = await runDoctor(loaded);
      for (const check of checks) print(`${check.ok ? "ok  " : "FAIL"} ${check.name.padEnd(12)} ${check.detail}\n`);
      return Deno.exit(checks.every((check) => check.ok) ? 0 : 1);
    }
    case "init": {
      const configPath = initTarget({ flag: values.config, cwd: Deno.cwd(), readEnv: safeEnvReader(new Set()) });
      // HOMED_CONFIG may be unreadable (then it counts as unset); the files are what init must be able to write.
      const initRights = initPermissions(configPath, Deno.cwd());
      reportMissing(missingPermissions({ ...initRights, env: [], run: [] }), "init", []);
      try {
        const { runInit } = await import("./cli/init.ts");
        const { gatherAnswers } = await import("./cli/init_answers.ts");
        const { terminalAsk } = await import("./cli/terminal_ask.ts");
        const { ask, interactive } = terminalAsk();
        const flags = { provider: values.provider, model: values.model, lan: values.lan, port: values.port };
        const given = Object.values(flags).some((value) => value !== undefined);
        if (!values.force && pathExists(configPath)) {
          return fail(`${configPath} already exists; pass --force to overwrite it`, 1);
        }
        // No terminal, no flags and nothing piped in (the first question meets the end of input): the plain starter
        // config, as a script that asks nothing expects.
        let asked = 0, silent = false;
        const answers = await gatherAnswers(flags, async (question, options) => {
          const answer = await ask(question, options);
          if (asked++ === 0 && answer === undefined && !interactive && !given) silent = true;
          return answer;
        }, { interactive });
        const { doctorCommand } = await import("./cli/doctor_command.ts");
        const canRun = missingPermissions({ read: [], write: [], net: [], env: [], run: initRights.run ?? [] })
          .length === 0;
        const report = await runInit({
          configPath,
          home: Deno.cwd(),
          force: values.force ?? false,
          ...(silent ? {} : { answers }),
          ...(canRun ? { doctor: (path: string) => doctorCommand(path, layout) } : {}),
        });
        return void print(`${report.join("\n")}\n`);
      } catch (error) {
        return fail((error as Error).message, error instanceof TypeError ? 2 : 1);
      }
    }
    default:
      return fail(`unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
  }
}

if (import.meta.main) await main(Deno.args);
