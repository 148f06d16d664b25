/**
 * The daemon's MCP step: the `mcp` service over the configured servers (`mcp.servers` and `mcp.import`'s). It starts
 * at once — servers connect in the background, so homed listens before the slowest is up — and registers each
 * server's tools as it comes, under the owner `mcp:<server>`.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { McpServerConfig } from "../config/mcp_servers.ts";
import type { ServiceHost } from "../service/service_host.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { McpService } from "./mcp_service.ts";
import type { DescribeImage } from "./mcp_tools.ts";

/** Options of {@link startMcp}. */
export interface McpSetupOptions {
  servers: readonly McpServerConfig[];
  tools: ToolRegistry;
  services: ServiceHost;
  clock: Clock;
  random: () => number;
  /** The `mcp` logger. */
  logger: Logger;
  /** `agent.tool_timeout`. */
  defaultTimeoutMs: number;
  /** Reads homed's environment (PATH and HOME are all a stdio server gets of it). */
  readEnv: (name: string) => string | undefined;
  describeImage?: DescribeImage;
}

/**
 * Starts the `mcp` service (nothing when no server is configured; disabled ones are listed in its status).
 *
 * @example
 * ```ts
 * declare const options: McpSetupOptions;
 * const mcp = await startMcp(options);
 * mcp?.status();
 * ```
 */
export async function startMcp(options: McpSetupOptions): Promise<McpService | undefined> {
  if (options.servers.length === 0) return undefined;
  // Loaded only when a server is configured: the SDK costs ≈ 250 ms and ≈ 27 MB to load.
  const { McpService } = await import("./mcp_service.ts");
  const servers = options.servers;
  const path = options.readEnv("PATH");
  const home = options.readEnv("HOME");
  const service = new McpService({
    servers,
    tools: options.tools,
    clock: options.clock,
    random: options.random,
    logger: options.logger,
    baseEnv: { ...(path ? { PATH: path } : {}), ...(home ? { HOME: home } : {}) },
    defaultTimeoutMs: options.defaultTimeoutMs,
    ...(options.describeImage ? { describeImage: options.describeImage } : {}),
  });
  await options.services.start(service);
  return service;
}
