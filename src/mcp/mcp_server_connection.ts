/**
 * One MCP server kept connected: a session is opened in the background, its tools handed over as they come and go
 * (`tools/list_changed` included), and when the session ends — the child exited, the HTTP session is gone — its tools
 * are withdrawn and a new session is opened with backoff (1 s doubling to 5 min, with jitter). A server that fails
 * `pauseAfter` starts in a row (a session shorter than `healthyMs` counts as one) is **paused**: said once in the
 * log, shown in the status, named in any call that still reaches it, and retried only every `pausedRetryMs`. Every
 * wait has a deadline, so a hung server costs its own tools, never a turn or the daemon.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/types"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { deadline, sleepWith } from "../clock.ts";
import { Backoff, exponentialBackoff } from "../service/backoff.ts";
import { LinkState } from "../service/link_state.ts";
import type { McpServerConfig } from "../config/mcp_servers.ts";
import {
  isSessionGone,
  labelOf,
  type McpCallResult,
  type McpContent,
  type McpListedTool,
  type McpSession,
  type McpSessionDeps,
  type McpTransportKind,
  openSession,
} from "./mcp_session.ts";

/** Where a server is in its life. */
export type McpServerState = "connecting" | "ready" | "reconnecting" | "paused" | "stopped";

/** The times a connection keeps; tests shorten them. */
export interface McpConnectionTimings {
  /** For the transport, `initialize` and the first `tools/list` together; 30 s. */
  initializeTimeoutMs: number;
  /** For a `tools/list` after `list_changed`; 30 s. */
  listTimeoutMs: number;
  /** The first wait before a new start; doubles up to `maxBackoffMs`. 1 s. */
  firstBackoffMs: number;
  /** 5 min. */
  maxBackoffMs: number;
  /** A session this long was healthy: the failures before it are forgotten. 1 min. */
  healthyMs: number;
  /** Failed starts in a row before the server is paused; 5. */
  pauseAfter: number;
  /** How often a paused server is tried again; 5 min. */
  pausedRetryMs: number;
}

/** The defaults of {@link McpConnectionTimings}. */
export const DEFAULT_TIMINGS: Readonly<McpConnectionTimings> = {
  initializeTimeoutMs: 30_000,
  listTimeoutMs: 30_000,
  firstBackoffMs: 1_000,
  maxBackoffMs: 300_000,
  healthyMs: 60_000,
  pauseAfter: 5,
  pausedRetryMs: 300_000,
};

/** Options of {@link McpServerConnection}. */
export interface McpServerConnectionOptions extends McpSessionDeps {
  server: McpServerConfig;
  /** In [0, 1): jitter for the backoff. */
  random?: () => number;
  timings?: Partial<McpConnectionTimings>;
  /** The server's tools now: its list when a session opens or the list changes, `[]` when the session ends. */
  onTools(tools: readonly McpListedTool[]): void;
}

/** What {@link McpServerConnection.status} shows (for `/api/status`). */
export interface McpConnectionStatus {
  transport: McpTransportKind;
  state: McpServerState;
  /** The server's names of the tools offered now. */
  tools: string[];
  /** Tool calls sent to it. */
  calls: number;
  /** Calls that failed: the tool's own error, a protocol error, a timeout, the server gone. */
  failures: number;
  /** New sessions opened after the first attempt. */
  restarts: number;
  /** Failed starts in a row (reset by a healthy session). */
  failed_starts: number;
  last_error: string | null;
  /** When the next start is due (ISO), while waiting for it. */
  next_attempt_at: string | null;
  /** Where the server is configured. */
  source: string;
  /** The stdio child's process id while it runs. */
  pid: number | null;
}

/** Options of {@link McpServerConnection.call}. */
export interface McpCallOptions {
  /** Aborts the call (its deadline passed, or its turn was cancelled): the server gets `notifications/cancelled`. */
  signal: AbortSignal;
  /** The call's deadline, as the registry applies it; the SDK's own is set a little later, as a backstop. */
  timeoutMs: number;
}

