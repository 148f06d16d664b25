import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Identity } from "../../identity/identity.ts";
import type { ButlerAccess } from "./homed_tools.ts";
import { mcpHttpHandler } from "./mcp_http_route.ts";

/** The tokens of the fake auth in front of the handler, as homed's bearer middleware maps them. */
const PEOPLE: Record<string, Identity> = {
  "tok-owner": { name: "owner", trust: "owner" },
  "tok-visitor": { name: "visitor", trust: "guest" },
};

/** An access per identity that answers as the daemon would for that person (guests may not recall). */
function accessFor(identity: Identity): ButlerAccess {
  return {
    chat: (text) => Promise.resolve({ reply: `${identity.name} said: ${text}`, channel: "http" }),
    recall: (query) =>
      identity.trust === "guest"
        ? Promise.reject(
          new Error(`Inspecting memory needs trust household or owner; this request came from "visitor"`),
        )
        : Promise.resolve([{ summary: `about ${query}` }]),
    searchKnowledge: () => Promise.resolve([]),
    schedules: () => Promise.resolve([{ creator: identity.name }]),
  };
}

/** `/mcp` on 127.0.0.1 behind a fake bearer check (401 without a known token), as the daemon would mount it. */
function mcpEndpoint() {
  const handle = mcpHttpHandler(accessFor, { version: "9.9.9", maxBodyBytes: 65_536 });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const identity = PEOPLE[(request.headers.get("authorization") ?? "").replace(/^Bearer /, "")];
    if (new URL(request.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
    if (!identity) return Response.json({ error: { code: "unauthorized", message: "No token" } }, { status: 401 });
    return handle(request, identity);
  });
  return { url: new URL(`http://127.0.0.1:${server.addr.port}/mcp`), [Symbol.asyncDispose]: () => server.shutdown() };
}

/** The SDK's client over streamable HTTP, with `token`. */
async function connect(url: URL, token: string): Promise<{ client: Client } & AsyncDisposable> {
  const client = new Client({ name: "homed-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return { client, [Symbol.asyncDispose]: () => client.close() };
}

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  const content = result.content as Array<{ type: string; text?: string }>;
  return content.map((block) => block.text ?? "").join("");
}

Deno.test("over streamable HTTP the SDK's client lists the four tools and runs chat as the caller", async () => {
  await using endpoint = mcpEndpoint();
  await using owner = await connect(endpoint.url, "tok-owner");
  assert.equal(owner.client.getServerVersion()?.version, "9.9.9");
  const { tools } = await owner.client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name), ["chat", "memory_recall", "knowledge_search", "schedule_list"]);
  const result = await owner.client.callTool({ name: "chat", arguments: { text: "lights off" } });
  assert.equal(textOf(result), "owner said: lights off");
});

Deno.test("each request runs as its own token's identity: the guest is refused recall, the owner is not", async () => {
  await using endpoint = mcpEndpoint();
  await using owner = await connect(endpoint.url, "tok-owner");
  await using visitor = await connect(endpoint.url, "tok-visitor");
  const refused = await visitor.client.callTool({ name: "memory_recall", arguments: { query: "umbrella" } });
  assert.equal(refused.isError, true);
  assert.match(textOf(refused), /^Inspecting memory needs trust household or owner/);
  const recalled = await owner.client.callTool({ name: "memory_recall", arguments: { query: "umbrella" } });
  assert.deepEqual(JSON.parse(textOf(recalled)), [{ summary: "about umbrella" }]);
  const theirs = await visitor.client.callTool({ name: "schedule_list", arguments: {} });
  assert.deepEqual(JSON.parse(textOf(theirs)), [{ creator: "visitor" }]);
});

Deno.test("GET and DELETE are 405 with Allow: POST (no sessions, so no stream to open or end)", async () => {
  await using endpoint = mcpEndpoint();
  for (const method of ["GET", "DELETE"]) {
    const response = await fetch(endpoint.url, {
      method,
      headers: { authorization: "Bearer tok-owner", accept: "text/event-stream" },
    });
    assert.equal(response.status, 405, method);
    assert.equal(response.headers.get("allow"), "POST", method);
    const body = await response.json();
    assert.equal(body.error.code, -32000, method);
  }
});

Deno.test("a body over maxBodyBytes is refused with 413 before it is parsed", async () => {
  await using endpoint = mcpEndpoint();
  const response = await fetch(endpoint.url, {
    method: "POST",
    headers: {
      authorization: "Bearer tok-owner",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(70_000) } }),
  });
  assert.equal(response.status, 413);
  await response.body?.cancel();
});

Deno.test("a request of its own, without initialize first, is answered (stateless: nothing to remember)", async () => {
  await using endpoint = mcpEndpoint();
  const response = await fetch(endpoint.url, {
    method: "POST",
    headers: {
      authorization: "Bearer tok-visitor",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "schedule_list", arguments: {} },
    }),
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("mcp-session-id"), null);
  const body = await response.json();
  assert.equal(body.id, 5);
  assert.deepEqual(JSON.parse(body.result.content[0].text), [{ creator: "visitor" }]);
});
