/**
 * grammY or the plain wire for homed's Telegram channel (issue 40 §2: "choose the library as the field would … or the
 * plain wire if it is clearly lighter: measure idle RSS and start-up with each and say why").
 *
 * Three minimal echo bots, each a child process long-polling the strict fake Bot API (`tests/support/fake_telegram.ts`,
 * flood limit off) started here, and answering every text message:
 *
 * - `plain`: homed's own client, `src/devices/telegram/bot_api.ts` (`bench/channels/wire_plain.ts`);
 * - `grammy`: `npm:grammy@1.46.0` as Deno loads it — the package's Node build (`node-fetch`, `abort-controller`,
 *   `debug`) — `Bot` with `apiRoot` at the fake, `bot.start()` (`bench/channels/wire_grammy.ts`);
 * - `grammy-web`: the same package's `grammy/web` build, one ES module over the global `fetch`: the code of grammY's
 *   Deno-native release, for a Deno program that would take grammY without its Node shims.
 *
 * Each runs with `--no-config`, the daemon's V8 flags and only the permissions it needs (grammY's Node build needs all
 * of the environment: `debug` lists it at import). Per run: **start-up**, spawn → the fake handing out the first
 * `getUpdates` (a message was queued before the spawn, so that call is seen as its delivery); the first reply; **idle
 * RSS** 5 s after start-up; then 200 messages from 200 chats at once, the time until all are answered and **RSS after
 * them** (1 s later). One unmeasured start of each first (it fills Deno's caches), then three runs each, alternating.
 *
 * Run: deno task bench:telegram-wire [--record]
 *
 * @module
 */

import { DAEMON_V8_FLAGS } from "../../src/rights/command_flags.ts";
import { FakeTelegram } from "../../tests/support/fake_telegram.ts";
import { childEnv, REPO } from "../../tests/support/homed_process.ts";
import { environment, percentile, rssMb, writeResults } from "../support/report.ts";

type Variant = "plain" | "grammy" | "grammy-web";
const VARIANTS: Variant[] = ["plain", "grammy", "grammy-web"];
const RUNS = 3;
const IDLE_WAIT_MS = 5_000;
const MESSAGES = 200;
const LOCK = "bench/channels/grammy.lock";

const now = () => performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The child's command line: the program, its permissions, its arguments. */
function command(variant: Variant, fake: FakeTelegram): string[] {
  const common = ["run", "--no-config", "--no-prompt", DAEMON_V8_FLAGS, "--allow-net=127.0.0.1"];
  if (variant === "plain") return [...common, "bench/channels/wire_plain.ts", fake.apiUrl, fake.token];
  return [
    ...common,
    `--lock=${LOCK}`,
    "--frozen",
    "--node-modules-dir=none",
    // The Node build's `debug` reads every variable at import; the web build's only DEBUG.
    variant === "grammy" ? "--allow-env" : "--allow-env=DEBUG",
    "bench/channels/wire_grammy.ts",
    fake.apiUrl,
    fake.token,
    ...(variant === "grammy-web" ? ["web"] : []),
  ];
}

/** Polls `condition` every millisecond; fails naming `what` after `limitMs`. */
async function until(condition: () => boolean, what: string, limitMs: number, stderr: () => string) {
  const started = now();
  while (!condition()) {
    if (now() - started > limitMs) throw new Error(`gave up after ${limitMs} ms waiting for ${what}:\n${stderr()}`);
    await sleep(1);
  }
}

interface Run {
  startup_ms: number;
  first_reply_ms: number;
  idle_rss_mb: number;
  answer_200_ms: number;
  rss_after_200_mb: number;
}

