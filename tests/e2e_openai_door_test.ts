/**
 * The OpenAI-compatible door end to end, with the official `openai` npm client as the caller: models listed, a chat
 * completion streamed and not, the person the key names in the one conversation, only the last user message taken
 * (the fake LLM checks the client's own history and system prompt never reached it), a wrong key refused with 401 in
 * OpenAI's error shape. Then the door as real clients use it (issue 36.1): `response_format` passed on and parsed,
 * real `usage` (also as the last chunk of a stream), an image part seen by the vision model, the client's tools
 * refused on `homed` and round-tripped on `homed-utility`, `n: 2` refused, `models.retrieve`, and an Open WebUI title
 * task answered without touching the conversation or memory.
 */

import assert from "node:assert/strict";
import OpenAI from "npm:openai@7.59.0";
import { DEFAULT_PERSONA_TEXT } from "../src/agent/personal.ts";
import { encodeBase64 } from "../src/text/base64.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeVision, samplePng } from "./support/fake_media.ts";
import { type HomedProcess, startHomed, workspace } from "./support/homed_process.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const ALICE = "alice-token-0123456789";
type Messages = Array<{ role: string; content: string }>;

Deno.test("the openai client: models, a completion streamed and not as the key's person, only the last user message; a wrong key 401", async () => {
  const llm = FakeLlm.start(DEFAULT_CONTRACT);
  const homed = await startHomed(
    await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      daemon: {
        openai_api: true,
        api_token: "owner-token-0123456789",
        api_tokens: { alice: { token: ALICE, trust: "household" } },
      },
    }),
  );
  const client = new OpenAI({ apiKey: ALICE, baseURL: `${homed.url}/v1`, maxRetries: 0 });
  try {
    const models = await client.models.list();
    assert.deepEqual(models.data.map((model) => model.id), ["homed", "homed-utility"]);

    llm.enqueue({ reply: "Tea is in the left cupboard." });
    const completion = await client.chat.completions.create({
      model: "anything",
      messages: [
        { role: "system", content: "You are a pirate." },
        { role: "user", content: "an earlier question the app kept" },
        { role: "assistant", content: "an earlier answer" },
        { role: "user", content: "Where is the tea?" },
      ],
    });
    assert.equal(completion.choices[0]!.message.content, "Tea is in the left cupboard.");
    assert.equal(completion.object, "chat.completion");
    const sent = JSON.stringify(llm.requests.at(-1)!.body.messages);
    assert.ok(!sent.includes("pirate") && !sent.includes("an earlier question"), "the client's history stays out");
    const asked = (llm.requests.at(-1)!.body.messages as Messages).at(-1)!.content;
    assert.match(asked, /\[via openai:alice, from alice, trust household\] Where is the tea\?$/);

    llm.enqueue({ reply: "Streaming works here too.", chunks: 3 });
    const stream = await client.chat.completions.create({
      model: "homed",
      stream: true,
      messages: [{ role: "user", content: "Stream it" }],
    });
    let streamed = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta?.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(streamed, "Streaming works here too.");
    assert.equal(finish, "stop");

    const wrong = new OpenAI({ apiKey: "not-a-homed-token-000", baseURL: `${homed.url}/v1`, maxRetries: 0 });
    const refused = await wrong.models.list().then(() => undefined, (error) => error);
    assert.ok(refused instanceof OpenAI.APIError, String(refused));
    assert.equal(refused.status, 401);
    assert.equal(refused.code, "invalid_api_key");
    assert.match(refused.message, /not one of homed's tokens/);
    const anonymous = await fetch(`${homed.url}/v1/models`);
    assert.equal(anonymous.status, 401);
    assert.deepEqual(Object.keys((await anonymous.json()).error).sort(), ["code", "message", "type"]);
    const bad = await fetch(`${homed.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "homed", messages: [{ role: "system", content: "only a system message" }] }),
    });
    assert.equal(bad.status, 400);
    assert.deepEqual((await bad.json()).error.message, 'Field "messages" has no message with role "user"');
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => llm.close(),
    );
  }
});

const OWNER = "owner-token-0123456789";
const GUEST = "guest-token-0123456789";

/** How a client that is not homed's own prompt starts: Home Assistant's and Open WebUI's requests in this test. */
const CLIENT_PROMPT = /^(You are a voice assistant for Home Assistant|### Task:)/;

/** The API as the owner sees it. */
async function ownerGet(homed: HomedProcess, path: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${homed.url}${path}`, { headers: { authorization: `Bearer ${OWNER}` } });
  assert.equal(response.status, 200, `${path}: ${response.status}`);
  return await response.json();
}

/** The memory journal's count of utterances (`/api/status` → `services.memory.candidates`), once memory is open. */
async function memoryCandidates(homed: HomedProcess): Promise<number> {
  let memory: Record<string, unknown> = {};
  await waitFor(async () => {
    const status = await ownerGet(homed, "/api/status") as { services: Record<string, Record<string, unknown>> };
    memory = status.services.memory ?? {};
    return memory.stores === "open";
  }, "memory to open");
  return memory.candidates as number;
}

/** The error a call rejects with; fails when it resolves. */
async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.then(() => undefined, (error) => error);
  assert.ok(error instanceof OpenAI.APIError, `expected an API error, got ${String(error)}`);
  return error;
}

