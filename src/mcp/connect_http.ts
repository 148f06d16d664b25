/**
 * Connecting to an HTTP MCP server: streamable HTTP first, and when the server answers the first POST with a 4xx, the
 * legacy SSE transport (as the SDK's README advises), both through a `fetch` that bounds each message. Closing a
 * streamable session tells the server it is over, briefly (it may be gone already).
 *
 * @module
 */

// The SDK's `./*` export maps `x.js` to `x.js.d.ts`, which does not exist: without `@ts-types` (the same path with no
// extension, which maps to `x.d.ts`) its modules would type-check as `any`.
// @ts-types="@modelcontextprotocol/sdk/client/sse"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
import { deadline } from "../clock.ts";
import type { McpServerConfig } from "../config/mcp_servers.ts";
import { limitedFetch } from "./limited_fetch.ts";
import { newClient } from "./mcp_client.ts";
import type { McpSessionDeps } from "./mcp_session_types.ts";
import { httpError, isNotStreamable, messageOf } from "./session_errors.ts";
import type { Connected, SessionOpening } from "./session_opening.ts";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./stdio_transport.ts";

/**
 * Connects a client to `server.url`, falling back to legacy SSE; what is open is held by `opening`.
 *
 * @example
 * ```ts
 * import type { McpServerConfig } from "../config/mcp_servers.ts";
 * import type { McpSessionDeps } from "./mcp_session_types.ts";
 * import { SessionOpening } from "./session_opening.ts";
 *
 * declare const server: McpServerConfig;
 * declare const deps: McpSessionDeps;
 * const connected = await connectHttp(server, deps, new SessionOpening('MCP server "everything"', deps));
 * connected.kind; // "http", or "sse" for a legacy server
 * ```
 */
export async function connectHttp(
  server: McpServerConfig,
  deps: McpSessionDeps,
  opening: SessionOpening,
): Promise<Connected> {
  const { label } = opening;
  const url = new URL(server.url!);
  const maxBytes = deps.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const requestInit: RequestInit = { headers: { ...server.headers } };
  const streamable = new StreamableHTTPClientTransport(url, { requestInit, fetch: limitedFetch(maxBytes, label) });
  let client = newClient();
  opening.wire(client, "http");
  opening.hold({
    client,
    transport: streamable,
    close: async () => {
      // Tell the server the session is over (it may free what it holds), briefly: it may be gone already.
      const bye = deadline(deps.clock, 1_000);
      try {
        await bye.race(streamable.terminateSession().catch(() => {}));
      } finally {
        bye.cancel();
      }
      await client.close().catch(() => {});
    },
  });
  try {
    await client.connect(streamable);
    return { kind: "http" as const, client, transport: streamable as Transport, pid: () => null };
  } catch (error) {
    // This client's end is not the session's: the fallback may yet open one.
    client.onclose = () => {};
    await client.close().catch(() => {});
    if (opening.abort.signal.aborted) throw new Error(`${label}: the attempt was given up`);
    if (!isNotStreamable(error)) throw new Error(`${label} (${server.url}): ${httpError(error)}`);
    deps.logger.debug("{label}: streamable HTTP refused ({error}); trying legacy SSE", {
      label,
      error: messageOf(error),
    });
    const sse = new SSEClientTransport(url, { requestInit, fetch: limitedFetch(maxBytes, label) });
    client = newClient();
    opening.wire(client, "sse");
    opening.hold({ client, transport: sse, close: () => client.close().catch(() => {}) });
    try {
      await client.connect(sse);
    } catch (second) {
      throw new Error(
        `${label} (${server.url}): streamable HTTP: ${httpError(error)}; legacy SSE: ${messageOf(second)}`,
      );
    }
    return { kind: "sse" as const, client, transport: sse as Transport, pid: () => null };
  }
}
