/**
 * homed as an MCP client: every enabled server of `mcp.servers` (and `mcp.import`) connected in the background, its
 * tools registered as `mcp__<server>__<tool>` under the owner `mcp:<server>` as they come and go, and its state in
 * `/api/status`. `start()` returns at once — homed listens before any server has answered, and a server's tools appear
 * when it is ready; `stop()` closes every session (killing stdio children) under one deadline.
 *
 * Also {@link probeServer}, for `homed doctor`: one server started, its tools listed, stopped.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, deadline } from "../clock.ts";
import type { McpServerConfig } from "../config/mcp_servers.ts";
import type { Service } from "../service/service.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { Tool } from "../tools/tool.ts";
import {
  type McpConnectionStatus,
  type McpConnectionTimings,
  McpServerConnection,
  type McpServerState,
} from "./mcp_server_connection.ts";
import { labelOf, type McpBaseEnv, type McpTransportKind, openSession } from "./mcp_session.ts";
import { type DescribeImage, mcpTools } from "./mcp_tools.ts";
import { McpRestartRefused } from "./restart_refused.ts";

export { McpRestartRefused };

/** Options of {@link McpService}. */
export interface McpServiceOptions {
  servers: readonly McpServerConfig[];
  tools: ToolRegistry;
  clock: Clock;
  logger: Logger;
  /** In [0, 1): jitter for the reconnect backoff. */
  random?: () => number;
  /** `PATH` and `HOME` for stdio servers (the only variables of homed's they see besides their own `env`). */
  baseEnv: McpBaseEnv;
  /** `agent.tool_timeout`: a call's deadline unless the server sets `timeout`. */
  defaultTimeoutMs: number;
  /** homed's vision, when it has one: describes images tools return. */
  describeImage?: DescribeImage;
  /** For `initialize` and the first `tools/list` of each start (30 s). */
  spawnTimeoutMs?: number;
  /** Largest tool result kept, in characters (256 Ki). */
  maxResultChars?: number;
  /** Largest message read from a server, in bytes (16 MiB). */
  maxMessageBytes?: number;
  /** Backoff and pause times; tests shorten them. */
  timings?: Partial<McpConnectionTimings>;
  /** How long `stop()` waits for all servers together (10 s). */
  stopTimeoutMs?: number;
  /** How long a stdio child gets to exit at each step of stopping it (1 s). */
  closeGraceMs?: number;
}

/** One server in `/api/status`. */
export interface McpServerStatus {
  transport: McpTransportKind;
  state: McpServerState;
  /** homed's name and the server's of each tool offered now. */
  tools: { name: string; mcp_name: string }[];
  calls: number;
  failures: number;
  restarts: number;
  failed_starts: number;
  last_error: string | null;
  next_attempt_at: string | null;
  source: string;
}

/** One configured server as {@link McpService.servers} lists it (for `GET /api/mcp`). */
export interface McpServerListing {
  name: string;
  /** Where it is; `disabled` when configured with `enabled: false`, `stopped` before the service starts. */
  state: McpServerState | "disabled";
  transport: McpTransportKind;
  /** homed's name and the server's of each tool offered now (none unless `ready`). */
  tools: { name: string; mcp_name: string }[];
  /** New sessions opened after the first attempt, restarts on request included. */
  restarts: number;
  last_error: string | null;
}

