/**
 * `GET /api/mcp` (household and owner): every configured MCP server with its state, transport, the tools it offers
 * now, its last error while it is not ready, and how often it was restarted — disabled servers too. `POST
 * /api/mcp/<server>/restart` (the owner): a fresh connection, backoff and pause forgotten. Without `mcp` configured
 * at all the list is empty and every restart a 404.
 *
 * @module
 */

import type { Hono } from "hono";
import type { McpServerListing, McpService } from "../mcp/mcp_service.ts";
import { McpRestartRefused } from "../mcp/restart_refused.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { requireTrust } from "./require_trust.ts";

/** One server in `GET /api/mcp`. */
export interface McpServerBody {
  name: string;
  state: McpServerListing["state"];
  transport: McpServerListing["transport"];
  /** The server's name of each tool and homed's (`mcp__<server>__<tool>`). */
  tools: Array<{ name: string; full_name: string }>;
  /** Why it is not ready (its last error), while it is not. */
  error?: string;
  restarts: number;
}

/** What the endpoints need of the MCP client: the servers' listing and a restart (an `McpService`). */
export type McpControl = Pick<McpService, "servers" | "restart">;

function serverBody(server: McpServerListing): McpServerBody {
  return {
    name: server.name,
    state: server.state,
    transport: server.transport,
    tools: server.tools.map((tool) => ({ name: tool.mcp_name, full_name: tool.name })),
    ...(server.last_error !== null && server.state !== "ready" ? { error: server.last_error } : {}),
    restarts: server.restarts,
  };
}

/**
 * Mounts the MCP endpoints (behind the API's auth); `mcp` is `undefined` when homed has no MCP servers configured.
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { McpService } from "../mcp/mcp_service.ts";
 *
 * declare const options: ApiOptions;
 * declare const mcp: McpService | undefined;
 * const app = createApi({ ...options, routes: [mcpRoutes(mcp)] });
 * ```
 */
export function mcpRoutes(mcp: McpControl | undefined): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/mcp", (c) => {
      requireTrust(c.get("identity"), "household", "The MCP overview");
      return c.json({ servers: (mcp?.servers() ?? []).map(serverBody) });
    });
    app.post("/api/mcp/:server/restart", async (c) => {
      requireTrust(c.get("identity"), "owner", "Restarting an MCP server");
      const name = c.req.param("server");
      const shown = JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
      if (!mcp) {
        throw new ApiError(404, "not_found", `No MCP server ${shown}; none is configured (mcp.servers)`);
      }
      try {
        const state = await mcp.restart(name);
        return c.json({ restarted: name, state });
      } catch (error) {
        if (!(error instanceof McpRestartRefused)) throw error;
        if (error.reason === "unknown") {
          const known = error.known.length
            ? `configured: ${error.known.join(", ")}`
            : "none is configured (mcp.servers)";
          throw new ApiError(404, "not_found", `No MCP server ${shown}; ${known}`);
        }
        if (error.reason === "disabled") throw new ApiError(409, "conflict", error.message);
        throw new ApiError(503, "unavailable", error.message);
      }
    });
  };
}
