/**
 * The household's chats side by side (issue 40): one real homed — a child process with its computed flags and the
 * daemon's environment, as `deno task start` runs it — configured with QQ (a simulated OneBot implementation dialling
 * its reverse WebSocket), Telegram (the strict fake Bot API, `tests/support/fake_telegram.ts`, flood limit off) and
 * WeChat (the strict fake iLink API, `tests/support/fake_weixin.ts`), the fake LLM in a Worker answering at once. In
 * the same run, for each channel:
 *
 * 1. **Added latency per message**: one message at a time from the owner, from the fake delivering it (the user's
 *    message queued at the fake, which hands it to homed's held long poll at once; for QQ the frame written) to the
 *    reply arriving at the fake, minus the fake LLM's own time for the turn. Rounds go QQ, Telegram, WeChat, then the
 *    anchor — the same measurement through `POST /api/chat` — so all four see the same machine; each round waits until
 *    WeChat's last send is `weixin.min_send_interval` (500 ms, homed's floor) ago, so no reply waits for the pacer.
 * 2. **Inbound messages per second**: N messages (default 300) from N distinct allowed senders at once (each chat
 *    device coalesces one sender's burst into one turn, so distinct senders), as fast as the fake hands them over:
 *    time until homed has taken them all (`/api/status` → `services.io.inputs`, polled every 5 ms), until every turn
 *    reached the LLM, and until every reply reached the fake. WeChat's replies are paced by design (one per
 *    `weixin.min_send_interval`, for the whole bot): its inbound figure is measured apart from them, and the replies
 *    still queued at the end are not waited for (homed is stopped with SIGKILL).
 * 3. **Idle RSS**: homed with Telegram and WeChat configured (against idle fakes holding their long polls, the
 *    channels' default poll timeouts) against neither, three starts each, alternating: spawn to the first 200 of
 *    `/healthz`, resident memory (`ps`) 5 s later; medians.
 *
 * QQ's simulated implementation speaks WebSocket over a raw TCP socket with TCP_NODELAY
 * (`bench/onebot/raw_ws_client.ts`, as Go and Node implementations dial): Deno's own WebSocket client — the one
 * `tests/support/onebot_sim.ts` uses — leaves Nagle's algorithm on, which added ≈ 40 ms (delayed ACK) to an exchange
 * and would measure the simulator, not homed.
 *
 * Run: deno task bench:channels [--record] [--count=300] [--turns=150]
 *
 * @module
 */

import { DAEMON_ENV } from "../../src/rights/command_flags.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "../../tests/support/contract.ts";
import { FakeTelegram } from "../../tests/support/fake_telegram.ts";
import { FakeWeixin } from "../../tests/support/fake_weixin.ts";
import { startHomed, workspace } from "../../tests/support/homed_process.ts";
import { RawWsClient } from "../onebot/raw_ws_client.ts";
import { environment, percentile, rssMb, writeResults } from "../support/report.ts";
import { RemoteFakeLlm } from "../support/remote_fake_llm.ts";
import { startTimedHomed, type TimedHomed } from "../support/timed_homed.ts";