interface Entry {
  connection: McpServerConnection;
  names: { name: string; mcp_name: string }[];
  /** Counters of the connections a restart replaced. */
  carried: { calls: number; failures: number; restarts: number };
  /** The restart in progress, so two at once run one after the other. */
  restarting: Promise<unknown>;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The MCP client service (`mcp`). */
export class McpService implements Service {
  readonly name = "mcp";
  #options: McpServiceOptions;
  #entries = new Map<string, Entry>();
  #started = false;
  #stopping = false;

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../clock.ts";
   * import type { McpServerConfig } from "../config/mcp_servers.ts";
   * import { ToolRegistry } from "../tools/registry.ts";
   *
   * declare const servers: McpServerConfig[];
   * const tools = new ToolRegistry({ defaultTimeoutMs: 30_000 });
   * const mcp = new McpService({
   *   servers,
   *   tools,
   *   clock: systemClock,
   *   logger: getLogger(["homed", "mcp"]),
   *   baseEnv: { PATH: Deno.env.get("PATH"), HOME: Deno.env.get("HOME") },
   *   defaultTimeoutMs: 30_000,
   * });
   * await mcp.start(); // returns at once; tools appear as servers become ready
   * await mcp.stop();
   * ```
   */
  constructor(options: McpServiceOptions) {
    this.#options = options;
  }

  /** Starts connecting every enabled server in the background; returns at once. */
  start(): Promise<void> {
    if (this.#started) return Promise.resolve();
    this.#started = true;
    const { logger } = this.#options;
    for (const server of this.#options.servers) {
      if (!server.enabled) {
        logger.info("{label} is disabled (enabled: false); not started", { label: labelOf(server) });
        continue;
      }
      const entry: Entry = {
        connection: undefined as unknown as McpServerConnection,
        names: [],
        carried: { calls: 0, failures: 0, restarts: 0 },
        restarting: Promise.resolve(),
      };
      this.#entries.set(server.name, entry);
      this.#connect(server, entry);
    }
    return Promise.resolve();
  }

  /** A new connection to `server` as the entry's, started. */
  #connect(server: McpServerConfig, entry: Entry): void {
    const connection: McpServerConnection = new McpServerConnection({
      server,
      clock: this.#options.clock,
      logger: this.#options.logger,
      baseEnv: this.#options.baseEnv,
      ...(this.#options.random ? { random: this.#options.random } : {}),
      ...(this.#options.maxMessageBytes !== undefined ? { maxMessageBytes: this.#options.maxMessageBytes } : {}),
      ...(this.#options.closeGraceMs !== undefined ? { closeGraceMs: this.#options.closeGraceMs } : {}),
      timings: {
        ...this.#options.timings,
        ...(this.#options.spawnTimeoutMs !== undefined ? { initializeTimeoutMs: this.#options.spawnTimeoutMs } : {}),
      },
      // A connection a restart replaced has no say over the tools any more.
      onTools: (listed) => {
        if (entry.connection === connection) this.#register(entry, listed);
      },
    });
    entry.connection = connection;
    connection.start();
  }

  /**
   * Stops server `name`'s connection (its session closed, a stdio child killed, its tools withdrawn) and starts a
   * fresh one, as a person asked for: backoff and pause are forgotten. Resolves, once the new connection is started,
   * to its state (`connecting`; the tools come back when it is `ready`). Throws {@link McpRestartRefused} for a name
   * not configured (naming the configured ones), a disabled server, or when the service is not running.
   *
   * @example
   * ```ts
   * declare const mcp: McpService;
   * await mcp.restart("everything"); // "connecting"
   * ```
   */
  restart(name: string): Promise<McpServerState> {
    const known = this.#options.servers.map((server) => server.name);
    const entry = this.#entries.get(name);
    if (!entry) {
      const server = this.#options.servers.find((candidate) => candidate.name === name);
      if (!server) {
        const listed = known.length ? `configured: ${known.join(", ")}` : "none is configured (mcp.servers)";
        return Promise.reject(
          new McpRestartRefused("unknown", `No MCP server ${JSON.stringify(name)}; ${listed}`, known),
        );
      }
      return Promise.reject(
        server.enabled
          ? new McpRestartRefused(
            "not_running",
            `${labelOf(server)} is not running: the mcp service is not started`,
            known,
          )
          : new McpRestartRefused(
            "disabled",
            `${labelOf(server)} is disabled (enabled: false); homed does not start it`,
            known,
          ),
      );
    }
    const work = async (): Promise<McpServerState> => {
      const server = entry.connection.server;
      if (this.#stopping) {
        throw new McpRestartRefused("not_running", `${labelOf(server)} is not restarted: homed is stopping`, known);
      }
      const old = entry.connection;
      await old.stop();
      const was = old.status();
      entry.carried = {
        calls: entry.carried.calls + was.calls,
        failures: entry.carried.failures + was.failures,
        restarts: entry.carried.restarts + was.restarts + 1,
      };
      this.#options.tools.replaceOwner(`mcp:${name}`, []);
      entry.names = [];
      if (this.#stopping) return "stopped";
      this.#connect(server, entry);
      this.#options.logger.info("{label} restarted on request", { label: labelOf(server) });
      return entry.connection.state;
    };
    const result = entry.restarting.then(work, work);
    entry.restarting = result.catch(() => {});
    return result;
  }

  #register(entry: Entry, listed: Parameters<typeof mcpTools>[0]["listed"]): void {
    const { connection } = entry;
    const server = connection.server;
    const timeoutMs = server.timeout ?? this.#options.defaultTimeoutMs;
    const set = mcpTools({
      server,
      listed,
      call: (name, args, context) => connection.call(name, args, { signal: context.signal, timeoutMs }),
      ...(this.#options.describeImage ? { describeImage: this.#options.describeImage } : {}),
      ...(this.#options.maxResultChars !== undefined ? { maxResultChars: this.#options.maxResultChars } : {}),
    });
    const owner = `mcp:${server.name}` as const;
    try {
      this.#options.tools.replaceOwner(owner, set.tools);
      entry.names = set.names;
    } catch (error) {
      // One bad tool (a name another owner took) must not cost the server's others: register them one by one.
      const kept: Tool[] = [];
      const names: Entry["names"] = [];
      for (const [index, tool] of set.tools.entries()) {
        try {
          this.#options.tools.replaceOwner(owner, [...kept, tool]);
          kept.push(tool);
          names.push(set.names[index]!);
        } catch (single) {
          this.#options.logger.warning("{label}: tool {tool} is not offered: {error}", {
            label: labelOf(server),
            tool: tool.name,
            error: messageOf(single),
          });
        }
      }
      this.#options.tools.replaceOwner(owner, kept);
      entry.names = names;
      this.#options.logger.debug("{label}: {error}", { label: labelOf(server), error: messageOf(error) });
    }
  }

  /** Closes every session (children killed) and withdraws the tools, within `stopTimeoutMs` (10 s) in all. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const limit = deadline(this.#options.clock, this.#options.stopTimeoutMs ?? 10_000);
    try {
      const raced = await limit.race(Promise.all([...this.#entries.values()].map((e) => e.connection.stop())));
      if (raced.late) {
        this.#options.logger.warning("MCP servers did not all stop within the deadline; homed goes on stopping");
      }
    } finally {
      limit.cancel();
      for (const [name] of this.#entries) this.#options.tools.replaceOwner(`mcp:${name}`, []);
    }
  }

  /** Per server: transport, state, tools (homed's and the server's names), counters, last error, next attempt. */
  status(): Record<string, unknown> {
    const servers: Record<string, McpServerStatus> = {};
    for (const [name, entry] of this.#entries) {
      const status: McpConnectionStatus = entry.connection.status();
      servers[name] = {
        transport: status.transport,
        state: status.state,
        tools: status.state === "ready" ? entry.names.map((names) => ({ ...names })) : [],
        calls: status.calls + entry.carried.calls,
        failures: status.failures + entry.carried.failures,
        restarts: status.restarts + entry.carried.restarts,
        failed_starts: status.failed_starts,
        last_error: status.last_error,
        next_attempt_at: status.next_attempt_at,
        source: status.source,
      };
    }
    const disabled = this.#options.servers.filter((server) => !server.enabled).map((server) => server.name);
    return { servers, disabled };
  }

  /**
   * Every configured server, in the order of the configuration: disabled ones and those not started yet included.
   *
   * @example
   * ```ts
   * declare const mcp: McpService;
   * mcp.servers();
   * // [{ name: "everything", state: "ready", transport: "stdio",
   * //    tools: [{ name: "mcp__everything__echo", mcp_name: "echo" }, …], restarts: 0, last_error: null }]
   * ```
   */
  servers(): McpServerListing[] {
    return this.#options.servers.map((server) => {
      const entry = this.#entries.get(server.name);
      if (!entry) {
        return {
          name: server.name,
          state: server.enabled ? "stopped" : "disabled",
          transport: server.command !== undefined ? "stdio" : "http",
          tools: [],
          restarts: 0,
          last_error: null,
        };
      }
      const status = entry.connection.status();
      return {
        name: server.name,
        state: status.state,
        transport: status.transport,
        tools: status.state === "ready" ? entry.names.map((names) => ({ ...names })) : [],
        restarts: status.restarts + entry.carried.restarts,
        last_error: status.last_error,
      };
    });
  }

  /** The connection of server `name` (tests and `/api/status` details). */
  connection(name: string): McpServerConnection | undefined {
    return this.#entries.get(name)?.connection;
  }
}

/** Options of {@link probeServer}. */
export interface ProbeOptions {
  clock: Clock;
  logger: Logger;
  baseEnv: McpBaseEnv;
  /** For the start, `initialize` and `tools/list` together (15 s). */
  timeoutMs?: number;
}

/**
 * Starts `server` once, lists its tools and stops it, for `homed doctor`: `ok` with the tool count and names, or the
 * first error. Never throws; takes at most `timeoutMs` plus the few seconds a stdio child gets to exit.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { systemClock } from "../clock.ts";
 * import type { McpServerConfig } from "../config/mcp_servers.ts";
 *
 * declare const server: McpServerConfig;
 * const probe = await probeServer(server, {
 *   clock: systemClock,
 *   logger: getLogger(["homed", "doctor"]),
 *   baseEnv: { PATH: "/usr/bin:/bin", HOME: "/home/homed" },
 * });
 * probe; // { ok: true, detail: "stdio, 12 tools: echo, get-sum, …" }
 * ```
 */
export async function probeServer(
  server: McpServerConfig,
  options: ProbeOptions,
): Promise<{ ok: boolean; detail: string; offered?: number }> {
  try {
    const session = await openSession(server, options, { limitMs: options.timeoutMs ?? 15_000 });
    try {
      const names = session.tools.map((tool) => tool.name);
      const shown = names.slice(0, 10).join(", ") + (names.length > 10 ? `, … (${names.length - 10} more)` : "");
      // What homed would register of them: `include` and `exclude` applied.
      const offered = mcpTools({ server, listed: session.tools, call: () => Promise.reject() }).tools.length;
      const filtered = offered === names.length ? "" : ` (${offered} after include/exclude)`;
      return {
        ok: true,
        detail: `${session.kind}, ${names.length} tools${filtered}${names.length ? `: ${shown}` : ""}`,
        offered,
      };
    } finally {
      await session.close();
    }
  } catch (error) {
    return { ok: false, detail: messageOf(error) };
  }
}
