/**
 * Per-turn overhead of homed: from the InputEvent enqueued at the HTTP device to the reply handed back to it (the
 * turn's done event, which is how a request/response channel gets its reply), minus the time the (fake, loopback)
 * LLM server spent on the turn's requests.
 *
 * Setup as the issue asks: a full 30-entry context (warm-up first), every tool registered, one turn in five with
 * a tool round, 1,000 measured turns. The anchor, measured in the same run, is the bare provider call (over loopback
 * to the same fake, server time subtracted): what one LLM round costs with no agent around it. Then the same turns
 * on a daemon with a long past (issue 9): 100,000 memory documents and 50,000 graph entities loaded, 500 turns.
 *
 * The fake LLM runs in a Worker (its own thread and heap), as a remote server would: its work and its garbage
 * collection are not homed's overhead. Its server time per request is still subtracted.
 *
 * Second part, prompt-prefix reuse: a fresh homed holds a 50-turn conversation (one turn in five with a tool round)
 * against the same fake; for every request after the first, the share of its serialized prompt (tool declarations,
 * then the messages) that is a byte-identical prefix of the previous request's — what a provider's prefix cache
 * (DeepSeek bills hits several times cheaper) can reuse. Target ≥ 0.8 in steady state.
 *
 * Run: deno task bench:turn (writes bench/out/turn_overhead/results.json; with --record, the committed
 * bench/turn_overhead/results.json).
 */

import { getHeapSpaceStatistics } from "node:v8";
import { getLogger } from "@logtape/logtape";
import { OpenAIProvider } from "../../src/provider/openai_provider.ts";
import { systemClock } from "../../src/clock.ts";
import { DAEMON_V8_FLAGS } from "../../src/rights/command_flags.ts";
import { parseConfig } from "../../src/config/load.ts";
import { startDaemon } from "../../src/daemon.ts";
import { RemoteFakeLlm } from "../support/remote_fake_llm.ts";
import { seedMemory } from "../support/seed_memory.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const TURNS = 1000;
const PAST_TURNS = 500;
const WARMUP = 60;
const KEY = "sk-bench-000000000000";
const OWNER = { name: "owner", trust: "owner" } as const;

const fake = await RemoteFakeLlm.start();

/**
 * A daemon on its own temp folder with the starter knowledge, so every turn's knowledge lookup does real work; with
 * `past`, its memory first holds that many documents and entities, and the daemon is returned once they are loaded.
 */
