/**
 * A server's tools as homed keeps them: every page of `tools/list`, bounded (50 pages, 500 tools; what is cut is
 * said in the log), each tool reduced to what homed uses — name, title, description, input schema and the hints its
 * policy reads — and the tools that answer only through the experimental tasks API left out.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Client } from "@modelcontextprotocol/sdk/client";
import type { McpListedTool } from "./mcp_session_types.ts";

/** Pages of `tools/list` read at most; a server with more is cut there (said in the log). */
const MAX_PAGES = 50;
/** Tools kept from one server at most. */
const MAX_TOOLS = 500;

/**
 * The listed tools, every page, bounded; `label` names the server in the log.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import type { Client } from "@modelcontextprotocol/sdk/client";
 *
 * declare const client: Client;
 * const tools = await listAll(client, getLogger(["homed", "mcp"]), 'MCP server "everything"');
 * ```
 */
export async function listAll(
  client: Client,
  logger: Logger,
  label: string,
  signal?: AbortSignal,
): Promise<McpListedTool[]> {
  const tools: McpListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, signal ? { signal } : {});
    for (const tool of result.tools) {
      // Such a tool answers only through the (experimental) tasks API, which homed does not use.
      if (tool.execution?.taskSupport === "required") {
        logger.debug("{label}: tool {tool} needs task-based execution; not offered", { label, tool: tool.name });
        continue;
      }
      const listed: McpListedTool = { name: tool.name, inputSchema: tool.inputSchema as Record<string, unknown> };
      if (tool.title !== undefined) listed.title = tool.title;
      if (tool.description !== undefined) listed.description = tool.description;
      const hints = tool.annotations;
      if (hints && typeof hints === "object") {
        listed.annotations = Object.fromEntries(
          (["readOnlyHint", "destructiveHint", "openWorldHint"] as const)
            .filter((key) => typeof hints[key] === "boolean")
            .map((key) => [key, hints[key]]),
        );
      }
      tools.push(listed);
    }
    cursor = result.nextCursor;
    if (cursor === undefined) break;
    if (page === MAX_PAGES - 1) {
      logger.warning("{label} lists more than {pages} pages of tools; the rest are ignored", {
        label,
        pages: MAX_PAGES,
      });
    }
  }
  if (tools.length > MAX_TOOLS) {
    logger.warning("{label} lists {count} tools; homed keeps the first {max}", {
      label,
      count: tools.length,
      max: MAX_TOOLS,
    });
    tools.length = MAX_TOOLS;
  }
  return tools;
}
