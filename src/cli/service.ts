/**
 * `homed service install|uninstall|status|unit`: a systemd unit that runs the daemon directly with its computed flags
 * (never through `npx` or `deno task`, which do not pass signals on), hardened (`NoNewPrivileges`,
 * `ProtectSystem=strict`, `ReadWritePaths=` only what the daemon writes, `PrivateTmp`), its secrets in an
 * `EnvironmentFile` of mode 0600, logs to journald, restarted on failure. The unit follows the config: without local
 * devices `PrivateDevices=yes`; with them exactly their device nodes (`DevicePolicy=closed`, one `DeviceAllow=` each)
 * and the groups that own them; with MCP servers started by a package runner (`npx`, `uvx` …) a writable home of
 * their own for its cache.
 *
 * From a checkout the unit runs its bundle (`dist/homed.js`: ≈ 14 MB less memory, a faster start) with the same
 * flags; `install` builds it first when it is missing or stale, and writes a unit running the sources (saying why)
 * when the build fails. `unit` and `status` build nothing: they show what install would write now.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { commandFlags, DAEMON_ENV } from "../rights/command_flags.ts";
import { type Layout, type LoadedConfig, safeEnvReader } from "../config/load.ts";
import { mcpServers } from "../config/mcp_servers.ts";
import { missingPermissions, requiredPermissions } from "../rights/permissions.ts";
import type { Config } from "../config/schema.ts";
import { envFileLine, envFileOf } from "../config/env_file.ts";
import { runsOnDeno } from "../config/runs_on_deno.ts";
import { kindRights } from "../devices/kinds.ts";
import { pluginRights } from "../plugin/rights.ts";
import { BUNDLE_DENO_FLAGS, type DaemonEntry, daemonEntry, sourceCheckout } from "../rights/daemon_entry.ts";
import { preparedEntry } from "../rights/bundle_build.ts";
import type { CommandLine } from "./command_line.ts";
import { DENO_COMMAND } from "./commands.ts";
import { loadCommandConfig } from "./command_config.ts";
import { runningHomed } from "./homed_probe.ts";
import { EXIT_REFUSED, fail, print, reportFailure } from "./output.ts";
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

/**
 * The local devices' grants: `DeviceAllow=` entries (a device node or a class, with its access) and the groups that
 * own those nodes on Debian and Raspberry Pi OS.
 */
export interface DeviceGrants {
  allow: string[];
  groups: string[];
}

/** Where a package runner keeps its cache under the unit: `CacheDirectory=` (below /var/cache) and `HOME` there. */
export interface RunnerHome {
  /** The `CacheDirectory=` name, `homed`: systemd makes `/var/cache/homed`, writable whatever ProtectSystem says. */
  cacheDirectory: string;
  /** The MCP servers' `HOME` (homed passes its own on): `/var/cache/homed`. */
  home: string;
  /**
   * Deno's cache as it is without `HOME` (root's, `/root/.cache/deno`), so the daemon keeps finding its modules;
   * undefined for a compiled homed, which carries them.
   */
  denoDir?: string;
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
  /** The configured local devices' nodes and groups; none: `PrivateDevices=yes`. */
  devices?: DeviceGrants;
  /** MCP servers run by `npx`, `uvx` and the like: a writable home for their caches. */
  runnerHome?: RunnerHome;
}

/** Whether a group of this name exists here (`/etc/group`); a unit naming one that does not fails to start. */
function systemGroup(): (name: string) => boolean {
  let names: Set<string>;
  try {
    names = new Set(Deno.readTextFileSync("/etc/group").split("\n").map((line) => line.split(":")[0]!));
  } catch {
    names = new Set();
  }
  return (name) => names.has(name);
}

/** A device path as `DeviceAllow=` takes it: no white space (it has no quoting), `%` doubled. */
function devicePath(path: string, setting: string): string {
  if (/\s/.test(path)) {
    throw new UsageError(`${setting}: ${JSON.stringify(path)} has white space, which a systemd unit cannot grant`);
  }
  return path.replaceAll("%", "%%");
}