/** How much later than homed's deadline the SDK's own request timeout fires. */
const SDK_TIMEOUT_GRACE_MS = 1_000;

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // fetch says only "fetch failed"; the cause says why (refused, reset, no route).
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
  return cause && !message.includes(cause) ? `${message}: ${cause}` : message;
}

/** An SDK error's message without its `MCP error -32602: ` prefix. */
function bare(message: string): string {
  return message.replace(/^MCP error -?\d+: /, "");
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** One server, kept connected. Its state, last error and next attempt are {@link LinkState}'s. */
export class McpServerConnection extends LinkState<McpServerState> {
  readonly server: McpServerConfig;
  #options: McpServerConnectionOptions;
  #timings: McpConnectionTimings;
  #label: string;
  #stopping = new AbortController();
  #loop: Promise<void> | undefined;
  #session: McpSession | undefined;
  #kind: McpTransportKind;
  #tools: readonly McpListedTool[] = [];
  #calls = 0;
  #failures = 0;
  #restarts = 0;
  #failedStarts = 0;
  #paused = false;
  #relisting: Promise<void> | undefined;
  #relistAgain = false;

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../clock.ts";
   *
   * const connection = new McpServerConnection({
   *   server: {
   *     name: "everything",
   *     command: "node",
   *     args: ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
   *     env: {},
   *     cwd: "",
   *     headers: {},
   *     trust: "owner",
   *     include: [],
   *     exclude: [],
   *     enabled: true,
   *     source: "mcp.servers",
   *   },
   *   clock: systemClock,
   *   logger: getLogger(["homed", "mcp"]),
   *   baseEnv: { PATH: "/usr/bin:/bin", HOME: "/home/homed" },
   *   onTools: (tools) => console.log(tools.map((tool) => tool.name)),
   * });
   * connection.start();
   * await connection.stop();
   * ```
   */
  constructor(options: McpServerConnectionOptions) {
    super("connecting");
    this.server = options.server;
    this.#options = options;
    this.#timings = { ...DEFAULT_TIMINGS, ...options.timings };
    this.#label = labelOf(options.server);
    this.#kind = options.server.command !== undefined ? "stdio" : "http";
  }

  /** The stdio child's process id while a session runs (`null` otherwise). */
  get pid(): number | null {
    return this.#session?.pid ?? null;
  }

  /** Starts connecting in the background; returns at once and never throws. */
  start(): void {
    this.#loop ??= this.#run().catch((error) => {
      // A bug, not a server's failure: said loudly, and the daemon goes on without this server.
      this.moveTo("stopped");
      this.linkFailed(`homed's MCP client failed: ${messageOf(error)}`);
      this.#options.logger.error("{label}: {error}", { label: this.#label, error: this.lastError });
    });
  }

  /** Closes the session (killing a stdio child) and stops reconnecting; resolves once it is all gone. */
  async stop(): Promise<void> {
    this.#stopping.abort(new Error(`${this.#label}: homed is stopping`));
    await this.#loop;
    await this.#relisting;
    this.moveTo("stopped");
  }

  /** For `/api/status`. */
  status(): McpConnectionStatus {
    return {
      transport: this.#kind,
      state: this.state,
      tools: this.#tools.map((tool) => tool.name),
      calls: this.#calls,
      failures: this.#failures,
      restarts: this.#restarts,
      failed_starts: this.#failedStarts,
      last_error: this.lastError,
      next_attempt_at: this.nextRetryAt === null ? null : new Date(this.nextRetryAt).toISOString(),
      source: this.server.source,
      pid: this.pid,
    };
  }

  /**
   * Calls tool `tool` (the server's name) with `args`. Throws an `Error` naming the server and what went wrong when
   * the server is not ready, went away during the call, did not answer in time or refused the call; a tool's own
   * failure comes back as a result with `isError: true`.
   *
   * @example
   * ```ts
   * declare const connection: McpServerConnection;
   * const result = await connection.call("echo", { message: "hi" }, {
   *   signal: AbortSignal.timeout(30_000),
   *   timeoutMs: 30_000,
   * });
   * result.content; // [{ type: "text", text: "Echo: hi" }]
   * ```
   */
  async call(tool: string, args: Record<string, unknown>, options: McpCallOptions): Promise<McpCallResult> {
    const session = this.#session;
    if (!session || this.state !== "ready") throw new Error(this.#unavailable());
    this.#calls++;
    // A signal of its own per call: the SDK never removes its abort listener, and the turn's signal outlives the call.
    const own = new AbortController();
    const relay = () => own.abort(options.signal.reason);
    if (options.signal.aborted) relay();
    else options.signal.addEventListener("abort", relay, { once: true });
    try {
      const result = await session.client.callTool({ name: tool, arguments: args }, undefined, {
        signal: own.signal,
        timeout: options.timeoutMs + SDK_TIMEOUT_GRACE_MS,
      });
      const content = Array.isArray(result.content) ? (result.content as McpContent[]) : [];
      const out: McpCallResult = { content };
      if (result.structuredContent && typeof result.structuredContent === "object") {
        out.structuredContent = result.structuredContent as Record<string, unknown>;
      }
      if (result.isError === true) {
        out.isError = true;
        this.#failures++;
      }
      return out;
    } catch (error) {
      this.#failures++;
      throw await this.#callError(session, tool, error, options);
    } finally {
      options.signal.removeEventListener("abort", relay);
    }
  }

  async #callError(session: McpSession, tool: string, error: unknown, options: McpCallOptions): Promise<Error> {
    const label = this.#label;
    const again = session.kind === "stdio" ? "homed is starting it again" : "homed is reconnecting";
    if (options.signal.aborted) return new Error(`${label}: the call of "${tool}" was cancelled`);
    if (this.#stopping.signal.aborted) return new Error(`${label}: the call of "${tool}" ended: homed is stopping`);
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      // The session's end is known by now (the SDK tells its onclose before the calls); the wait is a safety net.
      const limit = deadline(this.#options.clock, 200);
      const raced = await limit.race(session.ended).finally(() => limit.cancel());
      const reason = raced.late ? undefined : raced.value;
      return new Error(
        `${label} went away during the call of "${tool}"${reason ? `: ${reason}` : ""}; ${again} — try again shortly`,
      );
    }
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return new Error(
        `${label} did not answer "${tool}" within ${seconds(options.timeoutMs)}; the call was cancelled`,
      );
    }
    if (isSessionGone(error)) {
      session.end("the server ended the HTTP session");
      return new Error(`${label} had ended homed's HTTP session; ${again} — try again shortly`);
    }
    if (session.kind !== "stdio" && error instanceof TypeError) {
      // fetch's network failure: refused, reset, unreachable.
      session.end(`it could not be reached: ${messageOf(error)}`);
      return new Error(`${label} could not be reached (${messageOf(error)}); ${again}`);
    }
    const message = bare(messageOf(error));
    if (message.startsWith(label)) return new Error(message);
    if (error instanceof McpError) return new Error(`${label} refused the call of "${tool}": ${message}`);
    return new Error(`${label}: the call of "${tool}" failed: ${message}`);
  }

  /** Why a call cannot be made now, for the tool result. */
  #unavailable(): string {
    const label = this.#label;
    const next = this.nextRetryAt === null ? "" : `; homed tries again at ${new Date(this.nextRetryAt).toISOString()}`;
    const why = this.lastError ? ` (last error: ${this.lastError})` : "";
    switch (this.state) {
      case "paused":
        return `${label} is paused after ${this.#failedStarts} failed starts in a row${why}${next}`;
      case "stopped":
        return `${label} is stopped (homed is shutting down)`;
      case "connecting":
        return `${label} is still starting${next}`;
      default:
        return `${label} is not connected${why}${next}`;
    }
  }

  #setTools(tools: readonly McpListedTool[]): void {
    this.#tools = tools;
    try {
      this.#options.onTools(tools);
    } catch (error) {
      this.#options.logger.error("{label}: its tools could not be registered: {error}", {
        label: this.#label,
        error: messageOf(error),
      });
    }
  }

  /** Reads the list again after `tools/list_changed`; changes that arrive meanwhile are read in one more pass. */
  #relist(): void {
    if (this.#relisting) {
      this.#relistAgain = true;
      return;
    }
    this.#relisting = (async () => {
      do {
        this.#relistAgain = false;
        const session = this.#session;
        if (!session || this.#stopping.signal.aborted) break;
        try {
          const tools = await session.listTools(this.#timings.listTimeoutMs);
          if (this.#session !== session) break;
          this.#setTools(tools);
          this.#options.logger.info("{label} changed its tools; it now offers {count}", {
            label: this.#label,
            count: tools.length,
          });
        } catch (error) {
          if (this.#session === session) {
            this.#options.logger.warning("{label} changed its tools, but the new list could not be read: {error}", {
              label: this.#label,
              error: messageOf(error),
            });
          }
        }
      } while (this.#relistAgain);
      this.#relisting = undefined;
    })();
  }

  async #run(): Promise<void> {
    const { clock, logger } = this.#options;
    const timings = this.#timings;
    const label = this.#label;
    const stopping = this.#stopping.signal;
    const stopped = new Promise<undefined>((resolve) => stopping.addEventListener("abort", () => resolve(undefined)));
    const random = this.#options.random ?? Math.random;
    const backoff = new Backoff({ minMs: timings.firstBackoffMs, maxMs: timings.maxBackoffMs, jitter: 0.2 }, random);
    // While paused: the same wait each time, with the same spread.
    const pausedPolicy = { minMs: timings.pausedRetryMs, maxMs: timings.pausedRetryMs, jitter: 0.2 };
    let first = true;
    while (!stopping.aborted) {
      if (!first) this.#restarts++;
      first = false;
      let session: McpSession | undefined;
      try {
        session = await openSession(this.server, this.#options, {
          limitMs: timings.initializeTimeoutMs,
          signal: stopping,
          onToolsChanged: () => this.#relist(),
        });
      } catch (error) {
        if (stopping.aborted) break;
        this.linkFailed(messageOf(error));
        this.#failedStarts++;
      }
      if (session) {
        if (stopping.aborted) {
          await session.close();
          break;
        }
        this.#session = session;
        this.#kind = session.kind;
        this.linkUp("ready", clock.now());
        this.#setTools(session.tools);
        logger.info(
          this.#paused
            ? "{label} is back after being paused; it offers {count} tools"
            : "{label} is ready; it offers {count} tools",
          { label, count: session.tools.length },
        );
        this.#paused = false;
        if (session.changedWhileOpening) this.#relist();
        const readyAt = clock.monotonic();
        const reason = await Promise.race([session.ended, stopped]);
        this.#session = undefined;
        this.linkDown();
        this.#setTools([]);
        await session.close();
        if (stopping.aborted || reason === undefined) break;
        this.linkFailed(`${label} went away: ${reason}`);
        if (clock.monotonic() - readyAt >= timings.healthyMs) {
          this.#failedStarts = 0;
          backoff.reset();
        } else {
          this.#failedStarts++;
        }
      }
      let wait: number;
      if (this.#failedStarts >= timings.pauseAfter) {
        wait = exponentialBackoff(0, pausedPolicy, random);
        this.moveTo("paused");
        if (!this.#paused) {
          this.#paused = true;
          logger.error(
            "{label} is paused after {count} failed starts in a row: {error}; its tools are withdrawn and homed " +
              "tries again every {minutes} min",
            {
              label,
              count: this.#failedStarts,
              error: this.lastError,
              minutes: Math.round(timings.pausedRetryMs / 6_000) / 10,
            },
          );
        } else {
          logger.debug("{label} is still failing: {error}", { label, error: this.lastError });
        }
      } else {
        wait = backoff.next();
        this.moveTo("reconnecting");
        logger.warning("{error}; trying again in {wait} ms", { error: this.lastError, wait });
      }
      if (!(await this.waitToRetry(clock.now() + wait, () => sleepWith(clock, wait, stopping)))) break;
    }
    this.moveTo("stopped");
  }
}
