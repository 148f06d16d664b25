/**
 * The OpenAI-compatible door's cost per request: a real homed (a child process with its computed flags) and the fake
 * LLM; 200 non-streamed `POST /v1/chat/completions` and 200 `POST /api/chat` (the anchor), interleaved one by one after
 * 20 warm-up each, the same short message and the same scripted answer. What differs is the door itself: reading an
 * OpenAI body, taking its last user message, the `openai` channel, the OpenAI-shaped answer.
 *
 * Run: `deno task bench:door` (writes bench/out/openai_door/results.json; `--record`: bench/openai_door/results.json).
 *
 * @module
 */

import { DEFAULT_CONTRACT, TEST_KEY } from "../../tests/support/contract.ts";
import { FakeLlm } from "../../tests/support/fake_llm.ts";
import { startHomed, workspace } from "../../tests/support/homed_process.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const RUNS = 200;
const WARM_UP = 20;
const TOKEN = "bench-owner-token-0123456789";

const llm = FakeLlm.start(DEFAULT_CONTRACT);
const homed = await startHomed(
  await workspace({
    llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
    onebot: { enabled: false },
    daemon: { openai_api: true, api_token: TOKEN },
  }),
);
const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const door = async () => {
  const response = await fetch(`${homed.url}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({ model: "homed", messages: [{ role: "user", content: "ping" }] }),
  });
  if (!response.ok) throw new Error(`the door answered ${response.status}: ${await response.text()}`);
  await response.json();
};
const api = async () => {
  const response = await fetch(`${homed.url}/api/chat`, {
    method: "POST",
    headers,
    body: JSON.stringify({ text: "ping" }),
  });
  if (!response.ok) throw new Error(`/api/chat answered ${response.status}: ${await response.text()}`);
  await response.json();
};

const times = { door: [] as number[], api: [] as number[] };
for (let i = 0; i < WARM_UP + RUNS; i++) {
  for (const [name, call] of [["door", door], ["api", api]] as const) {
    llm.enqueue({ reply: "pong" });
    const started = performance.now();
    await call();
    if (i >= WARM_UP) times[name].push(performance.now() - started);
  }
}
await homed.stop();
await llm.close();

const round = (ms: number) => Math.round(ms * 1_000) / 1_000;
const rows = {
  "OpenAI door: POST /v1/chat/completions": {
    p50_ms: round(percentile(times.door, 50)),
    p99_ms: round(percentile(times.door, 99)),
    n: RUNS,
  },
  "anchor: POST /api/chat": {
    p50_ms: round(percentile(times.api, 50)),
    p99_ms: round(percentile(times.api, 99)),
    n: RUNS,
  },
};
const env = await environment();
await writeResults(new URL("./results.json", import.meta.url), { ...env, rows });
console.log(`OpenAI-compatible door (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
