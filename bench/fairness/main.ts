/**
 * Fairness: how long the owner's message waits behind one household member's burst of 300 chats (each a turn whose
 * LLM call takes `TURN_MS`), through a real homed over loopback. The input queue serves the owner first and other
 * senders in turn, so the owner's reply should come after at most the turn in flight plus its own: ≤ 2 turns. Anchor
 * in the same run: the owner's message on an idle homed (one turn). Also shown: when the member's last reply came.
 *
 * Run: deno task bench:fairness (writes bench/out/fairness/results.json; --record: bench/fairness/results.json).
 */

import { TEST_KEY } from "../../tests/support/contract.ts";
import { FakeLlm } from "../../tests/support/fake_llm.ts";
import { startHomed, workspace } from "../../tests/support/homed_process.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { environment, writeResults } from "../support/report.ts";

const TURN_MS = 40;
const BURST = 300;
const OWNER = "owner-token-0123456789";
const ALICE = "alice-token-0123456789";

function chat(url: string, token: string, text: string): Promise<number> {
  const started = performance.now();
  return fetch(`${url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ text }),
  }).then(async (response) => {
    await response.body?.cancel();
    if (response.status !== 200) throw new Error(`chat answered ${response.status}`);
    return performance.now() - started;
  });
}

async function queued(url: string): Promise<number> {
  const status = await (await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${OWNER}` } })).json();
  return Number(/"queued_inputs":(\d+)/.exec(JSON.stringify(status))?.[1] ?? -1);
}

const fake = FakeLlm.start({ apiKey: TEST_KEY });
for (let i = 0; i < BURST + 2; i++) fake.enqueue({ reply: `answer ${i}`, delayMs: TURN_MS });
const ws = await workspace({
  llm: { base_url: fake.baseUrl, api_key: TEST_KEY, max_retries: 0 },
  onebot: { enabled: false },
  io: { max_waiting_per_sender: BURST },
  daemon: { api_token: OWNER, api_tokens: { alice: { token: ALICE, trust: "household" } } },
});
const homed = await startHomed(ws);
let results: Record<string, number>;
try {
  const idle = await chat(homed.url, OWNER, "owner: what time is it?");
  const burstStarted = performance.now();
  const burst = Array.from({ length: BURST }, (_, i) => chat(homed.url, ALICE, `alice ${i}`));
  await waitFor(async () => (await queued(homed.url)) >= BURST - 2, "the member's burst queued", { limitMs: 30_000 });
  const behind = await chat(homed.url, OWNER, "owner: lights off");
  await Promise.all(burst);
  const burstMs = performance.now() - burstStarted;
  results = {
    turn_ms: TURN_MS,
    burst: BURST,
    "anchor: owner's reply, idle (ms)": Math.round(idle),
    "owner's reply behind the burst (ms)": Math.round(behind),
    "owner's reply behind the burst (turns)": Math.round((behind / idle) * 100) / 100,
    "member's last reply after the burst began (ms)": Math.round(burstMs),
  };
} finally {
  await homed.stop();
  await fake.close();
}
const env = await environment();
await writeResults(new URL("./results.json", import.meta.url), { ...env, results });
console.log(`fairness: the owner behind a member's burst (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(results);
console.log(
  `goal: the owner's reply waits at most the turn in flight (≤ 2 turns): ${
    results["owner's reply behind the burst (turns)"]! <= 2 ? "met" : "NOT met"
  }`,
);
