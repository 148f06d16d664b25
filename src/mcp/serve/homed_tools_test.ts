import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type ButlerAccess, createHomedMcpServer, HOMED_TOOL_NAMES, type HomedMcpOptions } from "./homed_tools.ts";

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
async function connect(
  access: ButlerAccess,
  options: Partial<HomedMcpOptions> = {},
): Promise<{ client: Client } & AsyncDisposable> {
  const server = createHomedMcpServer(access, { version: "9.9.9", ...options });
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
  // text or turn_id, one of them: the handler checks that (JSON Schema's oneOf is not for every client).
  assert.equal(chat?.required, undefined);
  assert.equal(chat?.additionalProperties, false);
  const { description, ...text } = chat?.properties?.text as Record<string, unknown>;
  assert.deepEqual(text, { type: "string", minLength: 1, maxLength: 32_000, pattern: "\\S" });
  assert.match(String(description), /at most 32000 characters/);
  const { description: turnDescription, ...turnId } = chat?.properties?.turn_id as Record<string, unknown>;
  assert.deepEqual(turnId, { type: "string", minLength: 1, maxLength: 100 });
  assert.match(String(turnDescription), /still working/);
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
    ["chat", { message: "hi" }, /Unrecognized key: "message"/],
    ["schedule_list", { all: true }, /Unrecognized key/],
  ];
  for (const [name, args, message] of cases) {
    const result = await mcp.client.callTool({ name, arguments: args });
    assert.equal(result.isError, true, name);
    assert.match(textOf(result), message, name);
  }
  assert.deepEqual(access.calls, []);
});

/** An access whose chat streams `start`, then holds until the test releases it with the rest of the reply. */
function heldChat(start: string) {
  const release = Promise.withResolvers<string>();
  const started = Promise.withResolvers<void>();
  const access = fakeAccess({
    chat: async (_text, options) => {
      options?.onText?.(start);
      started.resolve();
      return { reply: start + await release.promise, channel: "http" };
    },
  });
  return { access, started: started.promise, finish: (rest: string) => release.resolve(rest) };
}

/** The turn_id a "still working" answer names. */
function turnIdOf(text: string): string {
  const id = /turn_id "([^"]+)"/.exec(text)?.[1];
  assert.ok(id, `a turn_id in: ${text}`);
  return id;
}

Deno.test("a chat not done within answerWithinMs answers with the text so far and a turn_id to wait for the rest", async () => {
  const held = heldChat("Checking the doors… ");
  await using mcp = await connect(held.access, { answerWithinMs: 50 });
  const first = await mcp.client.callTool({ name: "chat", arguments: { text: "Are the doors locked?" } });
  assert.equal(first.isError, undefined);
  const said = textOf(first);
  assert.match(said, /^The butler is still working on this \(\d+ s so far\)/);
  assert.match(said, /Its reply so far:\n\nChecking the doors… \n/);
  const id = turnIdOf(said);

  // Still not done: the same again, by turn_id.
  const again = await mcp.client.callTool({ name: "chat", arguments: { turn_id: id } });
  assert.equal(turnIdOf(textOf(again)), id);

  held.finish("All locked.");
  const done = await mcp.client.callTool({ name: "chat", arguments: { turn_id: id } });
  assert.equal(textOf(done), "Checking the doors… All locked.");
  // Kept: asking again (a lost answer, a retry) gets the same reply.
  assert.equal(textOf(await mcp.client.callTool({ name: "chat", arguments: { turn_id: id } })), textOf(done));
});

Deno.test("chat takes text or turn_id, one of them; an unknown turn_id is the tool's error naming it", async () => {
  const access = fakeAccess();
  await using mcp = await connect(access);
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{}, /^chat needs text \(a message to the butler\) or turn_id/],
    [{ text: "hi", turn_id: "t1" }, /^chat takes text or turn_id, not both/],
    [{ turn_id: "t-404" }, /^No turn "t-404" of yours is kept/],
  ];
  for (const [args, message] of cases) {
    const result = await mcp.client.callTool({ name: "chat", arguments: args });
    assert.equal(result.isError, true, JSON.stringify(args));
    assert.match(textOf(result), message, JSON.stringify(args));
  }
  assert.deepEqual(access.calls, []);
});

Deno.test("with a progressToken, chat sends progress notifications naming the turn while it waits", async () => {
  const held = heldChat("");
  await using mcp = await connect(held.access, { answerWithinMs: 5_000, progressEveryMs: 20 });
  const progress: Array<{ progress: number; message?: string | undefined }> = [];
  const calling = mcp.client.callTool({ name: "chat", arguments: { text: "Water the plants" } }, undefined, {
    onprogress: (update) => progress.push(update),
  });
  await held.started;
  while (progress.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  held.finish("Done: the plants are watered.");
  assert.equal(textOf(await calling), "Done: the plants are watered.");
  const sent = progress.length;
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(progress.length, sent, "no progress after the answer");
  assert.ok(progress[1]!.progress > progress[0]!.progress, "progress increases");
  assert.match(progress[0]!.message ?? "", /^The butler is still working \(\d+ s so far; turn_id "[^"]+"\)$/);
});
