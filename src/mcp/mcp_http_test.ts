/**
 * homed as an MCP client over HTTP: server-everything over streamable HTTP and over legacy SSE (reached by the
 * fallback), a server that restarts and forgets homed's session, and the configured headers on the wire.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { ToolOutcome } from "../tools/tool.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { waitFor } from "../../tests/support/wait.ts";
import type { McpServerStatus } from "./mcp_service.ts";
import { serverConfig, startHttpServer, startService } from "./testdata/servers.ts";

/** A call's result and text; whose words it carries (`trust`) is mcp_tools_test.ts's to check. */
const plain = ({ ok, content }: ToolOutcome) => ({ ok, content });

function serverStatus(status: Record<string, unknown>, name: string): McpServerStatus {
  const server = (status.servers as Record<string, McpServerStatus>)[name];
  assert.ok(server, `no status for ${name}`);
  return server;
}

Deno.test("server-everything over streamable HTTP: tools listed and called, transport http", async () => {
  await using http = await startHttpServer("streamableHttp");
  await using harness = startService([serverConfig("web", { url: http.url, trust: "anyone" })]);
  await waitFor(() => harness.tools.has("mcp__web__echo"), "the HTTP server's tools");
  const status = serverStatus(harness.service.status(), "web");
  assert.equal(status.transport, "http");
  assert.equal(status.state, "ready");
  const context = testToolContext("qq:group:1", "guest");
  assert.deepEqual(plain(await harness.tools.call("mcp__web__echo", '{"message":"over http"}', context)), {
    ok: true,
    content: "Echo: over http",
  });
  assert.deepEqual(plain(await harness.tools.call("mcp__web__get-sum", '{"a":1,"b":2}', context)), {
    ok: true,
    content: "The sum of 1 and 2 is 3.",
  });
});

Deno.test("a legacy SSE server answers the first POST with a 4xx; homed falls back to SSE and calls work", async () => {
  await using http = await startHttpServer("sse");
  await using harness = startService([serverConfig("old", { url: http.url })]);
  await waitFor(() => harness.tools.has("mcp__old__echo"), "the SSE server's tools");
  assert.equal(serverStatus(harness.service.status(), "old").transport, "sse");
  assert.deepEqual(plain(await harness.tools.call("mcp__old__echo", '{"message":"over sse"}', testToolContext())), {
    ok: true,
    content: "Echo: over sse",
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(serverStatus(harness.service.status(), "old").restarts, 0, "the fallback is not a lost session");
});

Deno.test("an HTTP server that restarts forgets homed's session: homed opens a new one and calls work again", async () => {
  const first = await startHttpServer("streamableHttp");
  await using harness = startService([serverConfig("web", { url: first.url })]);
  await waitFor(() => harness.tools.has("mcp__web__echo"), "the HTTP server's tools");
  await first.kill();
  await using second = await startHttpServer("streamableHttp", first.port);
  const context = testToolContext();
  // The first call may find the session gone (and say so), or find homed already reconnected.
  const early = await harness.tools.call("mcp__web__echo", '{"message":"again"}', context);
  if (!early.ok) {
    assert.match(
      early.content,
      /MCP server "web" (had ended homed's HTTP session|is not connected|could not be reached)/,
    );
  }
  await waitFor(
    () => serverStatus(harness.service.status(), "web").restarts >= 1 && harness.tools.has("mcp__web__echo"),
    "the new session",
  );
  assert.deepEqual(plain(await harness.tools.call("mcp__web__echo", '{"message":"again"}', context)), {
    ok: true,
    content: "Echo: again",
  });
  assert.equal(second.port, first.port);
});

Deno.test("the configured headers go with every request; a server refusing both transports is an error naming both", async () => {
  const seen: Array<{ method: string; authorization: string | null }> = [];
  await using fake = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    seen.push({ method: request.method, authorization: request.headers.get("authorization") });
    return new Response("no MCP here", { status: 403 });
  });
  const url = `http://127.0.0.1:${fake.addr.port}/mcp`;
  await using harness = startService([
    serverConfig("locked", { url, headers: { Authorization: "Bearer s3cret" } }),
  ]);
  await waitFor(() => serverStatus(harness.service.status(), "locked").last_error !== null, "the failed start");
  const status = serverStatus(harness.service.status(), "locked");
  assert.match(
    status.last_error ?? "",
    /^MCP server "locked" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): streamable HTTP: HTTP 403: .*; legacy SSE: .*403/,
  );
  assert.deepEqual(seen.slice(0, 2), [
    { method: "POST", authorization: "Bearer s3cret" },
    { method: "GET", authorization: "Bearer s3cret" },
  ]);
  assert.equal(status.state, "reconnecting");
});
