/**
 * The daemon's optional `/mcp` endpoint: MCP's streamable HTTP transport, stateless, on a fetch-style handler. Each
 * POST gets a server and a transport of its own (the SDK's `WebStandardStreamableHTTPServerTransport`, which works on
 * `Request` and `Response`), answered as one JSON body and then closed: nothing outlives the request, and no session
 * ties one caller's requests together — every request carries its own token, and so its own identity.
 *
 * Who the caller is, is decided before this handler, by homed's auth middleware; the handler only passes that
 * identity to `accessFor`, so `chat` runs as that person and the lookups see what that person may see.
 *
 * @module
 */

// The SDK's "./*" export maps `x.js` to types at `x.js.d.ts`, which do not exist: without @ts-types naming
// `x.d.ts`, Deno types every import from it as `any`.
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Identity } from "../../identity/identity.ts";
import { log } from "../../log/logging.ts";
import { type ButlerAccess, createHomedMcpServer } from "./homed_tools.ts";

/** Options of {@link mcpHttpHandler}. */
export interface McpHttpOptions {
  /** homed's version, shown to clients. */
  version: string;
  /**
   * The largest request body read, in bytes (`daemon.max_body_bytes` in the daemon). The SDK answers a larger one
   * with 413 itself; its own default is 4 MiB.
   */
  maxBodyBytes?: number;
}

/** A JSON-RPC error as an HTTP answer (what the SDK's transport gives for the requests it refuses itself). */
function rpcError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * A handler for `/mcp`: one request (already authenticated) and the caller's identity in, the MCP answer out. Only
 * POST is served: without sessions there is no stream for a GET to open and nothing for a DELETE to end, so both are
 * 405, as the MCP spec allows a stateless server to answer.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { VERSION } from "../../version.ts";
 * import type { Identity } from "../../identity/identity.ts";
 * import type { ButlerAccess } from "./homed_tools.ts";
 *
 * declare const accessFor: (identity: Identity) => ButlerAccess;
 * const handle = mcpHttpHandler(accessFor, { version: VERSION, maxBodyBytes: 262_144 });
 * const app = new Hono<{ Variables: { identity: Identity } }>();
 * // …behind the bearer-token middleware that sets `identity`:
 * app.all("/mcp", (c) => handle(c.req.raw, c.get("identity")));
 * ```
 */
export function mcpHttpHandler(
  accessFor: (identity: Identity) => ButlerAccess,
  options: McpHttpOptions,
): (request: Request, identity: Identity) => Promise<Response> {
  const logger = log("mcp", "http");
  return async (request, identity) => {
    if (request.method !== "POST") {
      return rpcError(405, "Method not allowed: this MCP endpoint is stateless; send each message with POST", {
        allow: "POST",
      });
    }
    const server = createHomedMcpServer(accessFor(identity), { version: options.version });
    server.server.onerror = (error) =>
      logger.warning("MCP request from {name} failed: {error}", { name: identity.name, error: error.message });
    const transport = new WebStandardStreamableHTTPServerTransport({
      // No sessionIdGenerator: stateless, so no state to keep between requests nor to leak between callers.
      // One JSON answer once every request of the body is done: the server can then be closed before returning.
      enableJsonResponse: true,
      ...(options.maxBodyBytes === undefined ? {} : { maxRequestBodySize: options.maxBodyBytes }),
    });
    try {
      await server.connect(transport);
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
  };
}
