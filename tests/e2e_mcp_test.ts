/**
 * MCP end to end, with real peers nobody here wrote: a real homed whose config names the official reference server
 * `@modelcontextprotocol/server-everything` (run by Node over stdio), the fake LLM driving the tool loop, and the
 * MCP SDK's own client talking to homed's `/mcp`. Tools are named `mcp__<server>__<tool>`, called under the server's
 * trust, bad arguments are an error result and the turn goes on; homed's own tools answer with the token's identity.
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { postJson, REPO, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const OWNER_TOKEN = "owner-token-0123456789";
const ALICE = "alice-token-0123456789";
const VISITOR = "visitor-token-0123456789";
type Messages = Array<{ role: string; content: string }>;

Deno.test("MCP: server-everything's tools through the tool loop under its trust; homed's own at /mcp for the SDK client", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
    onebot: { enabled: false },
    daemon: {
      api_token: OWNER_TOKEN,
      api_tokens: { alice: { token: ALICE, trust: "household" }, visitor: { token: VISITOR, trust: "guest" } },
    },
    mcp: {
      serve_http: true,
      servers: {
        everything: {
          command: "node",
          args: [`${REPO}tests/tools/node_modules/@modelcontextprotocol/server-everything/dist/index.js`, "stdio"],
          trust: "household",
          include: ["echo", "get-sum"],
        },
      },
    },
  });
  const homed = await startHomed(ws);
  let client: Client | undefined;
  const mcpStatus = async () =>
    (await (await fetch(`${homed.url}/api/status`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } })).json())
      .services.mcp;
  const chat = (token: string, text: string) =>
    postJson(`${homed.url}/api/chat`, { text }, { authorization: `Bearer ${token}` });
  try {
    await waitFor(async () => (await mcpStatus())?.servers?.everything?.state === "ready", "server-everything ready");
    const listed = (await mcpStatus()).servers.everything.tools.map((tool: { name: string }) => tool.name).sort();
    assert.deepEqual(listed, ["mcp__everything__echo", "mcp__everything__get-sum"], "include applied");

    // A household member's turn calls the server's tool; its result reaches the model.
    llm.enqueue({ toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "你好 MCP" } }] }, {
      reply: "It echoed.",
    });
    const echoed = await chat(ALICE, "echo something");
    assert.equal(echoed.status, 200, JSON.stringify(echoed.body));
    const result = (llm.requests.at(-1)!.body.messages as Messages).filter((m) => m.role === "tool").at(-1)!;
    assert.equal(result.content, "Echo: 你好 MCP");
    assert.ok(
      (llm.requests.at(-1)!.body.tools as Array<{ function: { name: string } }>).some((t) =>
        t.function.name === "mcp__everything__get-sum"
      ),
    );

    // Bad arguments: homed's validator refuses before the server is called; the turn goes on.
    llm.enqueue({ toolCalls: [{ name: "mcp__everything__get-sum", arguments: { a: "one", b: 2 } }] }, {
      reply: "Bad numbers.",
    });
    assert.equal((await chat(ALICE, "add")).status, 200);
    const refusedArgs = (llm.requests.at(-1)!.body.messages as Messages).filter((m) => m.role === "tool").at(-1)!;
    assert.match(refusedArgs.content, /^Error: .*"a"/);

    // A guest is refused a household server's tool, the rule named.
    llm.enqueue({ toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "x" } }] }, {
      reply: "Not for you.",
    });
    assert.equal((await chat(VISITOR, "echo")).status, 200);
    const refusedGuest = (llm.requests.at(-1)!.body.messages as Messages).filter((m) => m.role === "tool").at(-1)!;
    assert.match(refusedGuest.content, /household/);

    // homed as an MCP server: the SDK's own client at /mcp, with the visitor's token.
    client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${homed.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${VISITOR}` } },
      }),
    );
    const tools = (await client.listTools()).tools.map((tool: { name: string }) => tool.name).sort();
    assert.deepEqual(tools, ["chat", "knowledge_search", "memory_recall", "schedule_list"]);
    llm.enqueue({ reply: "Hello, visitor." });
    const answered = await client.callTool({ name: "chat", arguments: { text: "hi from another assistant" } });
    assert.equal((answered.content as Array<{ text: string }>)[0]!.text, "Hello, visitor.");
    assert.match(
      (llm.requests.at(-1)!.body.messages as Messages).at(-1)!.content,
      /\[via http, from visitor, trust guest\] hi from another assistant/,
    );
    const recall = await client.callTool({ name: "memory_recall", arguments: { query: "anything" } });
    assert.equal(recall.isError, true);
    assert.match((recall.content as Array<{ text: string }>)[0]!.text, /needs trust household or owner/);
    const anonymous = await fetch(`${homed.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();
  } finally {
    await teardown(
      async () => await client?.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => llm.close(),
    );
  }
});
