/**
 * The MCP servers homed connects to: `mcp.servers`, and those of the file `mcp.import` names — the Claude-Desktop
 * shape every server's README shows (`{"mcpServers": {"<name>": {"command", "args", "env"} | {"url", "headers"}}}`,
 * `type: "stdio" | "http" | "sse"` tolerated) — checked by the same rules, a server named in `mcp.servers` winning.
 * Read by the daemon and by `homed flags` (the servers' commands and hosts are rights).
 *
 * @module
 */

import { dirname, isAbsolute, join } from "node:path";
import type { z } from "zod";
import { mcpServer } from "./schema.ts";
import type { Config } from "./schema.ts";

/** One configured MCP server. */
export type McpServerConfig = z.output<typeof mcpServer> & {
  name: string;
  /** Where it was configured: `mcp.servers` or the imported file. */
  source: string;
};

/**
 * The servers of `config` with the imported ones (relative `mcp.import` paths against the config file's folder);
 * throws `TypeError` naming the file, the server, the field and the bad value when the imported file is wrong.
 *
 * @example
 * ```ts
 * import { loadConfig } from "./load.ts";
 *
 * const { config, location } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * mcpServers(config, location.path).map((server) => server.name); // ["filesystem", "home-assistant"]
 * ```
 */
export function mcpServers(
  config: Pick<Config, "mcp">,
  configPath: string | undefined,
  readFile: (path: string) => string = Deno.readTextFileSync,
): McpServerConfig[] {
  const own = Object.entries(config.mcp.servers).map(([name, server]) => ({ ...server, name, source: "mcp.servers" }));
  if (config.mcp.import === "") return own;
  const path = mcpImportPath(config, configPath);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFile(path));
  } catch (error) {
    throw new TypeError(`mcp.import: ${path} could not be read as JSON: ${(error as Error).message}`);
  }
  const listed = (parsed as { mcpServers?: unknown } | null)?.mcpServers;
  if (!listed || typeof listed !== "object" || Array.isArray(listed)) {
    throw new TypeError(`mcp.import: ${path} has no "mcpServers" object (the Claude Desktop mcp.json shape)`);
  }
  const imported: McpServerConfig[] = [];
  for (const [name, raw] of Object.entries(listed as Record<string, unknown>)) {
    if (name in config.mcp.servers) continue;
    const { type, ...fields } = (raw ?? {}) as Record<string, unknown>;
    if (type !== undefined && !["stdio", "http", "sse", "streamable-http"].includes(String(type))) {
      throw new TypeError(
        `mcp.import: ${path}: mcpServers.${name}.type: got ${JSON.stringify(type)}; allowed: stdio, http, sse`,
      );
    }
    const result = mcpServer.safeParse(fields);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      const key = [name, ...issue.path.map(String)].join(".");
      throw new TypeError(`mcp.import: ${path}: mcpServers.${key}: ${issue.message}`);
    }
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(name)) {
      throw new TypeError(
        `mcp.import: ${path}: mcpServers.${JSON.stringify(name)}: a server name is 1 to 32 of a-z, A-Z, 0-9, _ and -`,
      );
    }
    imported.push({ ...result.data, name, source: path });
  }
  return [...own, ...imported];
}

/**
 * Where `mcp.import` points: relative paths against the config file's folder.
 *
 * @example
 * ```ts
 * mcpImportPath({ mcp: { servers: {}, import: "mcp.json", serve_http: false } }, "/etc/homed/homed.yaml");
 * // "/etc/homed/mcp.json"
 * ```
 */
export function mcpImportPath(config: Pick<Config, "mcp">, configPath: string | undefined): string {
  return isAbsolute(config.mcp.import) || !configPath
    ? config.mcp.import
    : join(dirname(configPath), config.mcp.import);
}
