import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Identity } from "../../identity/identity.ts";
import type { ButlerAccess } from "./homed_tools.ts";
import { mcpHttpHandler, type McpHttpOptions } from "./mcp_http_route.ts";

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
function mcpEndpoint(options: Partial<McpHttpOptions> = {}, access: (identity: Identity) => ButlerAccess = accessFor) {
  const handle = mcpHttpHandler(access, { version: "9.9.9", maxBodyBytes: 65_536, ...options });
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

/** A raw POST of `body` (text, sent as is) to `/mcp` with the owner's token and the headers MCP asks for. */
async function postRaw(url: URL, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: "Bearer tok-owner",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body,
  });
  return { status: response.status, body: await response.json() };
}

/** Asserts that `promise` rejects with the JSON-RPC error `code`, its message matching `message`. */
async function rejectsWithRpcError(promise: Promise<unknown>, code: number, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof McpError, `an McpError, not ${error}`);
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  });
}

Deno.test("an unknown tool is the JSON-RPC error -32602 naming it, not a tool result", async () => {
  await using endpoint = mcpEndpoint();
  await using owner = await connect(endpoint.url, "tok-owner");
  await rejectsWithRpcError(
    owner.client.callTool({ name: "unlock_front_door", arguments: {} }),
    -32602,
    /Unknown tool: unlock_front_door/,
  );
  // A known tool with bad arguments stays the tool's error (the model reads it and corrects the call).
  const badArguments = await owner.client.callTool({ name: "memory_recall", arguments: { query: "x", k: 99 } });
  assert.equal(badArguments.isError, true);
});

Deno.test("a tools/list cursor is the JSON-RPC error -32602 naming it (there is one page, and no nextCursor)", async () => {
  await using endpoint = mcpEndpoint();
  await using owner = await connect(endpoint.url, "tok-owner");
  await rejectsWithRpcError(owner.client.listTools({ cursor: "page-2" }), -32602, /cursor "page-2"/);
  const { tools, nextCursor } = await owner.client.listTools();
  assert.deepEqual([tools.length, nextCursor], [4, undefined]);
});

Deno.test("JSON that is not a JSON-RPC message is -32600 (Invalid Request); JSON that does not parse stays -32700", async () => {
  await using endpoint = mcpEndpoint();
  const cases: Array<[string, number, RegExp, string | number | null]> = [
    ['{"foo":1}', -32600, /^Invalid Request: .*\{"foo":1\}/, null],
    ["[]", -32600, /^Invalid Request: .*empty batch/, null],
    ["42", -32600, /^Invalid Request: .*42/, null],
    ['{"jsonrpc":"2.0","id":9,"method":7}', -32600, /^Invalid Request: .*"method":7/, 9],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"},{"foo":1}]', -32600, /^Invalid Request: message 2 of the batch/, null],
    ['{"jsonrpc": "2.0", "id": 1, "method": "ping"', -32700, /^Parse error: /, null],
  ];
  for (const [body, code, message, id] of cases) {
    const answer = await postRaw(endpoint.url, body);
    assert.equal(answer.status, 400, body);
    const error = answer.body.error as { code: number; message: string };
    assert.equal(error.code, code, body);
    assert.match(error.message, message, body);
    assert.deepEqual([answer.body.jsonrpc, answer.body.id], ["2.0", id], body);
  }
});

/** Every identity's chat holds until `finish`: it streams "On it. " first, then ends with "On it. " and the rest. */
function heldChats() {
  const release = Promise.withResolvers<string>();
  const started = Promise.withResolvers<void>();
  const access = (identity: Identity): ButlerAccess => ({
    ...accessFor(identity),
    chat: async (_text, options) => {
      options?.onText?.("On it. ");
      started.resolve();
      return { reply: `On it. ${await release.promise}`, channel: "http" };
    },
  });
  return { access, started: started.promise, finish: (rest: string) => release.resolve(rest) };
}

Deno.test("with a progressToken /mcp answers as an SSE stream of progress, so a client that resets its timeout waits", async () => {
  const held = heldChats();
  await using endpoint = mcpEndpoint({ answerWithinMs: 10_000, progressEveryMs: 50 }, held.access);
  await using owner = await connect(endpoint.url, "tok-owner");
  const progress: Array<{ message?: string | undefined }> = [];
  // A 300 ms timeout, reset by each progress notification: the turn takes longer than that, the answer still comes.
  const calling = owner.client.callTool({ name: "chat", arguments: { text: "Vacuum the hall" } }, undefined, {
    timeout: 300,
    resetTimeoutOnProgress: true,
    onprogress: (update) => progress.push(update),
  });
  await held.started;
  await new Promise((resolve) => setTimeout(resolve, 500));
  held.finish("The hall is clean.");
  assert.equal(textOf(await calling), "On it. The hall is clean.");
  assert.ok(progress.length >= 3, `progress every 50 ms for 500 ms, got ${progress.length}`);
  assert.match(progress[0]?.message ?? "", /^The butler is still working/);
});

Deno.test("a chat longer than answerWithinMs is answered in time with what is known; its turn_id is the caller's alone", async () => {
  const held = heldChats();
  await using endpoint = mcpEndpoint({ answerWithinMs: 100 }, held.access);
  await using owner = await connect(endpoint.url, "tok-owner");
  await using visitor = await connect(endpoint.url, "tok-visitor");
  const first = textOf(await owner.client.callTool({ name: "chat", arguments: { text: "Vacuum the hall" } }));
  assert.match(first, /^The butler is still working on this .*Its reply so far:\n\nOn it. \n/s);
  const id = /turn_id "([^"]+)"/.exec(first)?.[1] ?? "";

  // Each POST has a server of its own; the turn outlives them, and only its caller may wait for it.
  const stranger = await visitor.client.callTool({ name: "chat", arguments: { turn_id: id } });
  assert.equal(stranger.isError, true);
  assert.match(textOf(stranger), new RegExp(`^No turn "${id}" of yours is kept`));
  held.finish("The hall is clean.");
  const done = await owner.client.callTool({ name: "chat", arguments: { turn_id: id } });
  assert.equal(textOf(done), "On it. The hall is clean.");
});
