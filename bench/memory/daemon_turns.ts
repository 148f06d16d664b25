/**
 * The client half of `bench:memory-scale`'s daemon figures, run by it in a fresh Deno of its own: starts the fake LLM
 * (tests/support's, with the default contract) in a Worker, spawns a real homed with its computed flags on the data
 * dir given, and measures time from spawn to the first 200 of /healthz, until its log says memory is open, idle RSS
 * (2 s after that, `ps`), and the turn overhead of `POST /api/chat`: request time minus the fake LLM server's own
 * time for the turn's requests.
 *
 * Why a process of its own: the replay leaves the benchmark's process with a heap of hundreds of megabytes, and its
 * garbage collections landed inside the timed requests — time that is the client's, not homed's. The fake LLM's
 * thread is apart from the client's for the same reason (as in `bench:turn`): a remote LLM's work is not homed's.
 * bench/memory/scale.ts starts this process with V8's `--single-threaded` (no compiler or collector threads): on a
 * two-core machine, those of the client and the fake took a core from homed in the middle of its turns (on the year,
 * p99 11.4 ms with them, 7.9–8.4 without, same homed).
 *
 * homed gets the daemon's environment (`DAEMON_ENV`, as `deno task start`, the supervisor and the unit give it), or
 * `env` instead when given (`bench:daemon-env` compares them).
 *
 * Input, as JSON on stdin: `{data, questions, warmUp, turns, env?}`. Output, on stdout: one JSON {@link DaemonFigures}.
 * Run through {@link measureDaemonApart} by bench/memory/scale.ts and bench/turn_overhead/daemon_env.ts, not as a task
 * of its own.
 *
 * @module
 */

import { DAEMON_ENV } from "../../src/rights/command_flags.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "../../tests/support/contract.ts";
import { PASSED_TO_CHILDREN, REPO, workspace } from "../../tests/support/homed_process.ts";
import { percentile, rssMb } from "../support/report.ts";
import { RemoteFakeLlm } from "../support/remote_fake_llm.ts";
import { startTimedHomed, type TimedHomed } from "../support/timed_homed.ts";

/** What the client measured on one homed. */
export interface DaemonFigures {
  healthz_ms: number;
  memory_open_ms: number;
  memory_open_logged_ms: number;
  idle_rss_mb: number;
  rss_after_turns_mb: number;
  turn_overhead_p50_ms: number;
  turn_overhead_p99_ms: number;
  turn_overhead_max_ms: number;
  turn_total_p99_ms: number;
  turns: number;
}

/** The input of one run. */
export interface DaemonTurnsInput {
  data: string;
  questions: string[];
  warmUp: number;
  turns: number;
  /** homed's environment beside its config (default: `DAEMON_ENV`). */
  env?: Record<string, string>;
}

const TOKEN = "bench-owner-token-0123456789";
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs homed on `input.data` and measures it.
 *
 * @example
 * ```ts
 * const figures = await measureDaemon({ data: "/tmp/year", questions: ["Where is the key?"], warmUp: 50, turns: 1000 });
 * figures.turn_overhead_p99_ms; // 7.9
 * ```
 */
export async function measureDaemon(input: DaemonTurnsInput): Promise<DaemonFigures> {
  const llm = await RemoteFakeLlm.start(DEFAULT_CONTRACT);
  const ws = await workspace({
    llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
    onebot: { enabled: false },
    daemon: { api_token: TOKEN, data_dir: input.data },
  }, input.env ?? { ...DAEMON_ENV });
  let homed: TimedHomed | undefined;
  try {
    homed = await startTimedHomed(ws);
    const { url, started } = homed;
    let openMs = Number.NaN;
    while (!homed.exited() && performance.now() - started < 180_000) {
      if (/Memory open in/.test(homed.stderr())) {
        openMs = performance.now() - started;
        break;
      }
      await sleep(5);
    }
    const logged = Number(/Memory open in (\d+) ms/.exec(homed.stderr())?.[1] ?? Number.NaN);
    await sleep(2_000);
    const idleRss = await rssMb(homed.pid);
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const overhead: number[] = [], total: number[] = [];
    await llm.drain();
    for (let n = 0; n < input.warmUp + input.turns; n++) {
      // Queued before the clock starts: the round trip to the worker is not the turn's.
      await llm.enqueue({ reply: n % 2 ? "好的，记下了。" : "Noted, it is on the top shelf." });
      const text = input.questions[n % input.questions.length]!;
      const t0 = performance.now();
      const response = await fetch(`${url}/api/chat`, { method: "POST", headers, body: JSON.stringify({ text }) });
      if (!response.ok) throw new Error(`/api/chat answered ${response.status}: ${await response.text()}`);
      await response.json();
      const elapsed = performance.now() - t0;
      const server = (await llm.drain()).reduce((sum, ms) => sum + ms, 0);
      if (n >= input.warmUp) {
        overhead.push(elapsed - server);
        total.push(elapsed);
      }
    }
    const rssAfter = await rssMb(homed.pid);
    return {
      healthz_ms: Math.round(homed.healthzMs),
      memory_open_ms: Math.round(openMs),
      memory_open_logged_ms: logged,
      idle_rss_mb: idleRss,
      rss_after_turns_mb: rssAfter,
      turn_overhead_p50_ms: round(percentile(overhead, 50)),
      turn_overhead_p99_ms: round(percentile(overhead, 99)),
      turn_overhead_max_ms: round(Math.max(...overhead)),
      turn_total_p99_ms: round(percentile(total, 99)),
      turns: overhead.length,
    };
  } finally {
    await homed?.stop();
    await Deno.remove(ws.dir, { recursive: true }).catch(() => {});
    await llm.close().catch((error: Error) => console.warn(`fake LLM: ${error.message}`));
  }
}

/**
 * {@link measureDaemon} in a fresh Deno of its own: the caller's heap (a replay's hundreds of megabytes) and threads
 * stay out of the timed requests.
 *
 * @example
 * ```ts
 * const figures = await measureDaemonApart({ data: "/tmp/empty", questions: ["Where is the key?"], warmUp: 50, turns: 1000 });
 * figures.turn_overhead_p50_ms; // 1.6
 * ```
 */
export async function measureDaemonApart(input: DaemonTurnsInput): Promise<DaemonFigures> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      // No JIT or GC helper threads of its own: on a two-core machine they took cores from the homed being measured.
      "--v8-flags=--single-threaded",
      "--no-prompt",
      "--allow-read=.,/tmp",
      "--allow-write=/tmp",
      "--allow-net=127.0.0.1",
      `--allow-env=${["LOG_TOKENS", "LOG_STREAM", ...PASSED_TO_CHILDREN].join(",")}`,
      `--allow-run=${Deno.execPath()},ps`,
      "bench/memory/daemon_turns.ts",
    ],
    cwd: REPO,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(input)));
  await writer.close();
  const { code, stdout } = await child.output();
  if (code !== 0) throw new Error(`bench/memory/daemon_turns.ts exited with ${code}`);
  return JSON.parse(new TextDecoder().decode(stdout).trim().split("\n").at(-1)!) as DaemonFigures;
}

if (import.meta.main) {
  const input = JSON.parse(await new Response(Deno.stdin.readable).text()) as DaemonTurnsInput;
  console.log(JSON.stringify(await measureDaemon(input)));
}
