/**
 * The narrowest Deno permissions a config needs, as flags and as a start-up check.
 *
 * The daemon never gets `-A` or `--allow-ffi`, and `--allow-run` only for exactly the programs the configuration
 * names (the device kinds' programs, exec tools with `plugins.allow_exec`, stdio MCP servers). `homed flags`, `src/flags.ts` (spliced into
 * `deno task start`) and the start-up check all derive from {@link requiredPermissions}, so they cannot disagree.
 *
 * @module
 */

import { dirname, join, resolve } from "node:path";
import { envFilePath } from "../config/env_file.ts";
import { DEFAULT_ENV_NAMES, type LoadedConfig, safeEnvReader } from "../config/load.ts";
import { notifyClientPath, notifySocket } from "../service/sd_notify.ts";
import { bindHost, connectHost } from "../config/listen_addr.ts";
import { silkWasmPath } from "../audio/silk_wasm_path.ts";
import { kindRights, type NeededRights } from "../devices/kinds.ts";
import { luaWasmPath } from "../lua/wasm_path.ts";
import { hostPort } from "../net/host_port.ts";
import { runsOnDeno } from "../config/runs_on_deno.ts";
import type { Config } from "../config/schema.ts";
import { mcpImportPath, type McpServerConfig, mcpServers } from "../config/mcp_servers.ts";
import { llmProviders } from "../config/llm_providers.ts";
import { nameServerRights, readResolvConf, RESOLV_CONF } from "../config/name_servers.ts";
import { isInside } from "../fs/contained.ts";
import { FREE_SPACE_RIGHT } from "../fs/free_space.ts";
import { entryReadRights, sourceCheckout } from "./daemon_entry.ts";

/** The rights one homed command needs. */
export interface PermissionSet {
  read: string[];
  write: string[];
  net: string[];
  env: string[];
  /** Programs homed may start: only plugins' exec tools, when `plugins.allow_exec` is on. */
  run?: string[];
  /**
   * System information homed may ask for: only `statfs`, the data dir's free space (issue 38.6, `fs/free_space.ts`).
   * Not checked at start: without it the free space shows as unknown, and doctor says so.
   */
  sys?: string[];
}

/** Variables that libraries read on their own: npm:yaml checks LOG_TOKENS and LOG_STREAM on every parse. */
export const LIBRARY_ENV_NAMES = ["LOG_TOKENS", "LOG_STREAM"] as const;

/** Which command the rights are for. */
export type PermissionMode =
  | "run"
  | "chat"
  | "doctor"
  | "init"
  | "supervise"
  | "service"
  | "backup"
  | "restore"
  | "tracker"
  | "mcp"
  | "weixin";

/** The modes, for argument checks. */
export const PERMISSION_MODES: readonly PermissionMode[] = [
  "run",
  "chat",
  "doctor",
  "init",
  "supervise",
  "service",
  "backup",
  "restore",
  "tracker",
  "mcp",
  "weixin",
];

/**
 * Whether homed fetches media from the hosts of `media.*`: a configured kind receives pictures or voice by URL (QQ)
 * and something sees or hears what comes.
 */
function fetchesMedia(config: Config, kinds: NeededRights): boolean {
  return kinds.fetchesMedia !== undefined && (config.vision !== null || config.speech.stt !== null);
}

/**
 * Whether homed resolves host names to check media URLs: a host it may fetch from is a name (QQ's own, `*.qpic.cn`,
 * or one in `media.allow_hosts`), not an IP address. Then it needs the system's name servers (`name_servers.ts`) and to read
 * `/etc/resolv.conf` for them — the daemon checks its rights at start, the supervisor and `homed service install`
 * compute the daemon's flags.
 */
