import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../clock.ts";
import { Agent } from "../../agent/core/agent.ts";
import { ContextWindow } from "../../context/context_window.ts";
import { HttpDevice } from "../http_device.ts";
import { IOManager } from "../../io/io_manager.ts";
import { RouteTable } from "../../io/route_table.ts";
import {
  type ChatRequest,
  type ChatResponse,
  emptyUsageTotals,
  type Provider,
  type UsageTotals,
} from "../../provider/provider.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import { createApi } from "../app.ts";

const OWNER = "owner-token-0123456789";
const GUEST = "guest-token-0123456789";

/** A provider like a Lua adapter: it answers, but never says a response_format went to the model. */
class AdapterLike implements Provider {
  readonly model = "adapter";
  readonly requests: ChatRequest[] = [];

  chat(request: ChatRequest): Promise<ChatResponse> {
    this.requests.push(request);
    return Promise.resolve({ content: '{"ok":true}', toolCalls: [], finishReason: "stop" });
  }

  usage(): UsageTotals {
    return emptyUsageTotals();
  }
}

/** The door over a real agent and `openai` channel, asked in process. */
async function door() {
  const tools = new ToolRegistry({ clock: systemClock });
  const logger = getLogger(["test"]);
  const io = new IOManager({ clock: systemClock, routes: new RouteTable({}, {}, undefined), tools, logger });
  const openAi = new HttpDevice({ name: "openai" });
  await io.replaceDevices([new HttpDevice(), openAi]);
  const provider = new AdapterLike();
  const agent = new Agent({
    io,
    provider,
    tools,
    persona: { text: "# Test persona\n", source: "test", sha256: "x" },
    clock: systemClock,
    logger,
    maxToolRounds: 3,
    context: new ContextWindow({ maxEntries: 30, maxTokens: 48_000 }),
    shutdownGraceMs: 1_000,
    keepReasoning: false,
  });
  await agent.start();
  const app = createApi({
    device: new HttpDevice(),
    openAi,
    tokens: { ownerToken: OWNER, people: { visitor: { token: GUEST, trust: "guest" } } },
    guard: { port: () => 80, publicHosts: [], allowedOrigins: [] },
    maxBodyBytes: 262_144,
    logger,
    status: () => ({}),
    channels: () => ({}),
  });
  const post = async (body: unknown, token = OWNER) => {
    const response = await app.request("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const get = async (path: string) => {
    const response = await app.request(path, { headers: { authorization: `Bearer ${OWNER}` } });
    return { status: response.status, body: await response.json() };
  };
  return { app, agent, provider, post, get, close: async () => (await agent.stop(), await io.close()) };
}

const ASK = [{ role: "user", content: "Which lamp is on?" }];

Deno.test("a provider that cannot send response_format (an adapter): 400 naming response_format, nothing remembered", async () => {
  const { agent, provider, post, close } = await door();
  try {
    for (const model of ["homed", "homed-utility"]) {
      const { status, body } = await post({ model, messages: ASK, response_format: { type: "json_object" } });
      assert.equal(status, 400, JSON.stringify(body));
      assert.equal(body.error.param, "response_format");
      assert.equal(body.error.type, "invalid_request_error");
      assert.match(body.error.message, /cannot pass response_format on \(an adapter, llm\.provider: lua/);
    }
    assert.equal(provider.requests.length, 2, "each asked once, with the format");
    assert.deepEqual(provider.requests.map((request) => request.responseFormat), [
      { type: "json_object" },
      { type: "json_object" },
    ]);
    assert.equal(agent.contextEntries, 0, "the failed turn left the conversation as it was");
    // Without response_format the same provider answers.
    const plain = await post({ model: "homed", messages: ASK });
    assert.equal(plain.status, 200);
    assert.equal(plain.body.choices[0].message.content, '{"ok":true}');
  } finally {
    await close();
  }
});

Deno.test("every refusal is OpenAI's shape naming the field and its value; none reaches the model", async () => {
  const { provider, post, get, close } = await door();
  const image = (url: string) => ({ type: "image_url", image_url: { url } });
  const png =
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  const cases: Array<[string, unknown, number, string | undefined, RegExp]> = [
    ["not an object", [1], 400, "messages", /must be a JSON object with messages, got \[1\]/],
    ["model not text", { model: 7, messages: ASK }, 400, "model", /"model" must be a model id .*got 7/],
    [
      "no user message",
      { messages: [{ role: "system", content: "x" }] },
      400,
      "messages",
      /no message with role "user"/,
    ],
    [
      "a function role",
      { messages: [{ role: "function", content: "x" }] },
      400,
      "messages[0].role",
      /legacy "function"/,
    ],
    [
      "stream_options alone",
      { messages: ASK, stream_options: { include_usage: true } },
      400,
      "stream_options",
      /only allowed with "stream": true/,
    ],
    ["n: 3", { messages: ASK, n: 3 }, 400, "n", /"n" is 3: homed gives one answer per request/],
    [
      "format xml",
      { messages: ASK, response_format: { type: "xml" } },
      400,
      "response_format.type",
      /"xml"; allowed: text, json_object, json_schema/,
    ],
    [
      "schema name",
      { messages: ASK, response_format: { type: "json_schema", json_schema: { name: "a b" } } },
      400,
      "response_format.json_schema.name",
      /got "a b"/,
    ],
    [
      "schema a list",
      { messages: ASK, response_format: { type: "json_schema", json_schema: { name: "x", schema: [] } } },
      400,
      "response_format.json_schema.schema",
      /got \[\]/,
    ],
    ["functions", { messages: ASK, functions: [{ name: "f" }] }, 400, "functions", /legacy function calling/],
    [
      "tool_choice on homed",
      { messages: ASK, tool_choice: "required" },
      400,
      "tool_choice",
      /"required", which model "homed" cannot honour/,
    ],
    [
      "an audio part",
      { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }] },
      400,
      "messages[0].content[0]",
      /type "input_audio"; model "homed" takes text and image_url parts/,
    ],
    [
      "a file: image",
      { messages: [{ role: "user", content: [image("file:///etc/passwd")] }] },
      400,
      "messages[0].content[0].image_url.url",
      /scheme file:; allowed: data:, http:, https:/,
    ],
    [
      "credentials",
      { messages: [{ role: "user", content: [image("https://u:p@example.com/a.png")] }] },
      400,
      "messages[0].content[0].image_url.url",
      /carries credentials/,
    ],
    [
      "five images",
      { messages: [{ role: "user", content: [1, 2, 3, 4, 5].map(() => image(png)) }] },
      400,
      "messages[0].content[4]",
      /image 5; a message takes at most 4/,
    ],
    [
      "utility image",
      { model: "homed-utility", messages: [{ role: "user", content: [image(png)] }] },
      400,
      "messages[0].content[0]",
      /takes text parts only — send images to model "homed"/,
    ],
    [
      "utility tool_choice",
      { model: "homed-utility", messages: ASK, tool_choice: { type: "function", function: { name: "f" } } },
      400,
      "tool_choice",
      /homed passes "auto" \(the default\) and "none"/,
    ],
    [
      "utility tool name",
      { model: "homed-utility", messages: ASK, tools: [{ type: "function", function: { name: "a b" } }] },
      400,
      "tools[0].function.name",
      /got "a b"/,
    ],
    [
      "utility empty assistant",
      { model: "homed-utility", messages: [...ASK, { role: "assistant", content: null }, ...ASK] },
      400,
      "messages[1].content",
      /without tool_calls needs text/,
    ],
    [
      "utility tool without id",
      { model: "homed-utility", messages: [...ASK, { role: "tool", content: "x" }] },
      400,
      "messages[1].tool_call_id",
      /got undefined/,
    ],
  ];
  try {
    for (const [what, body, status, param, message] of cases) {
      const answer = await post(body);
      assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.param, param, what);
      assert.equal(answer.body.error.type, "invalid_request_error", what);
      assert.match(answer.body.error.message, message, what);
    }
    const guest = await post({ model: "homed-utility", messages: ASK }, GUEST);
    assert.equal(guest.status, 403);
    assert.deepEqual([guest.body.error.type, guest.body.error.param], ["permission_error", "model"]);
    const missing = await get("/v1/models/openai/gpt-4o");
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body.error, {
      message: 'The model "openai/gpt-4o" does not exist; homed offers homed and homed-utility',
      type: "invalid_request_error",
      code: "model_not_found",
      param: "model",
    });
    const elsewhere = await get("/v1/embeddings");
    assert.equal(elsewhere.status, 404);
    assert.equal(elsewhere.body.error.code, "unknown_url");
    assert.equal(provider.requests.length, 0);
  } finally {
    await close();
  }
});