async function benchDaemon(past?: { documents: number; entities: number }) {
  const dataDir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-bench-" });
  const seeded = past ? await seedMemory(`${dataDir}/memory`, past) : undefined;
  for (const topic of ["smart_home", "cooking"]) {
    await Deno.mkdir(`${dataDir}/knowledge/${topic}`, { recursive: true });
    await Deno.copyFile(
      new URL(`../../knowledge/${topic}/content.md`, import.meta.url),
      `${dataDir}/knowledge/${topic}/content.md`,
    );
  }
  const loaded = parseConfig({
    text: JSON.stringify({
      daemon: { listen_addr: "127.0.0.1:0", data_dir: dataDir },
      llm: { base_url: fake.baseUrl, api_key: KEY, max_retries: 0 },
      paths: { personal: new URL("../../personal.md", import.meta.url).pathname, knowledge: `${dataDir}/knowledge` },
    }),
    location: { path: `${dataDir}/homed.yaml`, origin: "--config" },
    readEnv: () => undefined,
    cwd: dataDir,
  });
  const daemon = await startDaemon(loaded);
  while (seeded && daemon.services.status().memory?.stores !== "open") {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { daemon, dataDir, loaded, seeded };
}

let { daemon, dataDir, loaded } = await benchDaemon();

async function script(turn: number): Promise<void> {
  const text = `Reply ${turn}: the living room lamp is on and the heating is set to 21 degrees.`;
  if (turn % 5 === 0) {
    await fake.enqueue({ toolCalls: [{ name: "output_list_channels", arguments: {} }] }, { reply: text, chunks: 4 });
  } else {
    await fake.enqueue({ reply: text, chunks: 4 });
  }
}

async function turn(n: number): Promise<{ overhead: number; tool: boolean }> {
  await script(n);
  const start = performance.now();
  // The HTTP device gets its reply inline, in the turn's done event: that hand-over is the end of the turn.
  const { done } = daemon.http.submit({ text: `Message ${n}: how is the house? 客厅的灯开着吗？`, identity: OWNER });
  const result = await done;
  const end = performance.now();
  if (result.error) throw new Error(`turn ${n} failed: ${result.error.message}`);
  const server = (await fake.drain()).reduce((sum, ms) => sum + ms, 0);
  return { overhead: end - start - server, tool: n % 5 === 0 };
}

for (let n = 0; n < WARMUP; n++) await turn(n);
const contextEntries = daemon.agent.contextEntries;
const samples: number[] = [];
const toolSamples: number[] = [];
for (let n = WARMUP; n < WARMUP + TURNS; n++) {
  const { overhead, tool } = await turn(n);
  samples.push(overhead);
  if (tool) toolSamples.push(overhead);
}
const tools = daemon.tools.specs().length;
// Shows which young-generation size was in force (the daemon's --max-semi-space-size=1 caps it near 2 MiB).
const newSpaceKb = Math.round(
  (getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0) / 1024,
);
await daemon.stop();

// Anchor: one bare provider round trip to the same fake, server time subtracted.
const provider = new OpenAIProvider({
  model: loaded.config.llm.model,
  baseUrl: fake.baseUrl,
  apiKey: KEY,
  temperature: 0.7,
  maxTokens: 4096,
  thinking: false,
  timeoutMs: 10_000,
  maxRetries: 0,
  clock: systemClock,
  random: Math.random,
  logger: getLogger(["bench"]),
  missingKeyHint: "",
});
const anchor: number[] = [];
for (let n = 0; n < 300; n++) {
  await fake.enqueue({ reply: `Reply ${n}: the living room lamp is on.`, chunks: 4 });
  const start = performance.now();
  await provider.chat({ messages: [{ role: "system", content: "p" }, { role: "user", content: "hi" }] });
  const end = performance.now();
  const server = (await fake.drain()).reduce((sum, ms) => sum + ms, 0);
  if (n >= 50) anchor.push(end - start - server);
}
await Deno.remove(dataDir, { recursive: true });

// The same turns with a long past: 100k memory documents and 50k graph entities loaded (every turn searches them for
// its reference block, and exchanges leaving the context become documents).
const PAST = { documents: 100_000, entities: 50_000 };
let seeded;
({ daemon, dataDir, loaded, seeded } = await benchDaemon(PAST));
await fake.drain();
for (let n = 0; n < WARMUP; n++) await turn(n);
const pastSamples: number[] = [];
for (let n = WARMUP; n < WARMUP + PAST_TURNS; n++) pastSamples.push((await turn(n)).overhead);
const pastMemory = daemon.services.status().memory ?? {};
await daemon.stop();
await Deno.remove(dataDir, { recursive: true });

// Prompt-prefix reuse over a 50-turn conversation on a fresh daemon.
({ daemon, dataDir, loaded } = await benchDaemon());
await fake.drain();
const PREFIX_TURNS = 50;
const prompts: string[] = [];
const turnOfRequest: number[] = [];
for (let n = 0; n < PREFIX_TURNS; n++) {
  await script(n);
  const { done } = daemon.http.submit({ text: `Message ${n}: 客厅的灯开着吗？ Is the heating on?`, identity: OWNER });
  const result = await done;
  if (result.error) throw new Error(`prefix turn ${n} failed: ${result.error.message}`);
  for (const prompt of (await fake.drainRequests()).prompts) {
    prompts.push(prompt);
    turnOfRequest.push(n);
  }
}
const prefixContextEntries = daemon.agent.contextEntries;
await daemon.stop();
await Deno.remove(dataDir, { recursive: true });
await fake.close();

function sharedPrefix(a: string, b: string): number {
  const limit = Math.min(a.length, b.length);
  let i = 0;
  while (i < limit && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
const shares = prompts.slice(1).map((prompt, i) => sharedPrefix(prompts[i]!, prompt) / prompt.length);
// Steady state: from the tenth turn on (the context has grown past its first few exchanges).
const steady = shares.filter((_, i) => turnOfRequest[i + 1]! >= 10);
const mean = (values: number[]) => values.reduce((sum, x) => sum + x, 0) / values.length;

const env = await environment();
const round = (x: number) => Math.round(x * 1000) / 1000;
const results = {
  p50_ms: round(percentile(samples, 50)),
  p99_ms: round(percentile(samples, 99)),
  turns: samples.length,
  commit: env.commit,
  deno: env.deno,
  cpu: env.cpu,
  tool_turn_p99_ms: round(percentile(toolSamples, 99)),
  max_ms: round(Math.max(...samples)),
  context_entries: contextEntries,
  tools_registered: tools,
  anchor_provider_round_trip_p50_ms: round(percentile(anchor, 50)),
  anchor_provider_round_trip_p99_ms: round(percentile(anchor, 99)),
  target_p99_ms: 5,
  prefix_reuse_turns: PREFIX_TURNS,
  prefix_reuse_requests: prompts.length,
  prefix_reuse_mean_steady: round(mean(steady)),
  prefix_reuse_median_steady: round(percentile(steady, 50)),
  prefix_reuse_min_steady: round(Math.min(...steady)),
  prefix_reuse_mean_all: round(mean(shares)),
  prefix_reuse_target: 0.8,
  prefix_reuse_context_entries: prefixContextEntries,
  with_past: {
    documents: pastMemory.documents,
    entities: pastMemory.entities,
    seeded_in_ms: seeded?.ms,
    turns: pastSamples.length,
    p50_ms: round(percentile(pastSamples, 50)),
    p99_ms: round(percentile(pastSamples, 99)),
    max_ms: round(Math.max(...pastSamples)),
    target_p99_ms: 20,
  },
  daemon_v8_flags: DAEMON_V8_FLAGS,
  new_space_kb: newSpaceKb,
};
await writeResults(new URL("./results.json", import.meta.url), results);
console.log(`homed turn overhead (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table({
  "turn overhead (all)": { p50_ms: results.p50_ms, p99_ms: results.p99_ms, n: samples.length },
  "turn overhead (tool turns)": {
    p50_ms: round(percentile(toolSamples, 50)),
    p99_ms: results.tool_turn_p99_ms,
    n: toolSamples.length,
  },
  "with 100k documents + 50k entities": {
    p50_ms: results.with_past.p50_ms,
    p99_ms: results.with_past.p99_ms,
    n: pastSamples.length,
  },
  "anchor: bare provider call": {
    p50_ms: results.anchor_provider_round_trip_p50_ms,
    p99_ms: results.anchor_provider_round_trip_p99_ms,
    n: anchor.length,
  },
});
console.table({
  "prompt prefix reuse (steady state, turns 10–49)": {
    mean: results.prefix_reuse_mean_steady,
    median: results.prefix_reuse_median_steady,
    min: results.prefix_reuse_min_steady,
    n: steady.length,
  },
  "prompt prefix reuse (all requests)": { mean: results.prefix_reuse_mean_all, n: shares.length },
});
console.log(
  `context entries ${contextEntries}, tools ${tools}; target p99 < 5 ms: ${results.p99_ms < 5 ? "met" : "NOT met"}; ` +
    `prefix reuse ≥ 0.8: ${results.prefix_reuse_mean_steady >= 0.8 ? "met" : "NOT met"}`,
);
