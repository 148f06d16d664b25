/**
 * A chat turn longer than an MCP client's request timeout, end to end: a real homed with `/mcp`, the fake LLM holding
 * the reply's last piece for 63 s, and the MCP SDK's own client with its default options (a 60 s timeout, not reset by
 * progress). The first `chat` call is answered within homed's 50 s bound with the reply so far and a turn_id; the
 * second waits by that turn_id — as an SSE stream with progress, since it asks for progress — and gets the whole
 * reply. This is the one long test of the suite (about 65 s); the bound's other cases run in milliseconds under
 * `src/mcp/serve/`.
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm, type RecordedRequest } from "./support/fake_llm.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";

const TOKEN = "owner-token-0123456789";
/** How long the fake LLM holds the reply's last piece: longer than the SDK client's default timeout. */
const TURN_MS = 63_000;

/** The reply's first words, sent at once, and its last, sent when the turn's time is up. */
const FIRST = "Checking doors. ";
const REST = "All are locked.";

/**
 * The fake LLM's answer, its last words held until `held` settles: streamed (homed's MCP chat streams, for the reply so
 * far), the first words at once; not streamed, the whole answer then.
 */
function heldReply(held: Promise<void>): (request: RecordedRequest) => Promise<Response> {
  return async (request) => {
    const model = request.body.model;
    if (request.body.stream !== true) {
      await held;
      const message = { role: "assistant", content: FIRST + REST };
      return Response.json({
        object: "chat.completion",
        model,
        choices: [{ index: 0, message, finish_reason: "stop" }],
      });
    }
    const encoder = new TextEncoder();
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      encoder.encode(
        `data: ${
          JSON.stringify({
            object: "chat.completion.chunk",
            model,
            choices: [{ index: 0, delta, finish_reason: finish }],
          })
        }\n\n`,
      );
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(chunk({ role: "assistant", content: FIRST }, null));
        await held;
        controller.enqueue(chunk({ content: REST }, "stop"));
        controller.enqueue(encoder.encode("data: [DONE]\n\n"));
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  };
}

/** The text of a tool's answer. */
function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  return (result.content as Array<{ text?: string }>).map((block) => block.text ?? "").join("");
}

Deno.test("MCP: a chat turn longer than the SDK client's default 60 s timeout completes for that client", async () => {
  assert.equal(DEFAULT_REQUEST_TIMEOUT_MSEC, 60_000, "the SDK's default this test is about");
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    // llm.timeout is the idle time allowed between two streamed chunks: the held last piece must not trip it.
    llm: { base_url: llm.baseUrl, api_key: TEST_KEY, timeout: "90s", turn_timeout: "120s" },
    onebot: { enabled: false },
    daemon: { api_token: TOKEN },
    mcp: { serve_http: true },
  });
  const homed = await startHomed(ws);
  const client = new Client({ name: "e2e-long-chat", version: "1.0.0" });
  // Opened after TURN_MS, or at the end whatever happened (so the fake LLM's held answer ends and it can shut down).
  const turnEnds = Promise.withResolvers<void>();
  const timer = setTimeout(turnEnds.resolve, TURN_MS);
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${homed.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    llm.enqueue({ raw: heldReply(turnEnds.promise) });
    const started = performance.now();

    // Default options: the SDK's 60 s timeout, no progress. homed answers before it with what it knows.
    const first = textOf(await client.callTool({ name: "chat", arguments: { text: "Are all the doors locked?" } }));
    const firstAt = performance.now() - started;
    assert.ok(firstAt < DEFAULT_REQUEST_TIMEOUT_MSEC, `answered after ${Math.round(firstAt)} ms`);
    assert.match(first, /^The butler is still working on this \(\d+ s so far\)/);
    assert.match(first, new RegExp(`Its reply so far:\n\n${FIRST}\n`));
    const id = /turn_id "([^"]+)"/.exec(first)?.[1];
    assert.ok(id, first);

    // The rest, by turn_id; asking for progress makes /mcp answer as an SSE stream of progress notifications.
    const progress: Array<{ message?: string | undefined }> = [];
    const rest = await client.callTool({ name: "chat", arguments: { turn_id: id } }, undefined, {
      onprogress: (update) => progress.push(update),
    });
    const doneAt = performance.now() - started;
    assert.equal(textOf(rest), FIRST + REST);
    assert.ok(doneAt > DEFAULT_REQUEST_TIMEOUT_MSEC, `the turn took ${Math.round(doneAt)} ms`);
    assert.ok(progress.length >= 1, "a progress notification every 10 s while it waited");
    assert.match(progress[0]?.message ?? "", new RegExp(`still working .*turn_id "${id}"`));
  } finally {
    clearTimeout(timer);
    turnEnds.resolve();
    await teardown(
      async () => await client.close(),
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => llm.close(),
    );
  }
});
