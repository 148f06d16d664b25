/**
 * The HTTP listener's cost: homed's `node:http` listener (`src/net/http_listener.ts`, which it needs for the raw
 * connection of the OneBot reverse WebSocket) against `Deno.serve` (the anchor, in the same run), both serving the
 * same hono app in a child process of their own. Per server: latency of 2,000 sequential small GETs, 500 JSON POSTs
 * of 4 KB and 100 SSE streams of 100 messages (p50 / p99, ms, keep-alive client), and the child's RSS (under the
 * daemon's V8 flags) idle after start, after that load, and after the same load again (growth there would be a leak).
 *
 * Run: deno task bench:http (writes bench/out/http/results.json; --record: bench/http/results.json).
 */

import { DAEMON_V8_FLAGS } from "../../src/rights/command_flags.ts";
import { environment, percentile, rssMb, writeResults } from "../support/report.ts";

async function timed(count: number, once: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await once();
    times.push(performance.now() - started);
  }
  const round = (ms: number) => Math.round(ms * 1_000) / 1_000;
  return { p50: round(percentile(times, 50)), p99: round(percentile(times, 99)) };
}

async function measure(kind: "deno" | "homed") {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      DAEMON_V8_FLAGS,
      "--no-prompt",
      "--allow-net=127.0.0.1",
      "--allow-read=.",
      "bench/http/server.ts",
      "--kind",
      kind,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let printed = "";
  while (!printed.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the ${kind} server exited before it printed its port`);
    printed += value;
  }
  const base = `http://127.0.0.1:${Number(printed.trim())}`;
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const idle = await rssMb(child.pid);
  const body = JSON.stringify({ text: "x".repeat(4_000) });
  const load = async () => ({
    get: await timed(2_000, async () => void await (await fetch(`${base}/healthz`)).text()),
    post: await timed(500, async () => {
      const headers = { "content-type": "application/json" };
      await (await fetch(`${base}/api/chat`, { method: "POST", headers, body })).text();
    }),
    sse: await timed(100, async () => void await (await fetch(`${base}/api/events`)).text()),
  });
  const { get, post, sse } = await load();
  const loaded = await rssMb(child.pid);
  await load();
  const again = await rssMb(child.pid);
  child.kill("SIGTERM");
  await child.status;
  await reader.cancel();
  return {
    get_p50_ms: get.p50,
    get_p99_ms: get.p99,
    post_4kb_p50_ms: post.p50,
    post_4kb_p99_ms: post.p99,
    sse_100_p50_ms: sse.p50,
    idle_rss_mb: idle,
    rss_after_load_mb: loaded,
    rss_after_twice_mb: again,
  };
}

const rows = {
  "anchor: Deno.serve + hono": await measure("deno"),
  "homed listener (node:http) + hono": await measure("homed"),
};
const env = await environment();
await writeResults(new URL("./results.json", import.meta.url), { ...env, rows });
console.log(`HTTP listener (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
