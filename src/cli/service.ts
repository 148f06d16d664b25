/**
 * `homed service install|uninstall|status|unit`: a systemd unit that runs the daemon directly with its computed flags
 * (never through `npx` or `deno task`, which do not pass signals on), hardened (`NoNewPrivileges`,
 * `ProtectSystem=strict`, `ReadWritePaths=` only what the daemon writes, `PrivateTmp`), its secrets in an
 * `EnvironmentFile` of mode 0600, logs to journald, restarted on failure.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { commandFlags } from "../config/command_flags.ts";
import { type Layout, type LoadedConfig, safeEnvReader } from "../config/load.ts";
import { requiredPermissions } from "../config/permissions.ts";
import { envFileLine, envFileOf } from "../config/env_file.ts";
import { runsOnDeno } from "../config/runs_on_deno.ts";
import { pluginRights } from "../plugin/rights.ts";
import type { CommandLine } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { print, reportFailure } from "./output.ts";
import { checkRights } from "./rights_check.ts";
import { UsageError } from "./usage_error.ts";

/**
 * The socket systemd gives a `Type=notify` service in `NOTIFY_SOCKET`; the unit's flags grant exactly it, so the
 * daemon can say `READY=1` once it listens and `systemctl start` returns when homed answers.
 */
export const SYSTEMD_NOTIFY_SOCKET = "/run/systemd/notify";

/** Where units go unless told otherwise. */
export const UNIT_DIR = "/etc/systemd/system";

/**
 * One argument as systemd reads `ExecStart=`: quoted when it holds white space or quotes, `%` doubled, `\` and `"`
 * escaped.
 *
 * @example
 * ```ts
 * systemdQuote("/srv/my homed/main.ts"); // "\"/srv/my homed/main.ts\""
 * ```
 */
