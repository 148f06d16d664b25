/**
 * `deno task bench:lua` (issue 10): what the LuaAdapter costs.
 *
 * - VM start: the first `LuaVm.open` of a process (compiles glue.wasm) and the next ones (a fresh sandboxed state
 *   with the json library, running the adapter's chunk), over 50 opens.
 * - Adapter overhead per request: `build_request` + `parse_response` of the shipped Ollama and Anthropic adapters for
 *   a realistic turn (a 2,400-character persona, 24 context messages with a finished tool round, 10 tools; an answer
 *   with text and a tool call), 500 times after 50 warm-up calls; and `stream_event` per streamed piece. Anchor in
 *   the same run: the same request and answer through plain JS (`JSON.stringify` of the request body plus
 *   `JSON.parse` of the answer) — what the OpenAI-compatible provider does per request.
 *
 * Run: deno task bench:lua (writes bench/out/lua/results.json; --record: bench/lua/results.json).
 */

import { getLogger } from "@logtape/logtape";
import { LuaVm } from "../../src/lua/vm.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const LIMITS = { timeMs: 1_000, memoryBytes: 16 * 1024 * 1024 };
const logger = getLogger(["bench", "lua"]);
const round = (x: number) => Math.round(x * 1000) / 1000;
const source = (name: string) => Deno.readTextFile(new URL(`../../config/adapters/${name}.lua`, import.meta.url));

// VM start.
const opens: number[] = [];
const ollamaSource = await source("ollama");
for (let i = 0; i < 51; i++) {
  const started = performance.now();
  const vm = await LuaVm.open({
    name: "ollama.lua",
    source: ollamaSource,
    limits: LIMITS,
    grants: { json: true },
    logger,
  });
  opens.push(performance.now() - started);
  vm.close();
}

// A realistic turn.
const tools = Array.from({ length: 10 }, (_, i) => ({
  name: `tool_${i}`,
  description: `Does thing number ${i} in the house, with a description as long as real ones are.`,
  parameters: {
    type: "object",
    properties: { room: { type: "string", description: "Which room" }, level: { type: "integer", minimum: 0 } },
    required: ["room"],
    additionalProperties: false,
  },
}));
const messages: Array<Record<string, unknown>> = [{
  role: "system",
  content: "# Persona\n" + "管家 butler ".repeat(200),
}];
for (let i = 0; i < 10; i++) {
  messages.push({ role: "user", content: `[via http, from owner, trust owner] Message ${i}: is the kitchen lamp on?` });
  messages.push({
    role: "assistant",
    content: `Reply ${i}: yes, the kitchen lamp is on and the heating is at 21 degrees.`,
  });
}
messages.push({
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_1", type: "function", function: { name: "tool_1", arguments: '{"room":"kitchen"}' } }],
});
messages.push({ role: "tool", tool_call_id: "call_1", content: "kitchen: lamp on, 21 °C" });
messages.push({ role: "user", content: "And the hall?" });
const request = (stream: boolean) =>
  JSON.stringify({
    model: "m",
    base_url: "http://127.0.0.1:9",
    api_key: "sk-bench-0123456789",
    temperature: 0.7,
    max_tokens: 4096,
    stream,
    messages,
    tools,
  });
const answers = {
  ollama: JSON.stringify({
    model: "m",
    message: {
      role: "assistant",
      content: "Checking the hall for you.",
      tool_calls: [{ id: "call_x", function: { name: "tool_2", arguments: { room: "hall" } } }],
    },
    done: true,
    done_reason: "stop",
    prompt_eval_count: 900,
    eval_count: 30,
  }),
  anthropic: JSON.stringify({
    id: "msg_1",
    type: "message",
    role: "assistant",
    content: [{ type: "text", text: "Checking the hall for you." }, {
      type: "tool_use",
      id: "toolu_1",
      name: "tool_2",
      input: { room: "hall" },
    }],
    stop_reason: "tool_use",
    usage: { input_tokens: 900, output_tokens: 30 },
  }),
};
const events = {
  ollama: ["", JSON.stringify({ message: { role: "assistant", content: "The hall " }, done: false })],
  anthropic: [
    "content_block_delta",
    JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "The hall " } }),
  ],
};

const rows: Record<string, Record<string, number>> = {};
for (const name of ["ollama", "anthropic"] as const) {
  const vm = await LuaVm.open({
    name: `${name}.lua`,
    source: await source(name),
    limits: LIMITS,
    grants: { json: true },
    logger,
  });
  const times: number[] = [];
  const eventTimes: number[] = [];
  for (let i = 0; i < 550; i++) {
    const started = performance.now();
    await vm.call("build_request", request(false));
    await vm.call("parse_response", 200, answers[name]);
    if (i >= 50) times.push(performance.now() - started);
  }
  // Streaming: one event per piece; a stream is opened by its first event and closed by stream_end.
  await vm.call(
    "stream_event",
    "bench",
    "",
    name === "ollama" ? events.ollama[1]! : JSON.stringify({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
  );
  for (let i = 0; i < 550; i++) {
    const started = performance.now();
    await vm.call("stream_event", "bench", events[name][0]!, events[name][1]!);
    if (i >= 50) eventTimes.push(performance.now() - started);
  }
  vm.close();
  rows[`${name}.lua build_request + parse_response`] = {
    p50_ms: round(percentile(times, 50)),
    p99_ms: round(percentile(times, 99)),
  };
  rows[`${name}.lua stream_event`] = {
    p50_ms: round(percentile(eventTimes, 50)),
    p99_ms: round(percentile(eventTimes, 99)),
  };
}
const anchor: number[] = [];
for (let i = 0; i < 550; i++) {
  const started = performance.now();
  JSON.stringify({ model: "m", messages, tools, temperature: 0.7, max_tokens: 4096 });
  JSON.parse(answers.ollama);
  if (i >= 50) anchor.push(performance.now() - started);
}
rows["anchor: JS JSON.stringify + JSON.parse of the same"] = {
  p50_ms: round(percentile(anchor, 50)),
  p99_ms: round(percentile(anchor, 99)),
};

const env = await environment();
const results = {
  ...env,
  request_bytes: request(false).length,
  vm_start: {
    first_ms: round(opens[0]!),
    next_p50_ms: round(percentile(opens.slice(1), 50)),
    next_p99_ms: round(percentile(opens.slice(1), 99)),
  },
  rows,
};
await writeResults(new URL("./results.json", import.meta.url), results);
console.log(
  `Lua adapters (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu}); request ${results.request_bytes} bytes`,
);
console.table({ "VM start": results.vm_start });
console.table(rows);
