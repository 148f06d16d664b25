/**
 * What homed adds to one MCP tool call: `echo` on server-everything over stdio, called through `ToolRegistry.call` →
 * `McpService` (argument check against the server's schema, trust rule, deadline, per-call signal, result rendering)
 * and homed's stdio transport. Anchor: the same call made directly with a bare SDK `Client` on the SDK's own
 * `StdioClientTransport`, to its own server process, in the same run; a middle row — the bare SDK `Client` on homed's
 * transport — splits the difference into transport and homed's layers. The three are interleaved call by call (so
 * drift in the machine's load hits all alike), 20 warm-up calls each, then 200 timed.
 *
 * Run (from the repository root):
 * `deno run --no-prompt --allow-read=. --allow-write=bench
 * --allow-env=HOME,LOGNAME,PATH,SHELL,TERM,USER,OSTYPE,NODE_V8_COVERAGE --allow-sys=cpus --allow-run=node,git
 * bench/mcp/call.ts` (writes bench/out/mcp/results.json; `--record`: bench/mcp/results.json). The variables are the
 * anchor's: the SDK's `StdioClientTransport` copies six of them into its child's environment, its `cross-spawn`
 * reads `OSTYPE` when loaded and Deno's `child_process` reads `NODE_V8_COVERAGE`; homed's own path reads none (its
 * child gets only `PATH` and `HOME`, passed in).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { systemClock } from "../../src/clock.ts";
import { McpService } from "../../src/mcp/mcp_service.ts";
import { EVERYTHING, everythingStdio } from "../../src/mcp/testdata/servers.ts";
import { StdioTransport } from "../../src/mcp/stdio_transport.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import type { ToolContext } from "../../src/tools/tool.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const RUNS = 200;
const WARM_UP = 20;
const round = (x: number) => Math.round(x * 1000) / 1000;
const baseEnv = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/" };
const message = { message: "hello" };

// homed's path.
const tools = new ToolRegistry({ defaultTimeoutMs: 30_000 });
const mcp = new McpService({
  servers: [everythingStdio()],
  tools,
  clock: systemClock,
  logger: getLogger(["bench"]),
  baseEnv,
  defaultTimeoutMs: 30_000,
});
await mcp.start();
const context: ToolContext = {
  eventId: "e1",
  source: "http",
  sender: "owner",
  trust: "owner",
  signal: new AbortController().signal,
  replyChannel: () => "http",
  setReplyChannel: () => {},
};
const readySince = performance.now();
while (!tools.has("mcp__everything__echo")) {
  if (performance.now() - readySince > 30_000) throw new Error("server-everything did not come up within 30 s");
  await new Promise((resolve) => setTimeout(resolve, 10));
}

// The anchor: the SDK alone.
const sdk = new Client({ name: "bench", version: "1" });
await sdk.connect(new StdioClientTransport({ command: "node", args: [EVERYTHING, "stdio"], stderr: "ignore" }));
// The SDK client on homed's transport.
const mixed = new Client({ name: "bench", version: "1" });
await mixed.connect(
  new StdioTransport({
    command: "node",
    args: [EVERYTHING, "stdio"],
    env: baseEnv,
    clock: systemClock,
    label: "bench",
  }),
);

const textOf = (result: unknown) => ((result as { content?: Array<{ text?: string }> }).content?.[0]?.text) ?? "";

const paths: Record<string, () => Promise<void>> = {
  "homed: ToolRegistry.call → McpService → stdio": async () => {
    const outcome = await tools.call("mcp__everything__echo", JSON.stringify(message), context);
    if (outcome.content !== "Echo: hello") throw new Error(`unexpected: ${outcome.content}`);
  },
  "SDK Client on homed's stdio transport": async () => {
    const result = await mixed.callTool({ name: "echo", arguments: message });
    if (textOf(result) !== "Echo: hello") throw new Error(`unexpected: ${JSON.stringify(result)}`);
  },
  "anchor: bare SDK Client + StdioClientTransport": async () => {
    const result = await sdk.callTool({ name: "echo", arguments: message });
    if (textOf(result) !== "Echo: hello") throw new Error(`unexpected: ${JSON.stringify(result)}`);
  },
};

const times: Record<string, number[]> = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
for (let i = 0; i < WARM_UP + RUNS; i++) {
  for (const [name, work] of Object.entries(paths)) {
    const started = performance.now();
    await work();
    if (i >= WARM_UP) times[name]!.push(performance.now() - started);
  }
}
await sdk.close();
await mixed.close();
await mcp.stop();

const rows: Record<string, { p50_ms: number; p99_ms: number; n: number }> = {};
for (const [name, list] of Object.entries(times)) {
  rows[name] = { p50_ms: round(percentile(list, 50)), p99_ms: round(percentile(list, 99)), n: list.length };
}
const anchor = rows["anchor: bare SDK Client + StdioClientTransport"]!;
const homed = rows["homed: ToolRegistry.call → McpService → stdio"]!;
const env = await environment();
const results = {
  ...env,
  tool: "echo",
  server: "@modelcontextprotocol/server-everything (stdio)",
  overhead_p50_ms: round(homed.p50_ms - anchor.p50_ms),
  overhead_p99_ms: round(homed.p99_ms - anchor.p99_ms),
  rows,
};
await writeResults(new URL("./results.json", import.meta.url), results);
console.log(`MCP tool call over stdio (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
console.log(`homed's overhead over the bare SDK: p50 ${results.overhead_p50_ms} ms, p99 ${results.overhead_p99_ms} ms`);