async function once(variant: Variant): Promise<Run> {
  const fake = FakeTelegram.start({ rateLimit: false });
  const first = fake.userSends({ chat: { id: 42, type: "private" }, from: { id: 42, first_name: "Ann" }, text: "hi" });
  const started = now();
  const child = new Deno.Command(Deno.execPath(), {
    args: command(variant, fake),
    cwd: REPO,
    env: childEnv(),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const decoder = new TextDecoder();
  const drain = (async () => {
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  const log = () => stderr;
  try {
    await until(() => fake.deliveries(first.update_id) > 0, `${variant}: the first getUpdates`, 60_000, log);
    const startup = now() - started;
    await until(() => fake.sent.length >= 1, `${variant}: the first reply`, 10_000, log);
    const firstReply = now() - started;
    await sleep(Math.max(0, startup + IDLE_WAIT_MS - (now() - started)));
    const idleRss = await rssMb(child.pid);
    const t0 = now();
    for (let n = 0; n < MESSAGES; n++) {
      const id = 1_000_000 + n;
      fake.userSends({ chat: { id, type: "private" }, from: { id, first_name: `U${n}` }, text: `message ${n}` });
    }
    await until(() => fake.sent.length >= 1 + MESSAGES, `${variant}: ${MESSAGES} replies`, 60_000, log);
    const answered = now() - t0;
    await sleep(1_000);
    const rssAfter = await rssMb(child.pid);
    if (fake.sent.some((message) => !message.text.startsWith("echo: "))) throw new Error(`${variant}: a wrong reply`);
    return {
      startup_ms: round(startup),
      first_reply_ms: round(firstReply),
      idle_rss_mb: idleRss,
      answer_200_ms: round(answered),
      rss_after_200_mb: rssAfter,
    };
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await drain;
    await fake.close();
  }
}

const date = new Date().toISOString();
for (const variant of VARIANTS) await once(variant); // fills Deno's caches (module emit, npm) for each
const runs: Record<Variant, Run[]> = { plain: [], grammy: [], "grammy-web": [] };
for (let n = 0; n < RUNS; n++) {
  for (const variant of VARIANTS) runs[variant].push(await once(variant));
}
const median = (variant: Variant, key: keyof Run) => percentile(runs[variant].map((run) => run[key]), 50);
const medians = Object.fromEntries(VARIANTS.map((variant) => [variant, {
  startup_ms: median(variant, "startup_ms"),
  first_reply_ms: median(variant, "first_reply_ms"),
  idle_rss_mb: median(variant, "idle_rss_mb"),
  answer_200_ms: median(variant, "answer_200_ms"),
  rss_after_200_mb: median(variant, "rss_after_200_mb"),
}])) as Record<Variant, Run>;
const env = await environment();
await writeResults(new URL("./telegram_wire.json", import.meta.url), {
  date,
  ...env,
  shared_machine: "2 cores, other sessions running tests at the same time",
  grammy: "npm:grammy@1.46.0 (locked by bench/channels/grammy.lock)",
  runs_each: RUNS,
  idle_wait_ms: IDLE_WAIT_MS,
  messages: MESSAGES,
  medians,
  grammy_over_plain: {
    startup_ms: round(medians.grammy.startup_ms - medians.plain.startup_ms),
    idle_rss_mb: round(medians.grammy.idle_rss_mb - medians.plain.idle_rss_mb),
    rss_after_200_mb: round(medians.grammy.rss_after_200_mb - medians.plain.rss_after_200_mb),
  },
  grammy_web_over_plain: {
    startup_ms: round(medians["grammy-web"].startup_ms - medians.plain.startup_ms),
    idle_rss_mb: round(medians["grammy-web"].idle_rss_mb - medians.plain.idle_rss_mb),
    rss_after_200_mb: round(medians["grammy-web"].rss_after_200_mb - medians.plain.rss_after_200_mb),
  },
  runs,
});
console.log(`Telegram: grammY or the plain wire (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.log(
  `medians of ${RUNS} runs each (start-up: spawn → first getUpdates; idle RSS ${IDLE_WAIT_MS / 1000} s later):`,
);
console.table(medians);