/**
 * Exactly what the configured device kinds need under systemd (their `nodes`): a serial port its path, a GPIO chip
 * `/dev/<chip>`, the microphone and the speaker ALSA's devices (`char-alsa`), the camera the `/dev/…` nodes its command
 * names (else every video device, `char-video4linux`); each read-write. Groups only those `hasGroup` knows (a missing
 * one would stop the unit from starting; the unit runs as root, so they matter only once it gets a `User=`).
 *
 * @example
 * ```ts
 * import { parseConfig } from "../config/load.ts";
 *
 * const { config } = parseConfig({
 *   text: "devices: { serial: { sensors: { path: /dev/ttyUSB0 } }, gpio: { bell: { line: 17, direction: in } } }",
 *   location: { path: undefined, origin: "embedded defaults" },
 *   readEnv: () => undefined,
 *   cwd: "/",
 * });
 * deviceGrants(config, () => true);
 * // { allow: ["/dev/ttyUSB0 rw", "/dev/gpiochip0 rw"], groups: ["dialout", "gpio"] }
 * ```
 */
export function deviceGrants(config: Config, hasGroup: (name: string) => boolean): DeviceGrants {
  const allow: string[] = [];
  const groups: string[] = [];
  for (const { node, setting, group } of kindRights(config).nodes) {
    const entry = `${setting === undefined ? node : devicePath(node, setting)} rw`;
    if (!allow.includes(entry)) allow.push(entry);
    if (!groups.includes(group)) groups.push(group);
  }
  return { allow, groups: groups.filter(hasGroup) };
}

/**
 * Programs that fetch and cache what they run (`npx`, `npm`, `pnpm`, `yarn`, `bun`, `node`, `deno`, `uvx`, `uv`,
 * `pipx`): under `ProtectHome=read-only` their cache in root's home is read-only, so `npx -y server` fails to start.
 */
const PACKAGE_RUNNERS = new Set([
  "npx",
  "npm",
  "pnpm",
  "pnpx",
  "yarn",
  "bun",
  "bunx",
  "node",
  "deno",
  "uv",
  "uvx",
  "pipx",
]);

/**
 * The enabled stdio MCP servers whose command is a package runner (`npx`, `uvx` …), by name.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * runnerServers(loaded); // ["filesystem"] for `filesystem: { command: npx, args: [-y, @modelcontextprotocol/server-filesystem, /srv] }`
 * ```
 */
