/**
 * Connecting to a stdio MCP server: its command started as a child with a scrubbed environment (`PATH`, `HOME` and its
 * own `env`, nothing else of homed's), its stderr lines logged under a limit, and a failure to start said as what the
 * owner can act on — the command not on `PATH`, homed not allowed to run it, or the child's exit and last words —
 * rather than the SDK's "Connection closed".
 *
 * @module
 */

import type { McpServerConfig } from "../config/mcp_servers.ts";
import { newClient } from "./mcp_client.ts";
import type { McpBaseEnv, McpSessionDeps } from "./mcp_session_types.ts";
import { settingOf } from "./server_labels.ts";
import { messageOf } from "./session_errors.ts";
import type { Connected, SessionOpening } from "./session_opening.ts";
import { DEFAULT_MAX_MESSAGE_BYTES, StdioTransport } from "./stdio_transport.ts";

/**
 * The environment of a stdio server: `PATH` and `HOME` from `base` (when set), then the server's own `env`, and nothing
 * else — no API keys or tokens of homed's leak to a program someone else wrote.
 *
 * @example
 * ```ts
 * stdioEnv({ PATH: "/usr/bin", HOME: "/home/homed" }, { API_KEY: "k" });
 * // { PATH: "/usr/bin", HOME: "/home/homed", API_KEY: "k" }
 * ```
 */
export function stdioEnv(base: McpBaseEnv, own: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  if (base.PATH !== undefined) env.PATH = base.PATH;
  if (base.HOME !== undefined) env.HOME = base.HOME;
  return { ...env, ...own };
}

/**
 * Starts `server.command` and connects a client to it; what is open is held by `opening`.
 *
 * @example
 * ```ts
 * import type { McpServerConfig } from "../config/mcp_servers.ts";
 * import type { McpSessionDeps } from "./mcp_session_types.ts";
 * import { SessionOpening } from "./session_opening.ts";
 *
 * declare const server: McpServerConfig;
 * declare const deps: McpSessionDeps;
 * const connected = await connectStdio(server, deps, new SessionOpening('MCP server "fs"', deps));
 * connected.pid(); // the child's process id
 * ```
 */
export async function connectStdio(
  server: McpServerConfig,
  deps: McpSessionDeps,
  opening: SessionOpening,
): Promise<Connected> {
  const { label, stderrLimiter } = opening;
  const command = server.command!;
  const transport = new StdioTransport({
    command,
    args: server.args,
    env: stdioEnv(deps.baseEnv, server.env),
    ...(server.cwd ? { cwd: server.cwd } : {}),
    clock: deps.clock,
    label,
    maxMessageBytes: deps.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    graceMs: deps.closeGraceMs ?? 1_000,
    onStderr: (line: string) => {
      const summary = (count: number, seconds: number) =>
        deps.logger.info("{label}: {count} more stderr lines in the last {seconds} s", { label, count, seconds });
      if (stderrLimiter.allow("stderr", summary)) deps.logger.info("{label} stderr: {line}", { label, line });
    },
  });
  opening.useStdio(transport);
  const client = newClient();
  opening.wire(client, "stdio");
  opening.hold({ client, transport, close: () => client.close().catch(() => {}) });
  try {
    await client.connect(transport);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(
        `${label}: the command ${JSON.stringify(command)} (${settingOf(server, "command")}) was not found on PATH; ` +
          `install it or give its full path`,
      );
    }
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      throw new Error(
        `${label}: homed may not run ${JSON.stringify(command)} (${settingOf(server, "command")}: ${
          messageOf(error)
        }); ` +
          `start homed with the flags \`homed flags\` prints`,
      );
    }
    // Its exit says more than the SDK's "Connection closed" or a broken pipe.
    const ended = await transport.failureWithin(1_000);
    if (ended) throw new Error(`${label} failed to start: ${ended}`);
    const last = transport.stderrTail.at(-1);
    throw new Error(
      `${label} failed to start: ${messageOf(error).replace(/^MCP error -?\d+: /, "")}${
        last ? ` (its last words on stderr: ${last})` : ""
      }`,
    );
  }
  return { kind: "stdio" as const, client, transport, pid: () => transport.pid };
}
