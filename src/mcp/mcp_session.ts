/**
 * One session with one MCP server: the transport chosen from its config (a child over stdio, or streamable HTTP
 * falling back to legacy SSE when the server answers the first POST with a 4xx, as the SDK's README advises), the
 * SDK `Client` on it, `initialize` and every page of `tools/list` under one deadline, and a single promise that says
 * when and why the session ended (the child exited, the HTTP session is gone, its event stream could not be reopened).
 * A session is never reused: {@link McpServerConnection} opens a new one to reconnect.
 *
 * The pieces are in files of their own: the shapes (`mcp_session_types.ts`), the attempt's state and the client's
 * handlers (`session_opening.ts`), the transports (`connect_stdio.ts`, `connect_http.ts` with `limited_fetch.ts`), the
 * client (`mcp_client.ts`), `tools/list` (`list_tools.ts`), what errors mean (`session_errors.ts`) and how messages
 * name a server (`server_labels.ts`).
 *
 * @module
 */

import { deadline } from "../clock.ts";
import type { McpServerConfig } from "../config/mcp_servers.ts";
import { connectHttp } from "./connect_http.ts";
import { connectStdio } from "./connect_stdio.ts";
import { listAll } from "./list_tools.ts";
import type { McpListedTool, McpSession, McpSessionDeps, OpenSessionOptions } from "./mcp_session_types.ts";
import { labelOf } from "./server_labels.ts";
import { messageOf } from "./session_errors.ts";
import { type Connected, SessionOpening } from "./session_opening.ts";
import { StdioTransport } from "./stdio_transport.ts";

export { stdioEnv } from "./connect_stdio.ts";
export type {
  McpBaseEnv,
  McpCallResult,
  McpContent,
  McpListedTool,
  McpSession,
  McpSessionDeps,
  McpTransportKind,
  OpenSessionOptions,
} from "./mcp_session_types.ts";
export { labelOf, settingOf } from "./server_labels.ts";
export { isSessionGone } from "./session_errors.ts";

/**
 * Opens a session with `server`: throws, with a message naming the server and what failed, when it cannot be started,
 * does not finish `initialize` and the first `tools/list` within `options.limitMs`, or the attempt is aborted.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { systemClock } from "../clock.ts";
 * import type { McpServerConfig } from "../config/mcp_servers.ts";
 *
 * declare const server: McpServerConfig;
 * const session = await openSession(server, {
 *   clock: systemClock,
 *   logger: getLogger(["homed", "mcp"]),
 *   baseEnv: { PATH: "/usr/bin:/bin", HOME: "/home/homed" },
 * }, { limitMs: 30_000 });
 * session.tools.map((tool) => tool.name); // ["echo", "get-sum", …]
 * await session.close();
 * ```
 */
export async function openSession(
  server: McpServerConfig,
  deps: McpSessionDeps,
  options: OpenSessionOptions,
): Promise<McpSession> {
  const label = labelOf(server);
  const limit = deadline(deps.clock, options.limitMs);
  // Whatever is open when the attempt fails is closed here, so a late or aborted attempt leaves nothing behind.
  const opening = new SessionOpening(label, deps);
  const { abort } = opening;
  const onStop = () => abort.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onStop, { once: true });
  let succeeded = false;
  try {
    if (options.signal?.aborted) throw new Error(`${label}: homed is stopping`);
    const attempt = (async () => {
      const connected = server.command !== undefined
        ? await connectStdio(server, deps, opening)
        : await connectHttp(server, deps, opening);
      const tools = await listAll(connected.client, deps.logger, label, abort.signal);
      return { connected, tools };
    })();
    // The attempt goes on after a `late`; its rejection then has nobody to tell.
    attempt.catch(() => {});
    const stopped = new Promise<{ late: true }>((resolve) =>
      abort.signal.addEventListener("abort", () => resolve({ late: true }))
    );
    const raced = await Promise.race([limit.race(attempt), stopped]);
    if (raced.late) {
      abort.abort();
      const seconds = Math.round(options.limitMs / 100) / 10;
      const transport = opening.openTransport;
      const tail = transport instanceof StdioTransport ? transport.stderrTail.at(-1) : undefined;
      throw new Error(
        options.signal?.aborted
          ? `${label}: homed is stopping`
          : `${label} did not answer initialize and tools/list within ${seconds} s${
            tail ? ` (its last words on stderr: ${tail})` : ""
          }`,
      );
    }
    const { connected, tools } = raced.value;
    const close = opening.establish(connected.client, () => options.onToolsChanged?.());
    succeeded = true;
    return openedSession(connected, tools, opening, deps, close);
  } catch (error) {
    // Every reason names the server: one from the SDK ("MCP error -32601: Method not found") gets the name here.
    const message = messageOf(error);
    throw message.startsWith(label) ? error : new Error(`${label}: ${message.replace(/^MCP error -?\d+: /, "")}`);
  } finally {
    limit.cancel();
    options.signal?.removeEventListener("abort", onStop);
    // Only a failed attempt aborts: the SDK keeps its listener on the signal after a request, and would send a
    // needless `notifications/cancelled` for a list that was answered.
    if (!succeeded) abort.abort();
    await opening.closeOpened();
  }
}

/** The open session over `connected`, its tools as first listed; `close` closes its transport. */
function openedSession(
  connected: Connected,
  tools: McpListedTool[],
  opening: SessionOpening,
  deps: McpSessionDeps,
  close: () => Promise<void>,
): McpSession {
  const { client, kind } = connected;
  const { label } = opening;
  return {
    kind,
    client,
    tools,
    changedWhileOpening: opening.changedEarly,
    get pid() {
      return connected.pid();
    },
    ended: opening.ended,
    end: (reason) => opening.end(reason),
    listTools: async (limitMs) => {
      const list = deadline(deps.clock, limitMs);
      const stop = new AbortController();
      try {
        const listed = await list.race(listAll(client, deps.logger, label, stop.signal));
        if (listed.late) {
          stop.abort();
          throw new Error(`${label} did not answer tools/list within ${Math.round(limitMs / 1000)} s`);
        }
        return listed.value;
      } finally {
        list.cancel();
      }
    },
    close: async () => {
      opening.stderrLimiter.flush();
      await close();
    },
  };
}
