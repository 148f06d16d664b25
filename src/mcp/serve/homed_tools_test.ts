import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type ButlerAccess, createHomedMcpServer, HOMED_TOOL_NAMES } from "./homed_tools.ts";

/** An access that answers from fixed values and records each call. */
function fakeAccess(overrides: Partial<ButlerAccess> = {}): ButlerAccess & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  return {
    calls,
    chat: (text) => (calls.push(["chat", text]), Promise.resolve({ reply: `Noted: ${text}`, channel: "http" })),
    recall: (query, k) => (calls.push(["recall", query, k]), Promise.resolve([{ id: 7, summary: "umbrella in hall" }])),
    searchKnowledge: (query, k) => (calls.push(["knowledge", query, k]), Promise.resolve([{ topic: "router" }])),
    schedules: () => (calls.push(["schedules"]), Promise.resolve([])),
    ...overrides,
  };
}

/** The SDK's own client, connected in memory to the server over `access`. */
async function connect(access: ButlerAccess): Promise<{ client: Client } & AsyncDisposable> {
  const server = createHomedMcpServer(access, { version: "9.9.9" });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "homed-test", version: "1.0.0" });
  await client.connect(clientSide);
  return {
    client,
    [Symbol.asyncDispose]: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** The one text block of a tool's answer. */
function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  const content = result.content as Array<{ type: string; text?: string }>;
  assert.equal(content.length, 1);
  assert.equal(content[0]?.type, "text");
  return content[0]?.text ?? "";
}

Deno.test("the server names itself homed with the given version, and lists the four tools in order", async () => {
  await using mcp = await connect(fakeAccess());
  assert.equal(mcp.client.getServerVersion()?.name, "homed");
  assert.equal(mcp.client.getServerVersion()?.version, "9.9.9");
  const { tools } = await mcp.client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name), [...HOMED_TOOL_NAMES]);
  assert.match(mcp.client.getInstructions() ?? "", /household's butler/);
});

Deno.test("each tool's JSON Schema bounds its arguments: text 32,000, query 500, k 1 to 20, nothing else", async () => {
  await using mcp = await connect(fakeAccess());
  const tools = new Map((await mcp.client.listTools()).tools.map((tool) => [tool.name, tool]));
  const chat = tools.get("chat")?.inputSchema;
  assert.deepEqual(chat?.required, ["text"]);
  assert.equal(chat?.additionalProperties, false);
  const { description, ...text } = chat?.properties?.text as Record<string, unknown>;
  assert.deepEqual(text, { type: "string", minLength: 1, maxLength: 32_000, pattern: "\\S" });
  assert.match(String(description), /at most 32000 characters/);
  for (const name of ["memory_recall", "knowledge_search"]) {
    const schema = tools.get(name)?.inputSchema;
    assert.deepEqual(schema?.required, ["query"], name);
    assert.equal(schema?.additionalProperties, false, name);
    const { query, k } = schema?.properties as Record<string, Record<string, unknown>>;
    assert.equal(query?.maxLength, 500, name);
    assert.deepEqual([k?.type, k?.minimum, k?.maximum], ["integer", 1, 20], name);
  }
  assert.deepEqual(tools.get("schedule_list")?.inputSchema.properties, {});
  assert.equal(tools.get("memory_recall")?.annotations?.readOnlyHint, true);
  assert.equal(tools.get("chat")?.annotations?.readOnlyHint, false);
  for (const tool of tools.values()) assert.ok((tool.description ?? "").length > 60, `${tool.name} says what it is`);
});

Deno.test("chat sends the text through the access and answers with the butler's reply", async () => {
  const access = fakeAccess();
  await using mcp = await connect(access);
  const result = await mcp.client.callTool({ name: "chat", arguments: { text: "The plumber comes Friday" } });
  assert.equal(result.isError, undefined);
  assert.equal(textOf(result), "Noted: The plumber comes Friday");
  assert.deepEqual(access.calls, [["chat", "The plumber comes Friday"]]);
});

Deno.test("an empty reply is said to be one, not sent as an empty text", async () => {
  await using mcp = await connect(fakeAccess({ chat: () => Promise.resolve({ reply: " ", channel: "http" }) }));
  assert.equal(
    textOf(await mcp.client.callTool({ name: "chat", arguments: { text: "…" } })),
    "(The butler gave no reply.)",
  );
});

Deno.test("the lookups pass query and k on and answer with the access's JSON, pretty-printed", async () => {
  const access = fakeAccess();
  await using mcp = await connect(access);
  const recalled = await mcp.client.callTool({ name: "memory_recall", arguments: { query: "umbrella", k: 3 } });
  assert.equal(textOf(recalled), '[\n  {\n    "id": 7,\n    "summary": "umbrella in hall"\n  }\n]');
  const found = await mcp.client.callTool({ name: "knowledge_search", arguments: { query: "router" } });
  assert.deepEqual(JSON.parse(textOf(found)), [{ topic: "router" }]);
  assert.equal(textOf(await mcp.client.callTool({ name: "schedule_list", arguments: {} })), "[]");
  assert.deepEqual(access.calls, [["recall", "umbrella", 3], ["knowledge", "router", undefined], ["schedules"]]);
});

Deno.test("a failure of the access is the tool's error, with the access's message", async () => {
  const refusal = 'Inspecting memory needs trust household or owner; this request came from "visitor" (trust guest)';
  await using mcp = await connect(fakeAccess({ recall: () => Promise.reject(new Error(refusal)) }));
  const result = await mcp.client.callTool({ name: "memory_recall", arguments: { query: "umbrella" } });
  assert.equal(result.isError, true);
  assert.equal(textOf(result), refusal);
});

Deno.test("arguments outside the schema are refused as the tool's error before the access is called", async () => {
  const access = fakeAccess();
  await using mcp = await connect(access);
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["memory_recall", { query: "umbrella", k: 21 }, /expected number to be <=20 at k/],
    ["knowledge_search", { query: "x".repeat(501) }, /Too big.*at query/],
    ["knowledge_search", { query: "   " }, /Must not be blank/],
    ["chat", { text: "x".repeat(32_001) }, /Too big.*at text/],
    ["chat", { message: "hi" }, /text/],
    ["schedule_list", { all: true }, /Unrecognized key/],
  ];
  for (const [name, args, message] of cases) {
    const result = await mcp.client.callTool({ name, arguments: args });
    assert.equal(result.isError, true, name);
    assert.match(textOf(result), message, name);
  }
  assert.deepEqual(access.calls, []);
});