const arg = (name: string, fallback: number) =>
  Number(Deno.args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
/** Messages of each inbound burst. */
const COUNT = arg("count", 300);
/** Measured latency rounds (after WARM_UP). */
const TURNS = arg("turns", 150);
const WARM_UP = 20;
const IDLE_RUNS = 3;
const IDLE_WAIT_MS = 5_000;
/** homed's floor for `weixin.min_send_interval`, and a margin. */
const WEIXIN_INTERVAL_MS = 500;
const WEIXIN_MARGIN_MS = 50;

const TOKEN = "bench-owner-token-0123456789";
const QQ_SELF = 10001000;
const QQ_OWNER = 20000001;
const QQ_BURST = (n: number) => 30000000 + n;
const TG_OWNER = 111111;
const TG_BURST = (n: number) => 500000000 + n;
const WX_OWNER = "wxid_owner@im.wechat";
const WX_BURST = (n: number) => `wxid_bench${n}@im.wechat`;

const now = () => performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const median = (values: number[]) => percentile(values, 50);

/** Polls `condition` every `everyMs` until true; fails naming `what` after `limitMs`. */
async function until(condition: () => boolean | Promise<boolean>, what: string, limitMs = 20_000, everyMs = 1) {
  const started = now();
  while (!(await condition())) {
    if (now() - started > limitMs) throw new Error(`gave up after ${limitMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** p50/p95/p99/max of a list of ms, rounded. */
function summary(values: number[]) {
  return {
    p50_ms: round(percentile(values, 50), 3),
    p95_ms: round(percentile(values, 95), 3),
    p99_ms: round(percentile(values, 99), 3),
    max_ms: round(Math.max(...values), 3),
    n: values.length,
  };
}

/**
 * The QQ side: a OneBot implementation that answers every action at once and notes when each `send_private_msg`
 * arrived, and to whom.
 */
class QqSim {
  readonly replies: Array<{ user: number; at: number }> = [];
  #client: RawWsClient;
  #messageId = 1;

  private constructor(client: RawWsClient) {
    this.#client = client;
    void this.#pump();
  }

  static async connect(port: number): Promise<QqSim> {
    const client = await RawWsClient.connect(port, "/onebot/v11/ws", {
      "X-Self-ID": String(QQ_SELF),
      "X-Client-Role": "Universal",
      "User-Agent": "OneBot/11",
      Authorization: "Bearer ",
    });
    const sim = new QqSim(client);
    await client.send(JSON.stringify({
      meta_event_type: "lifecycle",
      post_type: "meta_event",
      self_id: QQ_SELF,
      sub_type: "connect",
      time: 0,
    }));
    return sim;
  }

  async #pump(): Promise<void> {
    for (;;) {
      const frame = JSON.parse(await this.#client.next()) as {
        action?: string;
        params?: { user_id?: number };
        echo?: string;
      };
      const at = now();
      if (frame.action === "send_private_msg") this.replies.push({ user: Number(frame.params?.user_id), at });
      if (frame.echo !== undefined) {
        await this.#client.send(
          JSON.stringify({ status: "ok", retcode: 0, data: { message_id: this.#messageId++ }, echo: frame.echo }),
        );
      }
    }
  }

  /** A private message from `user` (segments, as NapCat sends them). */
  message(user: number, text: string): Promise<void> {
    return this.#client.send(JSON.stringify({
      time: Math.floor(Date.now() / 1000),
      self_id: QQ_SELF,
      post_type: "message",
      message_type: "private",
      sub_type: "friend",
      message_id: this.#messageId++,
      user_id: user,
      message: [{ type: "text", data: { text } }],
      raw_message: text,
      font: 0,
      sender: { user_id: user, nickname: `nick${user}`, sex: "unknown", age: 0 },
    }));
  }

  close(): void {
    this.#client.close();
  }
}

const text = (n: number) => n % 2 ? `客厅的灯开着吗？(${n})` : `Is the kitchen light on? (${n})`;

// --- 1 and 2: one homed with the three channels ----------------------------------------------------------------------

async function channels() {
  const llm = await RemoteFakeLlm.start(DEFAULT_CONTRACT);
  const telegram = FakeTelegram.start({ rateLimit: false });
  const weixin = FakeWeixin.start();
  const ids = Array.from({ length: COUNT }, (_, n) => n);
  const ws = await workspace({
    llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
    daemon: { api_token: TOKEN },
    onebot: {
      owner: String(QQ_OWNER),
      allow_users: ids.map((n) => String(QQ_BURST(n))),
      min_send_interval: "0s",
      queue_limit: 10_000,
    },
    telegram: {
      token: telegram.token,
      api_url: telegram.apiUrl,
      owner: String(TG_OWNER),
      allow_users: ids.map((n) => String(TG_BURST(n))),
      min_send_interval: "0s",
      queue_limit: 10_000,
    },
    weixin: {
      token: weixin.botToken,
      base_url: weixin.baseUrl,
      cdn_url: weixin.cdnBaseUrl,
      owner: WX_OWNER,
      allow_users: ids.map(WX_BURST),
      min_send_interval: `${WEIXIN_INTERVAL_MS}ms`,
      queue_limit: 10_000,
    },
    io: { max_waiting_per_sender: 10 },
  }, { ...DAEMON_ENV });
  const homed = await startHomed(ws);
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const inputs = async () => {
    const response = await fetch(`${homed.url}/api/status`, { headers });
    // deno-lint-ignore no-explicit-any
    const body: any = await response.json();
    return Number(body.services.io.inputs);
  };
  const qq = await QqSim.connect(homed.workspace.port);
  let killed = false;
  try {
    await until(() => weixin.polling, "homed's first WeChat long poll");
    await llm.drain();

    // 1. Latency, one message at a time, round by round.
    const latency = { qq: [] as number[], telegram: [] as number[], weixin: [] as number[], http: [] as number[] };
    const extraLlmCalls = { qq: 0, telegram: 0, weixin: 0, http: 0 };
    const serverTime = async (channel: keyof typeof extraLlmCalls) => {
      const times = await llm.drain();
      if (times.length !== 1) extraLlmCalls[channel] += times.length - 1;
      return times.reduce((sum, ms) => sum + ms, 0);
    };
    let weixinLastSent = 0;
    for (let n = 0; n < WARM_UP + TURNS; n++) {
      const keep = n >= WARM_UP;
      // QQ
      await llm.enqueue({ reply: `QQ reply ${n}.` });
      let before = qq.replies.length;
      let t0 = now();
      await qq.message(QQ_OWNER, text(n));
      await until(() => qq.replies.length > before, `QQ reply ${n}`);
      let server = await serverTime("qq");
      if (keep) latency.qq.push(qq.replies[before]!.at - t0 - server);
      // Telegram
      await llm.enqueue({ reply: `Telegram reply ${n}.` });
      before = telegram.sent.length;
      t0 = now();
      telegram.userSends({
        chat: { id: TG_OWNER, type: "private" },
        from: { id: TG_OWNER, first_name: "Olga" },
        text: text(n),
      });
      await until(() => telegram.sent.length > before, `Telegram reply ${n}`);
      server = await serverTime("telegram");
      if (keep) latency.telegram.push(telegram.sent[before]!.at - t0 - server);
      // WeChat, once its pacer would let a reply go at once
      const wait = weixinLastSent + WEIXIN_INTERVAL_MS + WEIXIN_MARGIN_MS - now();
      if (wait > 0) await sleep(wait);
      await llm.enqueue({ reply: `WeChat reply ${n}.` });
      before = weixin.sent.length;
      t0 = now();
      weixin.userSends({ from: WX_OWNER, text: text(n) });
      await until(() => weixin.sent.length > before, `WeChat reply ${n}`);
      weixinLastSent = weixin.sent[before]!.at;
      server = await serverTime("weixin");
      if (keep) latency.weixin.push(weixinLastSent - t0 - server);
      // The anchor: HTTP
      await llm.enqueue({ reply: `HTTP reply ${n}.` });
      t0 = now();
      const response = await fetch(`${homed.url}/api/chat`, {
        method: "POST",
        headers,
        body: JSON.stringify({ text: text(n) }),
      });
      if (!response.ok) throw new Error(`/api/chat answered ${response.status}: ${await response.text()}`);
      await response.json();
      const elapsed = now() - t0;
      server = await serverTime("http");
      if (keep) latency.http.push(elapsed - server);
    }
    // Let the last typing indicators and sends settle before the bursts.
    await sleep(1_000);
    await llm.drain();

    // 2. Inbound bursts, one channel after the other.
    const burst = async (
      name: "qq" | "telegram" | "weixin",
      send: () => Promise<void> | void,
      replies: () => number,
      waitForReplies: boolean,
    ) => {
      await llm.enqueue(...ids.map((n) => ({ reply: `Burst reply ${n}.` })));
      const inputs0 = await inputs();
      const replies0 = replies();
      let llmCalls = 0;
      const t0 = now();
      await send();
      const sentMs = now() - t0;
      await until(async () => (await inputs()) >= inputs0 + COUNT, `${name}: homed to take ${COUNT} inputs`, 60_000, 5);
      const takenMs = now() - t0;
      await until(async () => (llmCalls += (await llm.drain()).length) >= COUNT, `${name}: ${COUNT} turns`, 120_000, 5);
      const turnsMs = now() - t0;
      let repliesMs: number | null = null;
      if (waitForReplies) {
        await until(() => replies() - replies0 >= COUNT, `${name}: ${COUNT} replies`, 60_000, 5);
        repliesMs = now() - t0;
      }
      return {
        messages: COUNT,
        fake_handed_over_ms: round(sentMs),
        taken_ms: round(takenMs),
        inbound_msgs_per_s: Math.round(COUNT / (takenMs / 1000)),
        all_turns_at_llm_ms: round(turnsMs),
        turns_per_s: Math.round(COUNT / (turnsMs / 1000)),
        all_replies_ms: repliesMs === null ? null : round(repliesMs),
        replies_by_then: replies() - replies0,
        extra_llm_calls: llmCalls - COUNT,
      };
    };
    const inbound = {
      qq: await burst(
        "qq",
        async () => {
          for (const n of ids) await qq.message(QQ_BURST(n), text(n));
        },
        () => qq.replies.length,
        true,
      ),
      telegram: await burst(
        "telegram",
        () => {
          for (const n of ids) {
            const id = TG_BURST(n);
            telegram.userSends({ chat: { id, type: "private" }, from: { id, first_name: `U${n}` }, text: text(n) });
          }
        },
        () => telegram.sent.length,
        true,
      ),
      weixin: await burst(
        "weixin",
        () => {
          for (const n of ids) weixin.userSends({ from: WX_BURST(n), text: text(n) });
        },
        () => weixin.sent.length,
        false,
      ),
    };
    const violations = { telegram: telegram.takeViolations(), weixin: weixin.takeViolations() };
    const refusals = weixin.refusals.length;
    // WeChat's replies to the burst are still going out, one per 500 ms: not waited for.
    await homed.stop({ signal: "SIGKILL" });
    killed = true;
    return { latency, extraLlmCalls, inbound, violations, weixinRefusals: refusals };
  } finally {
    qq.close();
    if (!killed) await homed.stop({ signal: "SIGKILL" });
    await telegram.close().catch((error: Error) => console.warn(`fake Telegram: ${error.message}`));
    await weixin.close().catch((error: Error) => console.warn(`fake WeChat: ${error.message}`));
    await llm.close().catch((error: Error) => console.warn(`fake LLM: ${error.message}`));
  }
}

// --- 3. Idle RSS: Telegram and WeChat configured against none ---------------------------------------------------------

async function idleOnce(withChannels: boolean): Promise<IdleRun> {
  const telegram = withChannels ? FakeTelegram.start({ rateLimit: false }) : undefined;
  const weixin = withChannels ? FakeWeixin.start({ longPollTimeoutMs: 35_000 }) : undefined;
  const ws = await workspace({
    // Nothing is asked of the model: an address that would refuse is enough.
    llm: { base_url: "http://127.0.0.1:9/v1", api_key: TEST_KEY },
    onebot: { enabled: false },
    ...(telegram ? { telegram: { token: telegram.token, api_url: telegram.apiUrl, owner: String(TG_OWNER) } } : {}),
    ...(weixin
      ? { weixin: { token: weixin.botToken, base_url: weixin.baseUrl, cdn_url: weixin.cdnBaseUrl, owner: WX_OWNER } }
      : {}),
  }, { ...DAEMON_ENV });
  let homed: TimedHomed | undefined;
  try {
    homed = await startTimedHomed(ws);
    await sleep(IDLE_WAIT_MS);
    if (weixin && !weixin.polling) throw new Error(`homed is not long-polling WeChat:\n${homed.stderr()}`);
    return { healthz_ms: Math.round(homed.healthzMs), idle_rss_mb: await rssMb(homed.pid) };
  } finally {
    await homed?.stop();
    await Deno.remove(ws.dir, { recursive: true }).catch(() => {});
    await telegram?.close().catch((error: Error) => console.warn(`fake Telegram: ${error.message}`));
    await weixin?.close().catch((error: Error) => console.warn(`fake WeChat: ${error.message}`));
  }
}

type IdleRun = { healthz_ms: number; idle_rss_mb: number };

async function idle() {
  const runs = { none: [] as IdleRun[], telegram_and_weixin: [] as IdleRun[] };
  for (let n = 0; n < IDLE_RUNS; n++) {
    runs.none.push(await idleOnce(false));
    runs.telegram_and_weixin.push(await idleOnce(true));
  }
  const medians = (list: IdleRun[]) => ({
    healthz_ms: median(list.map((r) => r.healthz_ms)),
    idle_rss_mb: median(list.map((r) => r.idle_rss_mb)),
  });
  return { runs, none: medians(runs.none), telegram_and_weixin: medians(runs.telegram_and_weixin) };
}

const started = new Date().toISOString();
const main = await channels();
const rss = await idle();
const env = await environment();
const latency = {
  qq: summary(main.latency.qq),
  telegram: summary(main.latency.telegram),
  weixin: summary(main.latency.weixin),
  anchor_http: summary(main.latency.http),
};
const results = {
  date: started,
  ...env,
  shared_machine: "2 cores, other sessions running tests at the same time",
  latency_added_ms: latency,
  latency_extra_llm_calls: main.extraLlmCalls,
  inbound: main.inbound,
  weixin_reply_pacing_ms: WEIXIN_INTERVAL_MS,
  idle: {
    wait_after_healthz_ms: IDLE_WAIT_MS,
    none: rss.none,
    telegram_and_weixin: rss.telegram_and_weixin,
    added_rss_mb: round(rss.telegram_and_weixin.idle_rss_mb - rss.none.idle_rss_mb, 1),
    runs: rss.runs,
  },
  protocol_violations: main.violations,
  weixin_refused_sends: main.weixinRefusals,
};
await writeResults(new URL("./results.json", import.meta.url), results);
console.log(`homed's chats (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.log("added latency per message (reply at the fake − message at the fake − the LLM's own time), ms:");
console.table(latency);
console.log(`inbound bursts of ${COUNT} messages from distinct senders:`);
console.table(main.inbound);
console.log(`idle, ${IDLE_WAIT_MS / 1000} s after /healthz (median of ${IDLE_RUNS}):`);
console.table({ none: rss.none, telegram_and_weixin: rss.telegram_and_weixin });
console.log("protocol violations:", JSON.stringify(main.violations), "WeChat refused sends:", main.weixinRefusals);
