/**
 * `homed mcp serve`: homed as an MCP server on stdin and stdout, for desktop agents and editors. It is a client of the
 * running daemon, like `homed chat`: each tool (`chat`, `memory_recall`, `knowledge_search`, `schedule_list`) is a
 * request to the daemon's API with `daemon.api_token` (by default `$HOMED_API_TOKEN`), so the token's identity and trust
 * decide what the caller may see. Nothing but the protocol goes to stdout; logs go to stderr.
 *
 * @module
 */

import { connectHost } from "../config/listen_addr.ts";
import { setupLogging, stopLogging } from "../log/logging.ts";
import { httpButlerAccess } from "../mcp/serve/daemon_access.ts";
import { serveStdio } from "../mcp/serve/serve_stdio.ts";
import { VERSION } from "../version.ts";
import type { CommandLine } from "./command_line.ts";
import { loadCommandConfig } from "./command_config.ts";
import { checkRights } from "./rights_check.ts";
import { UsageError } from "./usage_error.ts";

/**
 * Runs `homed mcp serve` until stdin closes or a signal asks it to stop.
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 *
 * await mcpCli(parseCommandLine(["mcp", "serve", "--config", "/etc/homed/homed.yaml"]));
 * ```
 */
export async function mcpCli(line: CommandLine): Promise<void> {
  if (line.action !== "serve") {
    throw new UsageError(`homed mcp takes one action, serve (got ${JSON.stringify(line.action || "none")})`);
  }
  const { options } = line;
  const { loaded, denied } = await loadCommandConfig(options.config, line.layout);
  if (!options.url) checkRights(loaded, "mcp", denied);
  const { config } = loaded;
  const token = config.daemon.api_token;
  setupLogging({ level: config.log.level, format: config.log.format, secrets: token ? [token] : [] });
  const listen = config.daemon.listen_addr;
  const access = httpButlerAccess({
    baseUrl: options.url ?? `http://${connectHost(listen)}:${listen.port}`,
    token,
    timeoutMs: 15_000,
    // A chat is a whole turn: the LLM's time and the tools'.
    chatTimeoutMs: config.llm.turn_timeout + 120_000,
  });
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, stop);
  try {
    await serveStdio(access, { version: VERSION, signal: stopping.signal });
  } finally {
    for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.removeSignalListener(signal, stop);
    stopLogging();
  }
}
