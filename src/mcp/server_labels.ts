/**
 * How messages name an MCP server and its settings, so every line about one tells the owner which server and where in
 * the config (or in which imported `mcp.json`) to change it.
 *
 * @module
 */

import type { McpServerConfig } from "../config/mcp_servers.ts";

/**
 * The setting `field` of a server, for messages: where the owner goes to change it.
 *
 * @example
 * ```ts
 * settingOf({ name: "fs", source: "mcp.servers" }, "command"); // "mcp.servers.fs.command"
 * settingOf({ name: "fs", source: "/etc/homed/mcp.json" }, "command"); // "mcpServers.fs.command in /etc/homed/mcp.json"
 * ```
 */
export function settingOf(server: Pick<McpServerConfig, "name" | "source">, field: string): string {
  return server.source === "mcp.servers"
    ? `mcp.servers.${server.name}.${field}`
    : `mcpServers.${server.name}.${field} in ${server.source}`;
}

/**
 * How messages name a server.
 *
 * @example
 * ```ts
 * labelOf({ name: "filesystem" }); // 'MCP server "filesystem"'
 * ```
 */
export function labelOf(server: Pick<McpServerConfig, "name">): string {
  return `MCP server "${server.name}"`;
}