export function systemdQuote(arg: string): string {
  // systemd expands `%` specifiers everywhere: doubled to stay literal.
  const escaped = arg.replaceAll("%", "%%");
  if (!/[\s"'\\]/.test(escaped) && escaped !== "") return escaped;
  return `"${escaped.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** What the unit needs. */
export interface UnitOptions {
  execStart: string[];
  workingDirectory?: string;
  environment: Record<string, string>;
  envFile: string;
  readWritePaths: string[];
  /** A `file://` or `https://` URL of the docs. */
  documentation?: string;
  /** The daemon reports readiness (`Type=notify`); a compiled binary's fixed flags may lack the right to. */
  notify?: boolean;
  /** How long systemd waits after SIGTERM (the daemon's shutdown grace and some). */
  stopTimeoutSec: number;
}

/**
 * The unit's text.
 *
 * @example
 * ```ts
 * const text = serviceUnit({
 *   execStart: ["/usr/local/bin/homed", "--standard-layout", "run"],
 *   environment: {},
 *   envFile: "/etc/homed/homed.env",
 *   readWritePaths: ["/var/lib/homed"],
 *   stopTimeoutSec: 15,
 * });
 * // "[Unit]\nDescription=homed, the household butler\n…ExecStart=/usr/local/bin/homed --standard-layout run\n…"
 * ```
 */
export function serviceUnit(options: UnitOptions): string {
  const lines = [
    "[Unit]",
    "Description=homed, the household butler",
    ...(options.documentation ? [`Documentation=${options.documentation}`] : []),
    "After=network-online.target",
    "Wants=network-online.target",
    "",
    "[Service]",
    `Type=${options.notify ? "notify" : "simple"}`,
    ...(options.notify ? ["NotifyAccess=main"] : []),
    // ExecStart also expands `$NAME`: `$$` keeps a dollar literal.
    `ExecStart=${options.execStart.map((arg) => systemdQuote(arg.replaceAll("$", "$$$$"))).join(" ")}`,
    ...(options.workingDirectory ? [`WorkingDirectory=${systemdQuote(options.workingDirectory)}`] : []),
    ...Object.entries(options.environment).map(([name, value]) => `Environment=${systemdQuote(`${name}=${value}`)}`),
    `EnvironmentFile=-${options.envFile}`,
    "Restart=on-failure",
    "RestartSec=5",
    "KillSignal=SIGTERM",
    `TimeoutStopSec=${options.stopTimeoutSec}`,
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    "ProtectHome=read-only",
    "PrivateTmp=yes",
    "PrivateDevices=yes",
    "ProtectKernelTunables=yes",
    "ProtectControlGroups=yes",
    "RestrictSUIDSGID=yes",
    // "-": a folder that does not exist yet (plugins before the first install) must not stop the unit from starting.
    `ReadWritePaths=${options.readWritePaths.map((path) => systemdQuote(`-${path}`)).join(" ")}`,
    "StandardOutput=journal",
    "StandardError=journal",
    "SyslogIdentifier=homed",
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ];
  return lines.join("\n");
}

/**
 * The unit for this config: the daemon started as `homed flags` says — this checkout's `deno run` with the computed
 * flags, or a compiled binary's own `run`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * const text = await unitFor(loaded, "standard"); // the text of homed.service
 * ```
 */
export async function unitFor(loaded: LoadedConfig, layout: Layout): Promise<string> {
  const program = Deno.execPath();
  const compiled = !runsOnDeno(program);
  const tail = [...(layout === "standard" ? ["--standard-layout"] : []), "run"];
  const execStart = compiled ? [program, ...tail] : [
    program,
    "run",
    ...commandFlags(loaded, "run", await pluginRights(loaded.config, safeEnvReader(new Set())), {
      notifySocket: SYSTEMD_NOTIFY_SOCKET,
    }),
    fileURLToPath(Deno.mainModule),
    ...tail,
  ];
  return serviceUnit({
    execStart,
    ...(compiled ? {} : {
      workingDirectory: fileURLToPath(new URL("../", Deno.mainModule)),
      documentation: new URL("../README.md", Deno.mainModule).href,
    }),
    environment: loaded.location.path ? { HOMED_CONFIG: loaded.location.path } : {},
    notify: !compiled,
    envFile: envFileOf(loaded),
    readWritePaths: requiredPermissions(loaded, "run").write,
    stopTimeoutSec: Math.ceil(loaded.config.daemon.shutdown_grace / 1000) + 5,
  });
}

/** The secrets the config reads from the environment, as they are set now: the env file's text. */
function envFileText(loaded: LoadedConfig): { text: string; names: string[] } {
  const read = safeEnvReader(new Set());
  const names = loaded.envNames.filter((name) => read(name) !== undefined);
  let text: string;
  try {
    text = names.map((name) => envFileLine(name, read(name) ?? "")).join("\n");
  } catch (error) {
    // envFileLine refuses, with a TypeError naming it, a variable an env file cannot hold: the person's to change.
    if (error instanceof TypeError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  return { text: text ? `${text}\n` : "", names };
}

/**
 * Runs one action; resolves to what to print (secrets never appear in it).
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * console.log(await serviceAction("install", { loaded, layout: "standard", unitDir: UNIT_DIR }));
 * ```
 */
export async function serviceAction(
  action: string,
  options: { loaded: LoadedConfig; layout: Layout; unitDir: string },
): Promise<string> {
  const unitPath = join(options.unitDir, "homed.service");
  const envFile = envFileOf(options.loaded);
  switch (action) {
    case "unit":
      return await unitFor(options.loaded, options.layout);
    case "install": {
      let envNote: string;
      try {
        await Deno.stat(envFile);
        envNote = `kept ${envFile} as it is`;
      } catch {
        const { text, names } = envFileText(options.loaded);
        await Deno.writeTextFile(envFile, text, { mode: 0o600 });
        await Deno.chmod(envFile, 0o600);
        envNote = `wrote ${envFile} (mode 0600) with ${names.length ? names.join(", ") : "no variables yet"}`;
      }
      // After the env file: the unit's flags name it (--env-file) as `homed flags` does.
      await Deno.writeTextFile(unitPath, await unitFor(options.loaded, options.layout), { mode: 0o644 });
      const program = Deno.execPath();
      return [
        `Wrote ${unitPath}; ${envNote}.`,
        // npx keeps Deno in a cache that `npm cache clean` or a Node upgrade removes; the unit would then fail to start.
        ...(/[/\\]_npx[/\\]/.test(program)
          ? [
            `Note: the unit runs ${program}, from npx's cache. Copy it somewhere lasting (sudo install -m 755 ` +
            `"${program}" /usr/local/bin/deno) and install again from \`/usr/local/bin/deno task service install\`.`,
          ]
          : []),
        "Next: sudo systemctl daemon-reload && sudo systemctl enable --now homed",
        "Logs: journalctl -u homed -f    Status: systemctl status homed    Restart: sudo systemctl restart homed",
      ].join("\n");
    }
    case "uninstall": {
      try {
        await Deno.remove(unitPath);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        return `No unit at ${unitPath}; nothing to remove.`;
      }
      return `Removed ${unitPath} (kept ${envFile}). Run: sudo systemctl disable --now homed; sudo systemctl daemon-reload`;
    }
    case "status": {
      const lines: string[] = [];
      try {
        const current = await Deno.readTextFile(unitPath);
        const wanted = await unitFor(options.loaded, options.layout);
        lines.push(
          `${unitPath}: installed${
            current === wanted ? ", up to date" : ", differs from this config (run install again)"
          }`,
        );
      } catch {
        lines.push(`${unitPath}: not installed (homed service install)`);
      }
      try {
        const mode = (await Deno.stat(envFile)).mode ?? 0;
        lines.push(`${envFile}: mode ${(mode & 0o777).toString(8)}${(mode & 0o077) ? " — too open: chmod 600" : ""}`);
      } catch {
        lines.push(`${envFile}: missing`);
      }
      lines.push("Running state: systemctl status homed; logs: journalctl -u homed");
      return lines.join("\n");
    }
    default:
      throw new UsageError(
        `service: unknown action ${JSON.stringify(action)}; allowed: install, uninstall, status, unit`,
      );
  }
}

/**
 * `homed service [install|uninstall|status|unit]` (default `status`): every action but `unit` first checks homed's
 * rights for it, `--unit-dir` included.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await serviceCli(parseCommandLine(["--standard-layout", "service", "install"]));
 * ```
 */
export async function serviceCli(line: CommandLine): Promise<void> {
  const { options, action, layout } = line;
  const { loaded, denied } = await loadCommandConfig(options.config, layout);
  const unitDir = options["unit-dir"] ?? UNIT_DIR;
  if (action !== "unit") {
    checkRights(loaded, "service", denied, requiredPermissions(loaded, "service", { unitDir }));
  }
  await reportFailure("service: ", async () => {
    print(`${await serviceAction(action || "status", { loaded, layout, unitDir })}\n`);
  });
}