const HA_TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [{
  type: "function",
  function: {
    name: "HassTurnOn",
    description: "Turns on a device or entity",
    parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  },
}];

Deno.test("the openai client as real clients use it: response_format, usage, images, tools, n, models.retrieve, utility tasks outside the conversation", async () => {
  const llm = FakeLlm.start({
    ...DEFAULT_CONTRACT,
    // The stateless calls carry the client's own prompt, not homed's.
    passThrough: (body) => CLIENT_PROMPT.test(String((body.messages as Messages)[0]?.content ?? "")),
  });
  const vision = FakeVision.start({ model: "vision-test" });
  const homed = await startHomed(
    await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      vision: { base_url: vision.baseUrl, model: "vision-test", timeout: "5s" },
      daemon: {
        openai_api: true,
        api_token: OWNER,
        api_tokens: {
          alice: { token: ALICE, trust: "household" },
          visitor: { token: GUEST, trust: "guest" },
        },
      },
    }),
  );
  const client = new OpenAI({ apiKey: ALICE, baseURL: `${homed.url}/v1`, maxRetries: 0 });
  const lastUser = (index = -1) =>
    (llm.requests.at(index)!.body.messages as Messages).filter((message) => message.role === "user").at(-1)!.content;
  try {
    // models.retrieve: both models in OpenAI's shape; anything else a 404 the client raises as NotFoundError.
    const homedModel = await client.models.retrieve("homed");
    assert.deepEqual([homedModel.id, homedModel.object, homedModel.owned_by], ["homed", "model", "homed"]);
    assert.equal((await client.models.retrieve("homed-utility")).id, "homed-utility");
    const unknown = await refusal(client.models.retrieve("gpt-4o"));
    assert.ok(unknown instanceof OpenAI.NotFoundError);
    assert.equal(unknown.code, "model_not_found");
    assert.match(unknown.message, /"gpt-4o" does not exist; homed offers homed and homed-utility/);

    // response_format json_schema on a turn: the model gets it, the answer parses; usage is the model's own.
    const schema = {
      type: "object",
      properties: { room: { type: "string" }, on: { type: "boolean" } },
      required: ["room", "on"],
      additionalProperties: false,
    };
    llm.enqueue({ reply: '{"room":"kitchen","on":true}', usage: { prompt_tokens: 321, completion_tokens: 12 } });
    const shaped = await client.chat.completions.parse({
      model: "homed",
      messages: [{ role: "user", content: "Which lamp is on?" }],
      response_format: { type: "json_schema", json_schema: { name: "lamp", strict: true, schema } },
    });
    assert.deepEqual(shaped.choices[0]!.message.parsed, { room: "kitchen", on: true });
    assert.deepEqual(llm.requests.at(-1)!.body.response_format, {
      type: "json_schema",
      json_schema: { name: "lamp", schema, strict: true },
    });
    assert.match(lastUser(), /reads your final answer as JSON following its schema "lamp"/);
    assert.deepEqual(shaped.usage, { prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 });
    const badSchema = await refusal(client.chat.completions.create({
      model: "homed",
      messages: [{ role: "user", content: "Which lamp is on?" }],
      response_format: { type: "json_schema", json_schema: { name: "lamp", schema: "an object" as never } },
    }));
    assert.equal(badSchema.status, 400);
    assert.equal(badSchema.param, "response_format.json_schema.schema");
    assert.match(badSchema.message, /must be a JSON Schema object, got "an object"/);

    // A streamed turn of two rounds (a tool, then the answer) with include_usage: the last chunk has the sum.
    llm.enqueue(
      {
        toolCalls: [{ name: "output_list_channels", arguments: {} }],
        usage: { prompt_tokens: 100, completion_tokens: 10 },
      },
      { reply: "You can reach me here and over the API.", usage: { prompt_tokens: 150, completion_tokens: 7 } },
    );
    const stream = await client.chat.completions.create({
      model: "homed",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Where can I reach you?" }],
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(
      chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join(""),
      "You can reach me here and over the API.",
    );
    assert.deepEqual(chunks.at(-1)!.choices, []);
    assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 250, completion_tokens: 17, total_tokens: 267 });
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, "stop");

    // An image part goes through the media pipeline: the vision model sees the bytes, the butler gets the words.
    const photo = samplePng(2_000);
    vision.enqueue({ description: "A red kettle on a stove." });
    llm.enqueue({ reply: "That is your kettle." });
    const seen = await client.chat.completions.create({
      model: "homed",
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${encodeBase64(photo)}` } },
        ],
      }],
    });
    assert.equal(seen.choices[0]!.message.content, "That is your kettle.");
    assert.deepEqual(vision.requests[0]!.images, [{ mime: "image/png", bytes: photo }]);
    assert.match(lastUser(), /What is this\?\n\[image: A red kettle on a stove\.\]$/);
    const notImage = await refusal(client.chat.completions.create({
      model: "homed",
      messages: [{
        role: "user",
        content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${btoa("just text")}` } }],
      }],
    }));
    assert.equal(notImage.status, 400);
    assert.equal(notImage.param, "messages[0].content[0].image_url.url");
    assert.match(
      notImage.message,
      /declared image\/png but its bytes are application\/octet-stream; send a PNG, JPEG, GIF or WebP image/,
    );

    // The client's tools on homed: refused, never dropped; so is a tool round trip and n: 2. No model was asked.
    const asked = llm.requests.length;
    const tools = await refusal(client.chat.completions.create({
      model: "homed",
      messages: [{ role: "user", content: "Turn on the kitchen light" }],
      tools: HA_TOOLS,
    }));
    assert.ok(tools instanceof OpenAI.BadRequestError);
    assert.equal(tools.param, "tools");
    assert.equal(tools.code, "unsupported_parameter");
    assert.match(tools.message, /homed runs its own tools .* model "homed-utility", which passes tools to the model/);
    const roundTrip = await refusal(client.chat.completions.create({
      model: "homed",
      messages: [
        { role: "user", content: "Turn on the kitchen light" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "HassTurnOn", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: "done" },
      ],
    }));
    assert.equal(roundTrip.param, "messages[1]");
    assert.match(roundTrip.message, /takes no tool results \(it would answer the last user message again\)/);
    const two = await refusal(client.chat.completions.create({
      model: "homed",
      n: 2,
      messages: [{ role: "user", content: "Two answers, please" }],
    }));
    assert.equal(two.status, 400);
    assert.equal(two.param, "n");
    assert.match(two.message, /Field "n" is 2: homed gives one answer per request/);
    assert.equal(llm.requests.length, asked, "no refused request reached the model");

    // homed-utility: Home Assistant's own prompt and tools go to the model as they are; its tool_calls come back,
    // and the tool's result goes on in the same conversation of the client's.
    const conversationBefore = await ownerGet(homed, "/api/conversation");
    await waitFor(async () => await memoryCandidates(homed) >= 6, "the three turns so far in the memory journal");
    const candidatesBefore = await memoryCandidates(homed);
    const ha: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "system", content: "You are a voice assistant for Home Assistant. Answer briefly." },
      { role: "user", content: "Turn on the kitchen light" },
    ];
    llm.enqueue({ toolCalls: [{ id: "call_ha_1", name: "HassTurnOn", arguments: { name: "kitchen light" } }] });
    const call = await client.chat.completions.create({ model: "homed-utility", messages: ha, tools: HA_TOOLS });
    assert.equal(call.model, "homed-utility");
    assert.equal(call.choices[0]!.finish_reason, "tool_calls");
    assert.deepEqual(call.choices[0]!.message.tool_calls, [
      { id: "call_ha_1", type: "function", function: { name: "HassTurnOn", arguments: '{"name":"kitchen light"}' } },
    ]);
    assert.deepEqual(llm.requests.at(-1)!.body.messages, ha, "the client's messages, nothing of homed's");
    assert.deepEqual(llm.requests.at(-1)!.body.tools, HA_TOOLS);
    assert.deepEqual(call.usage, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    ha.push(call.choices[0]!.message, { role: "tool", tool_call_id: "call_ha_1", content: '{"success": true}' });
    llm.enqueue({ reply: "The kitchen light is on.", chunks: 2 });
    const answer = await client.chat.completions.create({
      model: "homed-utility",
      messages: ha,
      tools: HA_TOOLS,
      stream: true,
    });
    let said = "";
    for await (const chunk of answer) said += chunk.choices[0]?.delta?.content ?? "";
    assert.equal(said, "The kitchen light is on.");
    assert.equal((llm.requests.at(-1)!.body.messages as Messages).at(-1)!.role, "tool");
    // Streamed tool calls come whole, then finish_reason tool_calls.
    llm.enqueue({ toolCalls: [{ id: "call_ha_2", name: "HassTurnOn", arguments: { name: "hall light" } }] });
    const streamedCall = await client.chat.completions.create({
      model: "homed-utility",
      messages: [ha[0]!, { role: "user", content: "And the hall light" }],
      tools: HA_TOOLS,
      stream: true,
    });
    const callChunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of streamedCall) callChunks.push(chunk);
    const delta = callChunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    assert.deepEqual(delta.map((call) => [call.id, call.function?.name, call.function?.arguments]), [
      ["call_ha_2", "HassTurnOn", '{"name":"hall light"}'],
    ]);
    assert.equal(callChunks.at(-1)!.choices[0]!.finish_reason, "tool_calls");

    // Open WebUI's title task sent to homed: answered by the plain model with the client's prompt alone.
    const title = "### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n" +
      '### Output:\nJSON format: { "title": "your concise title here" }\n### Chat History:\n<chat_history>\n' +
      "USER: Where is the tea?\nASSISTANT: Tea is in the left cupboard.\n</chat_history>";
    llm.enqueue({ reply: '{ "title": "🍵 Tea Location" }' });
    const titled = await client.chat.completions.create({
      model: "homed",
      messages: [{ role: "user", content: title }],
      stream: false,
    });
    assert.equal(titled.choices[0]!.message.content, '{ "title": "🍵 Tea Location" }');
    assert.deepEqual(llm.requests.at(-1)!.body.messages, [{ role: "user", content: title }]);
    for (const request of llm.requests.slice(-4)) {
      assert.ok(!JSON.stringify(request.body).includes(DEFAULT_PERSONA_TEXT.slice(0, 40)), "no persona");
      assert.equal(request.body.model, DEFAULT_CONTRACT.model, "the configured model");
    }
    // None of it entered the conversation or memory.
    assert.deepEqual(await ownerGet(homed, "/api/conversation"), conversationBefore);
    llm.enqueue({ reply: "Still here." });
    await client.chat.completions.create({ model: "homed", messages: [{ role: "user", content: "Are you there?" }] });
    await waitFor(async () => await memoryCandidates(homed) >= candidatesBefore + 2, "the next turn in the journal");
    assert.equal(await memoryCandidates(homed), candidatesBefore + 2, "only the turn was journaled, no utility call");
    const status = await ownerGet(homed, "/api/status") as { services: Record<string, Record<string, unknown>> };
    assert.equal(status.services.agent!.stateless_calls, 4);

    // A guest may not use the plain model, by name or by a task prompt.
    const guest = new OpenAI({ apiKey: GUEST, baseURL: `${homed.url}/v1`, maxRetries: 0 });
    const byName = await refusal(guest.chat.completions.create({ model: "homed-utility", messages: ha.slice(0, 2) }));
    assert.ok(byName instanceof OpenAI.PermissionDeniedError);
    assert.equal(byName.param, "model");
    assert.match(byName.message, /household members and the owner only/);
    const byTask = await refusal(
      guest.chat.completions.create({ model: "homed", messages: [{ role: "user", content: title }] }),
    );
    assert.equal(byTask.status, 403);
    assert.equal(byTask.param, "messages");
  } finally {
    await teardown(
      async () => assert.equal(await homed.stop(), 0, homed.stderr()),
      () => llm.close(),
      () => vision.close(),
    );
  }
});