function resolvesMediaNames(config: Config, kinds: NeededRights): boolean {
  const isName = (host: string) => !/^\[|^[\d.]+(:\d+)?$/.test(host);
  return config.media.allow_hosts.some(isName) ||
    (fetchesMedia(config, kinds) && config.media.fetch_hosts.some(isName));
}

/**
 * The hosts seeing and hearing reach: the vision, speech-to-text and text-to-speech servers, `media.allow_hosts`
 * (`output_send` fetches a URL from them), and — when a kind receives media by URL — the hosts it is fetched from
 * (`media.fetch_hosts`; `*.` entries as Deno's wildcards; the kind's own, any port), and the name servers that resolve
 * them: `Deno.resolveDns` needs `ip:53` of each one `resolvConf` lists.
 */
function mediaHosts(config: Config, kinds: NeededRights, resolvConf: () => string): string[] {
  const models = [config.vision?.base_url, config.speech.stt?.base_url, config.speech.tts?.base_url];
  const fetches = fetchesMedia(config, kinds);
  return [
    ...models.filter((url): url is string => url !== undefined).map(hostPort),
    ...(fetches ? config.media.fetch_hosts : []),
    // `output_send` fetches a picture by URL from media.allow_hosts whatever the chats (Telegram's too): always.
    ...config.media.allow_hosts,
    ...(fetches ? kinds.fetchesMedia!.hosts : []),
    ...(resolvesMediaNames(config, kinds) ? nameServerRights(resolvConf()) : []),
  ];
}

/**
 * Computes the rights a command needs under `loaded`.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * const rights = requiredPermissions(loaded, "run");
 * rights.net; // ["127.0.0.1:8080", "api.deepseek.com:443"] with the default listen address and LLM
 * ```
 */
export function requiredPermissions(
  loaded: LoadedConfig,
  mode: PermissionMode,
  options: { unitDir?: string; file?: string; notifySocket?: string; resolvConf?: string; bundleDir?: string } = {},
): PermissionSet {
  const { config } = loaded;
  // The system resolver's configuration, read only when a command's rights include the name servers it lists.
  const resolvConf = () => options.resolvConf ?? readResolvConf();
  // What the configured device kinds need (their servers, programs, media hosts).
  const kinds = kindRights(config);
  const resolverFile = resolvesMediaNames(config, kinds) ? [RESOLV_CONF] : [];
  const env = unique(["HOMED_CONFIG", ...DEFAULT_ENV_NAMES, ...LIBRARY_ENV_NAMES, "NOTIFY_SOCKET", ...loaded.envNames]);
  // Under a Type=notify unit (directly or through the supervisor): the daemon's unix datagram to systemd.
  // `notifySocket`: the socket a service manager will give (the systemd unit), else NOTIFY_SOCKET as set now.
  const notify = options.notifySocket ?? notifySocket(safeEnvReader(new Set()));
  const notifyNet = notify ? [`unix:${notify}`, `unix:${notifyClientPath(config.daemon.data_dir)}`] : [];
  const configFile = loaded.location.path ? [loaded.location.path] : [];
  const listen = config.daemon.listen_addr;
  // The checkout homed runs from (the supervisor and the unit choose between its bundle and its sources), if any.
  const checkout = mode === "supervise" || mode === "service" ? sourceCheckout() : undefined;
  // `homed mcp serve` is a client of the daemon like `homed chat`: the config and the daemon's address.
  if (mode === "chat" || mode === "mcp") {
    return { read: configFile, write: [], net: [`${connectHost(listen)}:${listen.port}`], env };
  }
  if (mode === "init") return initPermissions(loaded.location.path ?? "", loaded.baseDir);
  if (mode === "service") {
    // Writing the unit and the env file beside the config; reading what the daemon's flags are computed from.
    const configDir = loaded.location.path ? dirname(loaded.location.path) : "/etc/homed";
    const unitDir = options.unitDir ?? "/etc/systemd/system";
    return {
      // resolv.conf: the unit's flags name the system's name servers.
      read: unique([
        ...configFile,
        config.paths.plugins,
        ...config.plugins.extra_dirs,
        unitDir,
        configDir,
        ...resolverFile,
        // Which of the groups the configured devices need (dialout, gpio, audio, video) this machine has.
        "/etc/group",
        // From a checkout: whether its bundle is fresh (its sources' fingerprint, dist/homed.js.json).
        ...entryReadRights(checkout),
      ]),
      write: unique([unitDir, configDir]),
      // uninstall asks the listen address whether homed still runs (it is stopped and disabled before removal).
      net: listen.port === 0 ? [] : [`${connectHost(listen)}:${listen.port}`],
      env: unique([...env, "PATH"]),
      // install builds a missing or stale bundle: this Deno on scripts/build.ts, with that build's own rights.
      ...(checkout === undefined ? {} : { run: [Deno.execPath()] }),
    };
  }
  if (mode === "backup" || mode === "restore") {
    // Backup reads every part and writes its staging folder and default archives in the data dir (plus the folder of
    // an archive named with --file); restore also writes every part back and asks the listen address whether homed
    // still runs there. Without --file (`deno task backup|restore FILE`, whose flags are computed before the archive
    // is known): the right to run this Deno, to run the command again with the rights for the archive it is given.
    const parts = [config.daemon.data_dir, config.paths.knowledge, config.paths.plugins];
    const file = options.file && options.file !== "-" ? resolve(options.file) : undefined;
    const own = unique([...configFile, config.paths.personal, ...parts]);
    const again = options.file === undefined && runsOnDeno() ? { run: [Deno.execPath()] } : {};
    return mode === "backup"
      ? {
        read: unique([...own, ...(file ? [dirname(file)] : [])]),
        write: unique([config.daemon.data_dir, ...(file ? [dirname(file)] : [])]),
        net: [],
        env,
        ...again,
      }
      : {
        // backup.dir: `homed restore --latest` reads the list of automatic backups there.
        read: unique([...own, ...(file ? [file] : []), ...beyond(own, [config.backup.dir])]),
        write: own,
        net: [`${connectHost(listen)}:${listen.port}`],
        env,
        ...again,
      };
  }
  if (mode === "supervise") {
    // The supervisor reads the config and the plugin folders (to compute the daemon's flags), writes its pid file in
    // the data dir, and may start one program: the Deno (or homed binary) it runs on. Nothing else.
    return {
      // The env file: to pass it on to the daemon (--env-file) when it exists; resolv.conf: for the name servers.
      read: unique([
        ...configFile,
        envFilePath(loaded.location.path),
        config.paths.plugins,
        ...config.plugins.extra_dirs,
        ...resolverFile,
        // From a checkout: whether its bundle is fresh; the build itself is a process with rights of its own.
        ...entryReadRights(checkout),
      ]),
      write: [config.daemon.data_dir],
      net: [],
      env: unique([...env, "PATH"]),
      run: [Deno.execPath()],
    };
  }
  const dirs = [config.paths.knowledge, config.paths.plugins, config.daemon.data_dir];
  // The overlay's layers, for the tracker (GET /api/tracker/changes, homed tracker) to read what changed.
  const overlay = config.tracker.overlay ? [config.tracker.overlay.upper, ...config.tracker.overlay.lower] : [];
  if (mode === "tracker") {
    const parts = unique([...configFile, config.paths.personal, ...dirs]);
    return { read: unique([...parts, ...overlay]), write: parts, net: [], env };
  }
  if (mode === "weixin") {
    // `homed weixin login`: WeChat's QR login at weixin.base_url (and, for Tencent's service, the hosts of its domain a
    // login may be moved to), the credentials kept in the data dir's weixin/ folder, and a running homed asked to
    // re-check (the listen address). Without a weixin: section it only reads the config to say what to add.
    const weixin = config.weixin;
    const stateDir = join(config.daemon.data_dir, "weixin");
    const tencent = weixin && /(^|\.)weixin\.qq\.com$/.test(new URL(weixin.base_url).hostname)
      ? ["*.weixin.qq.com"]
      : [];
    return {
      read: unique([...configFile, ...(weixin ? [stateDir] : [])]),
      write: weixin ? [stateDir] : [],
      net: weixin
        ? unique([
          hostPort(weixin.base_url),
          ...tencent,
          ...(listen.port === 0 ? [] : [`${connectHost(listen)}:${listen.port}`]),
        ])
        : [],
      env,
    };
  }
  return daemonRights(loaded, mode, {
    kinds,
    env,
    notify,
    notifyNet,
    configFile,
    resolverFile,
    dirs,
    overlay,
    resolvConf,
    bundleDir: options.bundleDir,
  });
}

/** What {@link requiredPermissions} has worked out for every mode, handed on to {@link daemonRights}. */
interface Common {
  kinds: NeededRights;
  env: string[];
  notify: string | undefined;
  notifyNet: string[];
  configFile: string[];
  resolverFile: string[];
  dirs: string[];
  overlay: string[];
  resolvConf: () => string;
  /** The bundle's folder when the daemon runs `dist/homed.js`: its copies of the `.wasm` files are the ones read. */
  bundleDir: string | undefined;
}

/** The `paths` not already inside (or equal to) one of `granted`: a right to a folder covers what is in it. */
function beyond(granted: readonly string[], paths: readonly string[]): string[] {
  return paths.filter((path) => !granted.some((root) => resolve(root) === resolve(path) || isInside(root, path)));
}

/** The daemon's rights (and doctor's, which checks them): everything a running homed reads, writes, dials and runs. */
function daemonRights(loaded: LoadedConfig, mode: "run" | "doctor", common: Common): PermissionSet {
  const { config } = loaded;
  const { kinds, env, notify, notifyNet, configFile, resolverFile, dirs, overlay, resolvConf, bundleDir } = common;
  const listen = config.daemon.listen_addr;
  const listenHost = bindHost(listen);
  // The Lua VM's wasm (adapters and plugins' Lua tools) — that one file, not the npm cache around it — and the adapter.
  // Every provider tried (the primary and llm.fallbacks): its server, and a lua one's adapter script.
  const llms = llmProviders(config);
  const adapters = llms.filter((llm) => llm.provider === "lua" && !llm.adapter.startsWith("builtin:"));
  // A compiled homed reads its embedded npm packages (wasmoon's glue.wasm among them) without a read right.
  // The bundle reads the copies beside it (`deno task bundle` puts them there), as its own `homed flags` says.
  const wasm = (name: string, path: () => string) => bundleDir === undefined ? path() : join(bundleDir, name);
  const lua = [...adapters.map((llm) => llm.adapter), ...(runsOnDeno() ? [wasm("glue.wasm", luaWasmPath)] : [])];
  // QQ voice (SILK) is decoded for speech-to-text and encoded for spoken replies; the codec reads its .wasm.
  const speaks = config.speech.stt !== null || config.speech.tts !== null;
  const servers = mcpServersFor(loaded, mode);
  const silk = speaks && runsOnDeno() ? [wasm("silk.wasm", silkWasmPath)] : [];
  // Automatic backups (backup.schedule) write their archives and list to backup.dir, ideally another disk.
  const backups = config.backup.schedule === "" ? [] : beyond(dirs, [config.backup.dir]);
  return {
    // doctor also looks at homed.env's mode (a key file others can read is a finding).
    read: unique([
      ...configFile,
      config.paths.personal,
      // The household's sentence templates (read at start; a missing folder is fine).
      config.paths.intents,
      ...dirs,
      ...lua,
      ...silk,
      ...overlay,
      ...backups,
      ...(mode === "doctor" ? [envFilePath(loaded.location.path)] : []),
      ...(servers.length && config.mcp.import !== "" ? [mcpImportPath(config, loaded.location.path)] : []),
      // The start-up check computes these rights again, name servers included.
      ...resolverFile,
    ]),
    // Sending to the notify socket needs write access to it as well as the unix: net right.
    write: unique([...dirs, ...backups, ...(mode === "run" && notify ? [notify] : [])]),
    net: unique([
      listen.port === 0 ? listenHost : `${listenHost.includes(":") ? `[${listenHost}]` : listenHost}:${listen.port}`,
      ...llms.map((llm) => hostPort(llm.base_url)),
      ...kinds.net,
      ...mediaHosts(config, kinds, resolvConf),
      ...servers.flatMap((server) => server.url ? [hostPort(server.url)] : []),
      ...(mode === "run" ? notifyNet : []),
      // doctor asks whatever holds the listen address whether it is homed (GET /healthz).
      ...(mode === "doctor" && listen.port !== 0 ? [`${connectHost(listen)}:${listen.port}`] : []),
    ]),
    // A stdio MCP server gets PATH and HOME of homed's environment, and nothing else of it.
    env: servers.some((server) => server.command) ? unique([...env, "PATH", "HOME"]) : env,
    ...runRights(config, kinds, mode, servers),
    // The data dir's free space (the low-disk warning, doctor's line): one statfs call, no program run.
    sys: [FREE_SPACE_RIGHT],
  };
}

/**
 * The programs homed may run: exec tools' allowlist (with `plugins.allow_exec`), what the configured device kinds
 * run (libgpiod's tools, the microphone's, speaker's and camera's commands, `stty` and `dd` for a serial port) and
 * stdio MCP servers. Only for the daemon and `doctor` (which checks them); none when nothing needs one, so no
 * `--allow-run` at all.
 */
function runRights(
  config: Config,
  kinds: NeededRights,
  mode: PermissionMode,
  servers: readonly McpServerConfig[],
): { run?: string[] } {
  if (mode !== "run" && mode !== "doctor") return {};
  const { plugins } = config;
  const run = unique([
    ...(mode === "run" && plugins.allow_exec ? plugins.exec_allowlist : []),
    ...kinds.run,
    ...servers.flatMap((server) => server.command ? [server.command] : []),
  ]);
  return run.length ? { run } : {};
}

/** The enabled MCP servers (with `mcp.import`'s), for the daemon and doctor; none for other commands. */
function mcpServersFor(loaded: LoadedConfig, mode: PermissionMode): McpServerConfig[] {
  if (mode !== "run" && mode !== "doctor") return [];
  return mcpServers(loaded.config, loaded.location.path).filter((server) => server.enabled);
}

/**
 * What `homed init` needs to write `configPath` (creating its folder) and the persona in `home`: nothing else.
 *
 * @example
 * ```ts
 * initPermissions("/etc/homed/homed.yaml", "/srv/homed");
 * // { read: ["/etc/homed", "/srv/homed/personal.md"], write: ["/etc/homed", "/srv/homed/personal.md"], … }
 * ```
 */
export function initPermissions(configPath: string, home: string): PermissionSet {
  const places = unique([dirname(configPath), join(home, "personal.md")]);
  // run: the Deno (or homed binary) this is, to run doctor on the new config with doctor's own rights.
  // env: npm:yaml reads LOG_TOKENS and LOG_STREAM when it parses the starter config to fill in the answers.
  return { read: places, write: places, net: [], env: ["HOMED_CONFIG", ...LIBRARY_ENV_NAMES], run: [Deno.execPath()] };
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

/**
 * Turns rights into `deno run` flags. `--no-prompt` keeps an interactive terminal from asking for more.
 *
 * @example
 * ```ts
 * toFlags({ read: ["/etc/homed"], write: [], net: ["127.0.0.1:8080"], env: ["HOMED_CONFIG"] });
 * // ["--no-prompt", "--allow-read=/etc/homed", "--allow-net=127.0.0.1:8080", "--allow-env=HOMED_CONFIG"]
 * ```
 */
export function toFlags(rights: PermissionSet): string[] {
  const flags = ["--no-prompt"];
  for (const name of ["read", "write", "net", "env", "run", "sys"] as const) {
    const list = rights[name] ?? [];
    if (list.length) flags.push(`--allow-${name}=${list.join(",")}`);
  }
  return flags;
}

/**
 * Lists the rights this process lacks, one readable line each, naming the path, host or variable.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const loaded = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * missingPermissions(requiredPermissions(loaded, "run")); // [] when started with `homed flags`
 * ```
 */
export function missingPermissions(rights: PermissionSet): string[] {
  const missing: string[] = [];
  const check = (descriptor: Deno.PermissionDescriptor, line: string) => {
    if (Deno.permissions.querySync(descriptor).state !== "granted") missing.push(line);
  };
  for (const path of rights.read) check({ name: "read", path }, `read access to ${path}`);
  for (const path of rights.write) check({ name: "write", path }, `write access to ${path}`);
  // A "*.qpic.cn" right is asked about as one of its subdomains: Deno queries hosts, not patterns.
  for (const host of rights.net) {
    check({ name: "net", host: host.replace(/^\*\./, "any.") }, `net access to ${host}`);
  }
  for (const variable of rights.env) check({ name: "env", variable }, `env access to ${variable}`);
  for (const command of rights.run ?? []) check({ name: "run", command }, `run access to ${command}`);
  return missing;
}

/** Paths with white space cannot pass through the `$(…)` splice of `deno task start`. */
export function unsplittablePaths(rights: PermissionSet): string[] {
  return [...rights.read, ...rights.write].filter((path) => /\s|,/.test(path));
}
