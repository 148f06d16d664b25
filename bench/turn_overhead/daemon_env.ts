/**
 * What the daemon's environment (`DAEMON_ENV`) costs a turn: a real homed (a child process with its computed flags,
 * from the sources, on an empty data dir) measured by bench/memory/daemon_turns.ts in a fresh Deno of its own — 1,000
 * `POST /api/chat` after 50 warm-up, the turn overhead being request time minus the fake LLM server's own time — with
 * `DAEMON_ENV` as shipped, and without each of its variables in turn (the anchor: glibc's defaults for it). The cases
 * take turns, `--rounds` times (default 3), so a quiet and a busy minute of the machine fall on each alike; reported
 * per case: the median over rounds of p50 and p99, every round's p99, and RSS after the turns.
 *
 * Target: `DAEMON_ENV` costs no turn time — its p50 within 10 % of each anchor's (p99 is the 10th slowest of 1,000 and
 * moves by more than that between rounds of the same case; all rounds are printed).
 *
 * Run: deno task bench:daemon-env [--rounds N] (writes bench/out/turn_overhead/daemon_env.json; --record:
 * bench/turn_overhead/daemon_env.json).
 *
 * @module
 */

import { DAEMON_ENV } from "../../src/rights/command_flags.ts";
import { type DaemonFigures, measureDaemonApart } from "../memory/daemon_turns.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

/** `--rounds N`: how many times each case runs (default 3). */
const roundsAt = Deno.args.indexOf("--rounds");
const ROUNDS = roundsAt === -1 ? 3 : Number(Deno.args[roundsAt + 1]);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  throw new Error(`--rounds: got ${Deno.args[roundsAt + 1]}; allowed: a whole number ≥ 1, e.g. --rounds 3`);
}

/** The questions asked, English and Chinese, as a household asks them. */
const QUESTIONS = [
  "Where did I put the spare key?",
  "明天早上七点提醒我给花浇水",
  "What is the temperature in the living room?",
  "奶奶的降压药放在哪里？",
  "Turn off the kitchen light, please",
];

/** The cases: as shipped, then without each variable of it. */
const cases: Record<string, Record<string, string>> = {
  daemon_env: { ...DAEMON_ENV },
  ...Object.fromEntries(
    Object.keys(DAEMON_ENV).map((name) => [
      `without_${name}`,
      Object.fromEntries(Object.entries(DAEMON_ENV).filter(([other]) => other !== name)),
    ]),
  ),
};

const runs = new Map<string, DaemonFigures[]>(Object.keys(cases).map((name) => [name, []]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, env] of Object.entries(cases)) {
    const data = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-daemon-env-" });
    try {
      const figures = await measureDaemonApart({ data, questions: QUESTIONS, warmUp: 50, turns: 1_000, env });
      runs.get(name)!.push(figures);
      console.log(
        `round ${round} ${name}: p50 ${figures.turn_overhead_p50_ms} ms, p99 ${figures.turn_overhead_p99_ms} ms, ` +
          `rss after ${figures.rss_after_turns_mb} MB`,
      );
    } finally {
      await Deno.remove(data, { recursive: true });
    }
  }
}

const median = (values: number[]) => percentile(values, 50);
const summary = Object.fromEntries(
  [...runs].map(([name, figures]) => [name, {
    env: Object.entries(cases[name]!).map(([key, value]) => `${key}=${value}`).join(" ") || "(none)",
    turn_overhead_p50_ms: median(figures.map((f) => f.turn_overhead_p50_ms)),
    turn_overhead_p99_ms: median(figures.map((f) => f.turn_overhead_p99_ms)),
    turn_overhead_p99_rounds_ms: figures.map((f) => f.turn_overhead_p99_ms),
    rss_after_turns_mb: median(figures.map((f) => f.rss_after_turns_mb)),
  }]),
);
const shipped = summary.daemon_env!;
const verdicts = Object.fromEntries(
  Object.entries(summary).filter(([name]) => name !== "daemon_env").map(([name, anchor]) => [
    `p50 within 10 % of ${name}`,
    shipped.turn_overhead_p50_ms <= anchor.turn_overhead_p50_ms * 1.1 ? "met" : "NOT met",
  ]),
);
console.table(summary);
console.log(verdicts);
await writeResults(
  new URL("./daemon_env.json", import.meta.url),
  { ...(await environment()), rounds: ROUNDS, turns: 1_000, cases: summary, verdicts },
);
