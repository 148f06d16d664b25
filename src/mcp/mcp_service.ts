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

interface Entry {
  connection: McpServerConnection;
  names: { name: string; mcp_name: string }[];
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
      const entry: Entry = { connection: undefined as unknown as McpServerConnection, names: [] };
      entry.connection = new McpServerConnection({
        server,
        clock: this.#options.clock,
        logger,
        baseEnv: this.#options.baseEnv,
        ...(this.#options.random ? { random: this.#options.random } : {}),
        ...(this.#options.maxMessageBytes !== undefined ? { maxMessageBytes: this.#options.maxMessageBytes } : {}),
        ...(this.#options.closeGraceMs !== undefined ? { closeGraceMs: this.#options.closeGraceMs } : {}),
        timings: {
          ...this.#options.timings,
          ...(this.#options.spawnTimeoutMs !== undefined ? { initializeTimeoutMs: this.#options.spawnTimeoutMs } : {}),
        },
        onTools: (listed) => this.#register(entry, listed),
      });
      this.#entries.set(server.name, entry);
      entry.connection.start();
    }
    return Promise.resolve();
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
        calls: status.calls,
        failures: status.failures,
        restarts: status.restarts,
        failed_starts: status.failed_starts,
        last_error: status.last_error,
        next_attempt_at: status.next_attempt_at,
        source: status.source,
      };
    }
    const disabled = this.#options.servers.filter((server) => !server.enabled).map((server) => server.name);
    return { servers, disabled };
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
): Promise<{ ok: boolean; detail: string }> {
  try {
    const session = await openSession(server, options, { limitMs: options.timeoutMs ?? 15_000 });
    try {
      const names = session.tools.map((tool) => tool.name);
      const shown = names.slice(0, 10).join(", ") + (names.length > 10 ? `, … (${names.length - 10} more)` : "");
      return { ok: true, detail: `${session.kind}, ${names.length} tools${names.length ? `: ${shown}` : ""}` };
    } finally {
      await session.close();
    }
  } catch (error) {
    return { ok: false, detail: messageOf(error) };
  }
}
