/**
 * What the tests of `src/mcp/` share: configs for the reference servers (`server-everything`, `server-filesystem`)
 * and the fixture server, short timings, a service wired to a fresh registry, and the reference server started over
 * HTTP on a free port.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { fileURLToPath } from "node:url";
import { systemClock } from "../../clock.ts";
import type { McpServerConfig } from "../../config/mcp_servers.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import type { McpConnectionTimings } from "../mcp_server_connection.ts";
import { McpService, type McpServiceOptions } from "../mcp_service.ts";

/** The repository's root folder. */
export const ROOT: string = fileURLToPath(new URL("../../../", import.meta.url));
/** server-everything's entry point. */
export const EVERYTHING: string =
  `${ROOT}tests/tools/node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
/** server-filesystem's entry point. */
export const FILESYSTEM: string =
  `${ROOT}tests/tools/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
/** The fixture server. */
export const FIXTURE: string = fileURLToPath(new URL("./fixture_server.ts", import.meta.url));

/** Backoff and deadlines short enough for tests. */
export const FAST: Partial<McpConnectionTimings> = {
  initializeTimeoutMs: 10_000,
  firstBackoffMs: 50,
  maxBackoffMs: 400,
  healthyMs: 60_000,
  pauseAfter: 3,
  pausedRetryMs: 60_000,
};

/**
 * A server config with the defaults the schema gives.
 *
 * @example
 * ```ts
 * serverConfig("everything", { command: "node", args: [EVERYTHING, "stdio"] }).trust; // "owner"
 * ```
 */
export function serverConfig(name: string, fields: Partial<McpServerConfig>): McpServerConfig {
  return {
    name,
    args: [],
    env: {},
    cwd: "",
    headers: {},
    trust: "owner",
    include: [],
    exclude: [],
    enabled: true,
    source: "mcp.servers",
    ...fields,
  };
}

/**
 * server-everything over stdio.
 *
 * @example
 * ```ts
 * everythingStdio({ trust: "household" }).args; // [EVERYTHING, "stdio"]
 * ```
 */
export function everythingStdio(fields: Partial<McpServerConfig> = {}, name = "everything"): McpServerConfig {
  return serverConfig(name, { command: "node", args: [EVERYTHING, "stdio"], ...fields });
}

/**
 * The fixture server, run by this Deno with read access to the repository only.
 *
 * @example
 * ```ts
 * fixtureStdio().command === Deno.execPath(); // true
 * ```
 */
export function fixtureStdio(fields: Partial<McpServerConfig> = {}, name = "fixture"): McpServerConfig {
  return serverConfig(name, {
    command: Deno.execPath(),
    args: ["run", "--no-prompt", `--allow-read=${ROOT}`, FIXTURE],
    cwd: ROOT,
    ...fields,
  });
}

/**
 * `PATH` and `HOME` of the test run, as the daemon passes its own.
 *
 * @example
 * ```ts
 * testBaseEnv().PATH === Deno.env.get("PATH"); // true
 * ```
 */
export function testBaseEnv(): { PATH?: string; HOME?: string } {
  const base: { PATH?: string; HOME?: string } = {};
  const path = Deno.env.get("PATH"), home = Deno.env.get("HOME");
  if (path !== undefined) base.PATH = path;
  if (home !== undefined) base.HOME = home;
  return base;
}

/**
 * A service over `servers` with a fresh registry, test timings and a 10 s tool deadline; stop it with `await using`.
 *
 * @example
 * ```ts
 * await using harness = startService([everythingStdio()]);
 * harness.tools.has("mcp__everything__echo"); // false until the server is ready
 * ```
 */
export function startService(
  servers: McpServerConfig[],
  overrides: Partial<McpServiceOptions> = {},
): { service: McpService; tools: ToolRegistry; [Symbol.asyncDispose](): Promise<void> } {
  const tools = overrides.tools ?? new ToolRegistry({ defaultTimeoutMs: 10_000 });
  const service = new McpService({
    servers,
    tools,
    clock: systemClock,
    logger: getLogger(["homed", "mcp", "test"]),
    baseEnv: testBaseEnv(),
    defaultTimeoutMs: 10_000,
    closeGraceMs: 300,
    timings: FAST,
    ...overrides,
  });
  void service.start();
  return { service, tools, [Symbol.asyncDispose]: () => service.stop() };
}

/** A free TCP port on 127.0.0.1. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** server-everything over HTTP, running. */
export interface HttpServer {
  url: string;
  port: number;
  /** Kills it (SIGKILL) and waits for it to be gone. */
  kill(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts server-everything in `mode` on a free port (or `port`) and waits until it answers HTTP.
 *
 * @example
 * ```ts
 * await using server = await startHttpServer("streamableHttp");
 * server.url; // "http://127.0.0.1:40123/mcp"
 * ```
 */
export async function startHttpServer(mode: "streamableHttp" | "sse", port = freePort()): Promise<HttpServer> {
  const child = new Deno.Command("node", {
    args: [EVERYTHING, mode],
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let gone = false;
  const kill = async () => {
    if (gone) return;
    gone = true;
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
  };
  const path = mode === "sse" ? "/sse" : "/mcp";
  const started = performance.now();
  for (;;) {
    try {
      // A POST of no message: answered at once (400, or 404 on the SSE server's GET-only path) once it listens.
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      await response.body?.cancel();
      break;
    } catch {
      if (performance.now() - started > 15_000) {
        await kill();
        throw new Error(`server-everything (${mode}) did not listen on port ${port} within 15 s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return { url: `http://127.0.0.1:${port}${path}`, port, kill, [Symbol.asyncDispose]: kill };
}

/**
 * Kills process `pid` with SIGKILL from outside, as a crash would (`Deno.kill` needs `--allow-run` for everything;
 * `sh` is enough for this).
 *
 * @example
 * ```ts
 * await killFromOutside(12345);
 * ```
 */
export async function killFromOutside(pid: number): Promise<void> {
  await new Deno.Command("sh", { args: ["-c", `kill -9 ${pid}`], stdout: "null", stderr: "null" }).output();
}

/**
 * True while process `pid` exists.
 *
 * @example
 * ```ts
 * await processExists(Deno.pid); // true
 * ```
 */
export async function processExists(pid: number): Promise<boolean> {
  const out = await new Deno.Command("sh", { args: ["-c", `kill -0 ${pid}`], stdout: "null", stderr: "null" })
    .output();
  return out.success;
}
