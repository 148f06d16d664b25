/**
 * Two answers of the SDK's `McpServer` set right for MCP clients: a `tools/call` of a tool the server does not have is
 * the JSON-RPC error -32602 (Invalid params), as the MCP spec has it — the SDK sends it as a tool result with
 * `isError`, which a client shows as the tool's own failure — and a `tools/list` cursor is -32602 too, as the spec
 * asks for an invalid cursor: the SDK ignores it and lists the first page again, so a client that trusts the cursor
 * could loop. homed lists its tools on one page and never gives a `nextCursor`, so any cursor is one it did not give.
 *
 * @module
 */

// The SDK's "./*" export maps `x.js` to types at `x.js.d.ts`, which do not exist: without @ts-types naming
// `x.d.ts`, Deno types every import from it as `any`.
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
} from "@modelcontextprotocol/sdk/types.js";

/**
 * A JSON-RPC error a request handler throws: the SDK answers with its `code` and `message` as they are (an `McpError`
 * would put "MCP error -32602: " before the message).
 *
 * @example
 * ```ts
 * throw new JsonRpcError(-32602, "Unknown tool: unlock_front_door");
 * ```
 */
export class JsonRpcError extends Error {
  override readonly name = "JsonRpcError";
  /** `code` is the JSON-RPC error code (-32602 for bad params). */
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** A request handler as the SDK keeps it: the request and the handler's extra in, the result out. */
type InstalledHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * The handler the SDK installed for `method`. `McpServer` keeps its tool handlers to itself; they are read from the
 * protocol's handler table (a private field of the SDK, pinned by deno.lock) so that everything else — argument
 * validation, the tools' own errors, the list's JSON Schemas — stays the SDK's.
 */
function installedHandler(server: McpServer, method: string): InstalledHandler {
  const table = (server.server as unknown as { _requestHandlers?: Map<string, InstalledHandler> })._requestHandlers;
  const handler = table?.get(method);
  if (!handler) {
    throw new Error(`The MCP SDK's server has no ${method} handler to guard; has the SDK changed how it keeps them?`);
  }
  return handler;
}

/**
 * Makes `server` (its tools registered) answer a call of a tool not in `names`, and any `tools/list` cursor, with
 * the JSON-RPC error -32602 naming the tool or the cursor.
 *
 * @example
 * ```ts
 * // @ts-types="@modelcontextprotocol/sdk/server/mcp"
 * import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
 *
 * const server = new McpServer({ name: "homed", version: "1.0.0" });
 * server.registerTool("schedule_list", { description: "Lists the schedules" }, () => ({ content: [] }));
 * guardToolRequests(server, ["schedule_list"]);
 * ```
 */
export function guardToolRequests(server: McpServer, names: readonly string[]): void {
  const callTool = installedHandler(server, "tools/call");
  const listTools = installedHandler(server, "tools/list");
  const known = new Set(names);
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    if (!known.has(name)) {
      throw new JsonRpcError(ErrorCode.InvalidParams, `Unknown tool: ${name} (homed's tools are ${names.join(", ")})`);
    }
    return await callTool(request, extra) as CallToolResult;
  });
  server.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    const cursor = request.params?.cursor;
    if (cursor !== undefined) {
      throw new JsonRpcError(
        ErrorCode.InvalidParams,
        `Invalid cursor ${JSON.stringify(cursor)}: homed lists all its tools on one page and gives no nextCursor`,
      );
    }
    return await listTools(request, extra) as ListToolsResult;
  });
}
