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
 * - Pattern work and the time limit (issue 18, point 7), before and after: the VM of commit 3168b43 (`git show`, loaded
 *   from the untracked bench/out/) against this one, interleaved. The hostile `string.find(string.rep("a", 480),
 *   ".-.-.-b")` under a 1 s limit — how long the call took, what it returned, and the longest the event loop went
 *   without running a 5 ms interval meanwhile; the adapter call above; ordinary pattern calls (`gsub("%s+", " ")`,
 *   `gmatch("%a+")`, a plain `find` of a 40-byte needle over ≈ 64 KiB, 200 short anchored `match`es) — p50s.
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

// Pattern work and the time limit: the VM before issue 18's step checks (from git) against this one, interleaved.
const PRE_FIX = "3168b43";
/** The LuaVm class of `src/lua/vm.ts` at commit PRE_FIX, or undefined without that history. */
async function preFixVm(): Promise<typeof LuaVm | undefined> {
  const shown = await new Deno.Command("git", {
    args: ["show", `${PRE_FIX}:src/lua/vm.ts`],
    stdout: "piped",
    stderr: "null",
  }).output().catch(() => undefined);
  if (!shown?.success) return undefined;
  // Beside the committed sources' relative imports, under the untracked bench/out/, and gone once loaded.
  const url = new URL("../out/lua/pre_fix_vm.ts", import.meta.url);
  await Deno.mkdir(new URL(".", url), { recursive: true });
  await Deno.writeTextFile(
    url,
    new TextDecoder().decode(shown.stdout).replaceAll('from "./', 'from "../../../src/lua'),
  );
  try {
    return (await import(url.href)).LuaVm;
  } finally {
    await Deno.remove(url);
  }
}
const PATTERNS = `
  function hostile() return tostring(string.find(string.rep("a", 480), ".-.-.-b")) end
  local text = string.rep("The kitchen lamp is on;  the heating\\tis at 21 degrees.\\n", 1200)
  local w = {
    squeeze = function() return #(text:gsub("%s+", " ")) end,
    words = function() local n = 0 for _ in text:gmatch("%a+") do n = n + 1 end return n end,
    needle = function() return tostring(text:find("the heating is at 22 degrees in the hall", 1, true)) end,
    keys = function()
      local n = 0
      for i = 1, 200 do if ("key_" .. i):match("^(%a+)_(%d+)$") then n = n + 1 end end
      return n
    end,
  }
  function repeated(name, n) for _ = 1, n do w[name]() end return n end
`;
const Before = await preFixVm();
const versions = [["after", LuaVm], ...(Before ? [["before", Before] as const] : [])] as const;
const vms = await Promise.all(versions.map(async ([version, Vm]) => ({
  version,
  patterns: await Vm.open({ name: "patterns.lua", source: PATTERNS, limits: LIMITS, logger }),
  adapter: await Vm.open({ name: "ollama.lua", source: ollamaSource, limits: LIMITS, grants: { json: true }, logger }),
})));
const comparison: Record<string, Record<string, number>> = {};
const compare = async (label: string, rounds: number, run: (vm: (typeof vms)[number]) => Promise<unknown>) => {
  const times: Record<string, number[]> = {};
  for (let i = 0; i < rounds + rounds / 10; i++) {
    for (const vm of vms) {
      const started = performance.now();
      await run(vm);
      if (i >= rounds / 10) (times[vm.version] ??= []).push(performance.now() - started);
    }
  }
  comparison[label] = Object.fromEntries(
    Object.entries(times).map(([version, list]) => [`${version}_p50_ms`, round(percentile(list, 50))]),
  );
};
await compare("ollama.lua build_request + parse_response", 500, async ({ adapter }) => {
  await adapter.call("build_request", request(false));
  await adapter.call("parse_response", 200, answers.ollama);
});
for (
  const [name, label] of [
    ["squeeze", 'gsub("%s+", " ") over 64 KiB'],
    ["words", 'gmatch("%a+") over 64 KiB'],
    ["needle", "plain find of 40 bytes over 64 KiB"],
    ["keys", '200 short match("^(%a+)_(%d+)$")'],
  ]
) await compare(label!, 100, ({ patterns }) => patterns.call("repeated", name!, 1));
const hostile: Record<string, Record<string, unknown>> = {};
for (const { version, patterns } of vms) {
  let last = performance.now();
  let gap = 0;
  const interval = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  let outcome: string;
  try {
    outcome = `returned ${await patterns.call("hostile")}`;
  } catch (error) {
    outcome = (error as Error).message;
  }
  const callMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 20));
  clearInterval(interval);
  hostile[version] = { outcome, call_ms: round(callMs), event_loop_longest_gap_ms: round(gap) };
}
for (const { patterns, adapter } of vms) {
  patterns.close();
  adapter.close();
}

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
  issue18: {
    before: Before ? `src/lua/vm.ts at ${PRE_FIX}` : "not measured (no git history)",
    hostile_call: 'string.find(string.rep("a", 480), ".-.-.-b") under lua.time_limit 1 s',
    hostile,
    p50_per_call: comparison,
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
console.table(hostile);
console.table(comparison);
console.table({ "Worker option": results.worker_option });
