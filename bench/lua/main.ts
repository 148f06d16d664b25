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
 * - Pattern work and the time limit (issue 18, point 7): the hostile `string.find(string.rep("a", 480), ".-.-.-b")`
 *   under a 1 s limit — how long the call took, what it returned, and the longest the event loop went without running
 *   a 5 ms interval meanwhile; and ordinary pattern calls over ≈ 64 KiB of text (`gsub("%s+", " ")`, `gmatch("%a+")`,
 *   a plain `find` of a 40-byte needle), 200 times after 20 warm-up calls, for what bounding the matcher costs.
 * - The Worker option, measured and not taken: a worker's start with a wasmoon engine in it, one structured-clone round
 *   trip of the request above, and the CPU a busy worker still burns in the second after `terminate()`.
 *
 * Run: deno task bench:lua (writes bench/out/lua/results.json; --record: bench/lua/results.json).
 */

import process from "node:process";
import { getLogger } from "@logtape/logtape";
import { LuaVm } from "../../src/lua/vm.ts";
import { luaWasmPath } from "../../src/lua/wasm_path.ts";
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

// Pattern work and the time limit.
const patterns = await LuaVm.open({
  name: "patterns.lua",
  source: `
    function hostile() return tostring(string.find(string.rep("a", 480), ".-.-.-b")) end
    local text = string.rep("The kitchen lamp is on;  the heating\\tis at 21 degrees.\\n", 1200)
    function squeeze() return #(text:gsub("%s+", " ")) end
    function words() local n = 0 for _ in text:gmatch("%a+") do n = n + 1 end return n end
    function needle() return tostring(text:find("the heating is at 22 degrees in the hall", 1, true)) end
  `,
  limits: LIMITS,
  logger,
});
let last = performance.now();
let gap = 0;
const interval = setInterval(() => {
  const now = performance.now();
  gap = Math.max(gap, now - last);
  last = now;
}, 5);
const hostileStarted = performance.now();
let outcome: string;
try {
  outcome = `returned ${await patterns.call("hostile")}`;
} catch (error) {
  outcome = (error as Error).message;
}
const hostileMs = performance.now() - hostileStarted;
await new Promise((resolve) => setTimeout(resolve, 20));
clearInterval(interval);
const patternRows: Record<string, Record<string, number>> = {};
for (const [name, label] of [["squeeze", 'gsub("%s+", " ")'], ["words", 'gmatch("%a+")'], ["needle", "plain find"]]) {
  const times: number[] = [];
  for (let i = 0; i < 220; i++) {
    const started = performance.now();
    await patterns.call(name!);
    if (i >= 20) times.push(performance.now() - started);
  }
  patternRows[`${label} over 64 KiB`] = { p50_ms: round(percentile(times, 50)), p99_ms: round(percentile(times, 99)) };
}
patterns.close();

// The Worker option: start, one round trip, and what terminate() leaves running.
const workerStarts: number[] = [];
const crossings: number[] = [];
const probe = () => {
  const worker = new Worker(new URL("./worker_probe.ts", import.meta.url), { type: "module" });
  const ask = (message: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      worker.onmessage = (event) => resolve(event.data);
      worker.postMessage(message);
    });
  return { worker, ask };
};
for (let i = 0; i < 6; i++) {
  const started = performance.now();
  const { worker, ask } = probe();
  await ask({ open: luaWasmPath() });
  workerStarts.push(performance.now() - started);
  if (i === 0) {
    for (let j = 0; j < 550; j++) {
      const sent = performance.now();
      await ask({ echo: request(false) });
      if (j >= 50) crossings.push(performance.now() - sent);
    }
  }
  worker.terminate();
}
const busy = probe();
busy.worker.postMessage({ spin: 2_500 });
await new Promise((resolve) => setTimeout(resolve, 300));
busy.worker.terminate();
const cpuBefore = process.cpuUsage();
await new Promise((resolve) => setTimeout(resolve, 1_000));
const cpuAfter = process.cpuUsage(cpuBefore);

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
  patterns: {
    hostile: {
      call: 'string.find(string.rep("a", 480), ".-.-.-b") under lua.time_limit 1 s',
      outcome,
      call_ms: round(hostileMs),
      event_loop_longest_gap_ms: round(gap),
    },
    rows: patternRows,
  },
  worker_option: {
    start_p50_ms: round(percentile(workerStarts.slice(1), 50)),
    start_first_ms: round(workerStarts[0]!),
    round_trip_p50_ms: round(percentile(crossings, 50)),
    round_trip_p99_ms: round(percentile(crossings, 99)),
    cpu_ms_in_the_second_after_terminate: round((cpuAfter.user + cpuAfter.system) / 1000),
  },
};
await writeResults(new URL("./results.json", import.meta.url), results);
console.log(
  `Lua adapters (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu}); request ${results.request_bytes} bytes`,
);
console.table({ "VM start": results.vm_start });
console.table(rows);
console.table({ "hostile pattern": results.patterns.hostile });
console.table(patternRows);
console.table({ "Worker option": results.worker_option });
