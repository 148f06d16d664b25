/**
 * A stdio MCP server over a fake butler, for `serve_stdio_test.ts` to start as a child process and reach with the
 * SDK's `StdioClientTransport`: the same path as `homed mcp serve`, without a daemon behind it. It writes one line to
 * standard error at start (to show logs stay off standard output) and exits when its standard input ends.
 *
 * @module
 */

import { serveStdio } from "../serve_stdio.ts";

if (import.meta.main) {
  console.error("fake butler: serving MCP on stdio");
  await serveStdio({
    chat: (text) => Promise.resolve({ reply: `Echo from a child process: ${text}`, channel: "http" }),
    recall: () => Promise.reject(new Error("Guests do not see the household's memory")),
    searchKnowledge: (query, k) => Promise.resolve([{ query, k: k ?? null }]),
    schedules: () => Promise.resolve([]),
  }, { version: "0.0.0-fixture" });
  console.error("fake butler: standard input ended");
}
