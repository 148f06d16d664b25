import assert from "node:assert/strict";
import { ALICE, GUS, OWNER, routeApi } from "../../tests/support/route_api.ts";
import { waitFor } from "../../tests/support/wait.ts";
import type { McpService } from "../mcp/mcp_service.ts";
import { everythingStdio, processExists, serverConfig, startService } from "../mcp/testdata/servers.ts";
import { mcpRoutes, type McpServerBody } from "./mcp_routes.ts";

const api = (mcp: McpService | undefined) => routeApi([mcpRoutes(mcp)]).call;

async function servers(response: Response): Promise<Record<string, McpServerBody>> {
  assert.equal(response.status, 200);
  const body = await response.json();
  return Object.fromEntries(body.servers.map((server: McpServerBody) => [server.name, server]));
}

async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = await response.json();
  return { status: response.status, code: body.error.code, message: body.error.message };
}

Deno.test("GET /api/mcp lists every configured server: ready with its tools, failing with its error, disabled", async () => {
  await using harness = startService([
    everythingStdio(),
    serverConfig("nope", { command: "homed-no-such-mcp-server" }),
    everythingStdio({ enabled: false }, "off"),
  ]);
  const call = api(harness.service);
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "server-everything's tools");
  await waitFor(() => harness.service.connection("nope")!.status().last_error !== null, "the failed start");
  const listed = await servers(await call("GET", "/api/mcp", ALICE));
  assert.deepEqual(Object.keys(listed), ["everything", "nope", "off"], "in the order of the configuration");
  const everything = listed.everything!;
  assert.equal(everything.state, "ready");
  assert.equal(everything.transport, "stdio");
  assert.equal(everything.restarts, 0);
  assert.equal(everything.error, undefined);
  assert.ok(everything.tools.some((tool) => tool.name === "echo" && tool.full_name === "mcp__everything__echo"));
  const nope = listed.nope!;
  assert.notEqual(nope.state, "ready");
  assert.deepEqual(nope.tools, []);
  assert.match(nope.error!, /the command "homed-no-such-mcp-server" \(mcp\.servers\.nope\.command\) was not found/);
  assert.deepEqual(listed.off, { name: "off", state: "disabled", transport: "stdio", tools: [], restarts: 0 });
  assert.deepEqual(await errorOf(await call("GET", "/api/mcp", GUS)), {
    status: 403,
    code: "forbidden",
    message: 'The MCP overview needs trust household or owner; this request came from "gus" (trust guest)',
  });
});

Deno.test("the owner restarts a server: its child is replaced, its tools come back, the restart is counted", async () => {
  await using harness = startService([everythingStdio(), everythingStdio({ enabled: false }, "off")]);
  const call = api(harness.service);
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "server-everything's tools");
  const before = harness.service.connection("everything")!.pid!;
  const restarted = await call("POST", "/api/mcp/everything/restart", OWNER);
  assert.equal(restarted.status, 200);
  assert.deepEqual(await restarted.json(), { restarted: "everything", state: "connecting" });
  assert.equal(await processExists(before), false, "the old child is gone");
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "the tools back after the restart");
  const after = harness.service.connection("everything")!.pid!;
  assert.notEqual(after, before);
  const listed = await servers(await call("GET", "/api/mcp", OWNER));
  assert.equal(listed.everything!.state, "ready");
  assert.equal(listed.everything!.restarts, 1);
  const status = harness.service.status().servers as Record<string, { restarts: number }>;
  assert.equal(status.everything!.restarts, 1, "/api/status counts it too");

  for (const [token, name, trust] of [[ALICE, "alice", "household"], [GUS, "gus", "guest"]]) {
    assert.deepEqual(await errorOf(await call("POST", "/api/mcp/everything/restart", token!)), {
      status: 403,
      code: "forbidden",
      message: `Restarting an MCP server needs trust owner; this request came from "${name}" (trust ${trust})`,
    });
  }
  assert.deepEqual(await errorOf(await call("POST", "/api/mcp/nothing/restart", OWNER)), {
    status: 404,
    code: "not_found",
    message: 'No MCP server "nothing"; configured: everything, off',
  });
  assert.deepEqual(await errorOf(await call("POST", "/api/mcp/off/restart", OWNER)), {
    status: 409,
    code: "conflict",
    message: 'MCP server "off" is disabled (enabled: false); homed does not start it',
  });
  assert.equal(harness.service.connection("everything")!.pid, after, "refusals touched nothing");
});

Deno.test("two restarts at once run one after the other; both are counted", async () => {
  await using harness = startService([everythingStdio()]);
  const call = api(harness.service);
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "server-everything's tools");
  const before = harness.service.connection("everything")!.pid!;
  const [a, b] = await Promise.all([
    call("POST", "/api/mcp/everything/restart", OWNER),
    call("POST", "/api/mcp/everything/restart", OWNER),
  ]);
  assert.deepEqual([a.status, b.status], [200, 200]);
  await Promise.all([a.body?.cancel(), b.body?.cancel()]);
  await waitFor(() => harness.tools.has("mcp__everything__echo"), "the tools back after the restarts");
  assert.equal(await processExists(before), false, "the first child is gone");
  assert.equal((await servers(await call("GET", "/api/mcp", OWNER))).everything!.restarts, 2);
});

Deno.test("without MCP configured the list is empty and a restart is a 404", async () => {
  const call = api(undefined);
  assert.deepEqual(await (await call("GET", "/api/mcp", ALICE)).json(), { servers: [] });
  assert.deepEqual(await errorOf(await call("POST", "/api/mcp/everything/restart", OWNER)), {
    status: 404,
    code: "not_found",
    message: 'No MCP server "everything"; none is configured (mcp.servers)',
  });
});