export function runnerServers(loaded: LoadedConfig): string[] {
  return mcpServers(loaded.config, loaded.location.path)
    .filter((server) => server.enabled && server.command && PACKAGE_RUNNERS.has(basename(server.command)))
    .map((server) => server.name);
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
    // No devices: a /dev of pseudo devices only. Devices: the whole /dev visible, but only theirs opened (cgroup).
    ...(options.devices?.allow.length
      ? [
        "PrivateDevices=no",
        "DevicePolicy=closed",
        ...options.devices.allow.map((entry) => `DeviceAllow=${entry}`),
        ...(options.devices.groups.length ? [`SupplementaryGroups=${options.devices.groups.join(" ")}`] : []),
      ]
      : ["PrivateDevices=yes"]),
    "ProtectKernelTunables=yes",
    "ProtectControlGroups=yes",
    "RestrictSUIDSGID=yes",
    // "-": a folder that does not exist yet (plugins before the first install) must not stop the unit from starting.
    `ReadWritePaths=${options.readWritePaths.map((path) => systemdQuote(`-${path}`)).join(" ")}`,
    // A package runner's cache (npx: $HOME/.npm, uvx: $HOME/.cache/uv) in a home of the servers' own, made by
    // systemd below /var/cache; root's home stays read-only (npx's cache there may hold the Deno this unit runs).
    ...(options.runnerHome
      ? [
        `CacheDirectory=${options.runnerHome.cacheDirectory}`,
        `Environment=${systemdQuote(`HOME=${options.runnerHome.home}`)}`,
        ...(options.runnerHome.denoDir
          ? [`Environment=${systemdQuote(`DENO_DIR=${options.runnerHome.denoDir}`)}`]
          : []),
      ]
      : []),
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
 * flags (of its fresh bundle, or its sources: `entry`, by default as the checkout is now, nothing built), or a
 * compiled binary's own `run`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * const text = await unitFor(loaded, "standard"); // the text of homed.service
 * ```
 */
export async function unitFor(
  loaded: LoadedConfig,
  layout: Layout,
  entry: DaemonEntry = daemonEntry(sourceCheckout()),
): Promise<string> {
  const program = Deno.execPath();
  const compiled = !runsOnDeno(program);
  const tail = [...(layout === "standard" ? ["--standard-layout"] : []), "run"];
  const bundle = entry.kind === "bundle" ? { bundleDir: dirname(entry.script) } : {};
  const execStart = compiled ? [program, ...tail] : [
    program,
    "run",
    ...(entry.kind === "bundle" ? BUNDLE_DENO_FLAGS : []),
    ...commandFlags(loaded, "run", await pluginRights(loaded.config, safeEnvReader(new Set())), {
      notifySocket: SYSTEMD_NOTIFY_SOCKET,
      ...bundle,
    }),
    entry.kind === "self" ? fileURLToPath(Deno.mainModule) : entry.script,
    ...tail,
  ];
  return serviceUnit({
    execStart,
    ...(compiled ? {} : {
      workingDirectory: fileURLToPath(new URL("../", Deno.mainModule)),
      documentation: new URL("../README.md", Deno.mainModule).href,
    }),
    environment: { ...DAEMON_ENV, ...(loaded.location.path ? { HOMED_CONFIG: loaded.location.path } : {}) },
    notify: !compiled,
    envFile: envFileOf(loaded),
    readWritePaths: requiredPermissions(loaded, "run").write,
    stopTimeoutSec: Math.ceil(loaded.config.daemon.shutdown_grace / 1000) + 5,
    devices: deviceGrants(loaded.config, systemGroup()),
    ...(runnerServers(loaded).length
      ? {
        runnerHome: {
          cacheDirectory: RUNNER_CACHE,
          home: `/var/cache/${RUNNER_CACHE}`,
          // The unit runs as root without HOME: Deno's cache is root's, and stays so.
          ...(compiled ? {} : { denoDir: "/root/.cache/deno" }),
        },
      }
      : {}),
  });
}

/** Whether `path` is there, a link to nothing included (`systemctl enable` leaves a link in a `.wants` folder). */
function linkExists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The `CacheDirectory=` of MCP servers started by a package runner: `/var/cache/homed`, their `HOME`. */
const RUNNER_CACHE = "homed";

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
  options: { loaded: LoadedConfig; layout: Layout; unitDir: string; force?: boolean },
): Promise<string> {
  const unitPath = join(options.unitDir, "homed.service");
  const envFile = envFileOf(options.loaded);
  switch (action) {
    case "unit": {
      const entry = daemonEntry(sourceCheckout());
      // stdout is the unit (to redirect into a file); the note goes beside it.
      if (entry.kind === "sources") {
        console.error(`Note: this unit is ${entry.reason} (\`homed service install\` builds it first).`);
      }
      return await unitFor(options.loaded, options.layout, entry);
    }
    case "install":
      return await install(options.loaded, options.layout, unitPath);
    case "uninstall": {
      try {
        await Deno.lstat(unitPath);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        return `No unit at ${unitPath}; nothing to remove.`;
      }
      // systemctl needs the unit file to stop and disable homed: it goes only once homed is disabled and stopped.
      if (!options.force) {
        const enabled = linkExists(join(options.unitDir, "multi-user.target.wants", "homed.service"));
        const running = await runningHomed(options.loaded);
        if (enabled || running) {
          const state = [enabled ? "enabled" : "", running ? `running (it answers at ${running})` : ""]
            .filter(Boolean).join(" and ");
          throw new Error(
            `homed is ${state}; nothing was removed. First run: sudo systemctl disable --now homed — then ` +
              `homed service uninstall again (--force removes ${unitPath} anyway)`,
          );
        }
      }
      await Deno.remove(unitPath);
      return `Removed ${unitPath} (kept ${envFile}). Run: sudo systemctl daemon-reload`;
    }
    case "status": {
      const lines: string[] = [];
      try {
        const current = await Deno.readTextFile(unitPath);
        const wanted = await unitFor(options.loaded, options.layout, daemonEntry(sourceCheckout()));
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
      const entry = daemonEntry(sourceCheckout());
      if (entry.kind !== "self") lines.push(`Daemon: ${entry.reason}`);
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
 * `homed service install`: the env file (when there is none), the checkout's bundle (built when missing or stale;
 * the sources when that fails) and the unit; resolves to what to print.
 */
async function install(loaded: LoadedConfig, layout: Layout, unitPath: string): Promise<string> {
  const envFile = envFileOf(loaded);
  let envNote: string;
  try {
    await Deno.stat(envFile);
    envNote = `kept ${envFile} as it is`;
  } catch {
    const { text, names } = envFileText(loaded);
    await Deno.writeTextFile(envFile, text, { mode: 0o600 });
    await Deno.chmod(envFile, 0o600);
    envNote = `wrote ${envFile} (mode 0600) with ${names.length ? names.join(", ") : "no variables yet"}`;
  }
  // Progress as it goes: a build takes seconds (≈ 3 on a laptop, tens on a Raspberry Pi).
  const entry = await preparedEntry(sourceCheckout(), { build: true, say: (line) => console.error(line) });
  // After the env file: the unit's flags name it (--env-file) as `homed flags` does.
  await Deno.writeTextFile(unitPath, await unitFor(loaded, layout, entry), { mode: 0o644 });
  const program = Deno.execPath();
  const devices = deviceGrants(loaded.config, systemGroup());
  const runners = runnerServers(loaded);
  return [
    `Wrote ${unitPath}; ${envNote}.`,
    ...(entry.kind === "self" ? [] : [`The unit: ${entry.reason}.`]),
    ...(devices.allow.length
      ? [
        `Devices it may open: ${devices.allow.map((entry) => entry.replace(/ rw$/, "")).join(", ")}${
          devices.groups.length ? ` (groups ${devices.groups.join(", ")})` : ""
        }; no other device.`,
      ]
      : []),
    ...(runners.length
      ? [
        `MCP servers ${runners.join(", ")} (a package runner) get HOME=/var/cache/${RUNNER_CACHE} for their ` +
        "cache; the home folders stay read-only.",
      ]
      : []),
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

/**
 * `homed service [install|uninstall|status|unit] [--unit-dir DIR] [--force]` (default `status`): every action but
 * `unit` first checks homed's rights for it, `--unit-dir` included (its flags: `homed flags --mode service --unit-dir
 * DIR`); `uninstall` refuses while homed is enabled or running unless `--force`.
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
    const rights = requiredPermissions(loaded, "service", { unitDir });
    if (unitDir !== UNIT_DIR) unitDirRights(line, unitDir, missingPermissions(rights));
    checkRights(loaded, "service", denied, rights);
  }
  await reportFailure("service: ", async () => {
    print(`${await serviceAction(action || "status", { loaded, layout, unitDir, force: options.force ?? false })}\n`);
  });
}

/**
 * `--unit-dir DIR` needs flags that name DIR, which `deno task service` (computed for /etc/systemd/system) cannot
 * give: when they are missing, ends homed, refused, with the one command that has them.
 */
function unitDirRights(line: CommandLine, unitDir: string, missing: string[]): void {
  const lacking = missing.filter((right) => right.endsWith(` ${unitDir}`));
  if (!lacking.length) return;
  const main = fileURLToPath(Deno.mainModule);
  const config = line.options.config === undefined ? "" : ` --config ${line.options.config}`;
  const layout = line.layout === "standard" ? " --standard-layout" : "";
  const flags = `${DENO_COMMAND} run --no-prompt --allow-read --allow-env ${main}${layout} flags --mode service ` +
    `--unit-dir ${unitDir}${config}`;
  fail(
    `homed lacks rights for --unit-dir: ${lacking.join("; ")}. The flags of deno task service name ` +
      `${UNIT_DIR}; run it with flags that name ${unitDir}:\n  ${DENO_COMMAND} run $(${flags}) ${main}${layout} ` +
      `service ${line.action || "status"} --unit-dir ${unitDir}${config}`,
    EXIT_REFUSED,
  );
}
