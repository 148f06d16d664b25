/**
 * QQ (OneBot V11) benchmark.
 *
 * 1. Inbound throughput: a simulated implementation in a Worker (its own thread) sends N private messages over a
 *    real loopback WebSocket; homed's QQ device turns them into InputEvents, read from the IOManager. Events/s from
 *    the first frame sent to the last InputEvent read; every one must arrive, in order. Anchor in the same run: the
 *    same frames into a bare socket handler that only parses them (the transport's ceiling).
 * 2. Event → LLM request latency: a full in-process homed (fake LLM in a Worker); a simulated implementation sends
 *    the owner's message and answers the reply action; the time from the frame sent to the fake receiving the LLM
 *    request, over 300 turns. Anchor: the same through `POST /api/chat`. The simulated implementation speaks
 *    WebSocket over a raw TCP socket with TCP_NODELAY, as real ones do (see raw_ws_client.ts).
 *
 * Run: deno task bench:onebot (writes bench/out/onebot/results.json; --record: bench/onebot/results.json).
 */

import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import { parseConfig } from "../../src/config/load.ts";
import { startDaemon } from "../../src/daemon.ts";
import type { InputEvent } from "../../src/io/event.ts";
import { IOManager } from "../../src/io/io_manager.ts";
import { RouteTable } from "../../src/io/route_table.ts";
import { QqDevice } from "../../src/devices/qq/qq_device.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { RemoteFakeLlm } from "../support/remote_fake_llm.ts";
import { RawWsClient } from "./raw_ws_client.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const COUNT = 20_000;
const OWNER = "20002000";
const now = () => performance.timeOrigin + performance.now();
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Starts the sender worker against `url`. `started` resolves with its start time; `finish()` ends the worker — only
 * once everything arrived, since ending it earlier would drop frames still buffered in its socket.
 */
function sendBurst(url: string): { started: Promise<number>; finish: () => void } {
  const worker = new Worker(new URL("./sender_worker.ts", import.meta.url), { type: "module" });
  const started = new Promise<number>((resolve) => {
    worker.onmessage = (message) => resolve(message.data.started as number);
  });
  worker.postMessage({ url, count: COUNT, selfId: "10001000", userId: OWNER });
  return { started, finish: () => worker.terminate() };
}

// 1a. Anchor: frames into a bare handler that parses them.
async function bareSocket(): Promise<{ perSecond: number; received: number }> {
  let received = 0;
  let done!: (at: number) => void;
  const finished = new Promise<number>((resolve) => done = resolve);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const { socket, response } = Deno.upgradeWebSocket(request);
    socket.onmessage = (message) => {
      const frame = JSON.parse(String(message.data));
      if (frame.post_type === "message" && ++received === COUNT) done(now());
    };
    return response;
  });
  const burst = sendBurst(`ws://127.0.0.1:${server.addr.port}/`);
  const ended = await finished;
  const started = await burst.started;
  burst.finish();
  await server.shutdown();
  return { perSecond: COUNT / ((ended - started) / 1000), received };
}

// 1b. The QQ device.
async function qqDevice(): Promise<{ perSecond: number; received: number; inOrder: boolean }> {
  const qq = new QqDevice({
    settings: {
      owner: OWNER,
      allowUsers: [],
      allowGroups: [],
      approveFriends: [],
      groupPrefix: "",
      actionTimeoutMs: 30_000,
      splitAt: 1_500,
      minSendIntervalMs: 0,
      queueLimit: 100,
      maxFrameBytes: 1_048_576,
    },
    clock: systemClock,
    logger: getLogger(["bench"]),
  });
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["bench"]),
  });
  await io.replaceDevices([qq]);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const selfId = request.headers.get("x-self-id")!;
    const { socket, response } = Deno.upgradeWebSocket(request);
    qq.attach(socket, selfId, "universal");
    return response;
  });
  const burst = sendBurst(`ws://127.0.0.1:${server.addr.port}/`);
  const events: InputEvent[] = [];
  let ended = 0;
  while (events.length < COUNT) {
    const event = (await io.next())!;
    events.push(event);
    ended = now();
  }
  const started = await burst.started;
  burst.finish();
  const inOrder = events.every((event, n) => event.payload.text === `m${n}`);
  await io.close();
  await server.shutdown();
  return { perSecond: COUNT / ((ended - started) / 1000), received: events.length, inOrder };
}

// 2. Event → LLM request latency, QQ and HTTP.
async function latency(): Promise<{ qq: number[]; http: number[] }> {
  const fake = await RemoteFakeLlm.start();
  const dataDir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-bench-onebot-" });
  const loaded = parseConfig({
    text: JSON.stringify({
      daemon: { listen_addr: "127.0.0.1:0", data_dir: dataDir },
      llm: { base_url: fake.baseUrl, api_key: "sk-bench-000000000000", max_retries: 0 },
      onebot: { owner: OWNER, min_send_interval: "0s" },
      paths: { personal: new URL("../../personal.md", import.meta.url).pathname, knowledge: `${dataDir}/knowledge` },
    }),
    location: { path: `${dataDir}/homed.yaml`, origin: "--config" },
    readEnv: () => undefined,
    cwd: dataDir,
  });
  const daemon = await startDaemon(loaded);
  const port = Number(new URL(daemon.url).port);
  const sim = await RawWsClient.connect(port, "/onebot/v11/ws", { "X-Self-ID": "10001000", Authorization: "Bearer " });
  const qq: number[] = [];
  const http: number[] = [];
  for (let n = 0; n < 360; n++) {
    await fake.enqueue({ reply: `Reply ${n}.` });
    const sentAt = now();
    await sim.send(JSON.stringify({
      time: 0,
      self_id: 10001000,
      post_type: "message",
      message_type: "private",
      sub_type: "friend",
      message_id: n,
      user_id: Number(OWNER),
      message: [{ type: "text", data: { text: `Message ${n}: 客厅的灯开着吗？` } }],
      raw_message: "",
      font: 0,
      sender: { nickname: "owner" },
    }));
    // Answer every action (get_login_info and get_version_info come first after connecting) until the reply.
    for (;;) {
      const action = JSON.parse(await sim.next());
      await sim.send(JSON.stringify({ status: "ok", retcode: 0, data: { message_id: n }, echo: action.echo }));
      if (action.action === "send_private_msg") break;
    }
    const [received] = (await fake.drainRequests()).receivedAt;
    if (received === undefined) throw new Error(`turn ${n}: the LLM got no request`);
    if (n >= 60) qq.push(received - sentAt);
  }
  for (let n = 0; n < 360; n++) {
    await fake.enqueue({ reply: `Reply ${n}.` });
    const sentAt = now();
    const response = await fetch(`${daemon.url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: `Message ${n}: 客厅的灯开着吗？` }),
    });
    await response.body?.cancel();
    const [received] = (await fake.drainRequests()).receivedAt;
    if (n >= 60) http.push(received! - sentAt);
  }
  sim.close();
  await daemon.stop();
  await fake.close();
  await Deno.remove(dataDir, { recursive: true });
  return { qq, http };
}

const anchor = await bareSocket();
const device = await qqDevice();
const { qq, http } = await latency();
const env = await environment();
const results = {
  events: COUNT,
  inbound_events_per_s: Math.round(device.perSecond),
  inbound_received: device.received,
  inbound_in_order: device.inOrder,
  anchor_bare_socket_frames_per_s: Math.round(anchor.perSecond),
  target_events_per_s: 5_000,
  event_to_llm_p50_ms: round(percentile(qq, 50)),
  event_to_llm_p99_ms: round(percentile(qq, 99)),
  anchor_http_to_llm_p50_ms: round(percentile(http, 50)),
  anchor_http_to_llm_p99_ms: round(percentile(http, 99)),
  latency_turns: qq.length,
  ...env,
};
await writeResults(new URL("./results.json", import.meta.url), results);
console.log(`homed QQ (OneBot V11) (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table({
  "inbound: QQ device → InputEvents": {
    per_s: results.inbound_events_per_s,
    received: device.received,
    in_order: device.inOrder,
  },
  "anchor: bare socket, parse only": {
    per_s: results.anchor_bare_socket_frames_per_s,
    received: anchor.received,
    in_order: true,
  },
});
console.table({
  "QQ message → LLM request": {
    p50_ms: results.event_to_llm_p50_ms,
    p99_ms: results.event_to_llm_p99_ms,
    n: qq.length,
  },
  "anchor: POST /api/chat → LLM request": {
    p50_ms: results.anchor_http_to_llm_p50_ms,
    p99_ms: results.anchor_http_to_llm_p99_ms,
    n: http.length,
  },
});
console.log(
  `target ≥ 5,000 events/s, none lost, in order: ${
    device.perSecond >= 5_000 && device.received === COUNT && device.inOrder ? "met" : "NOT met"
  }`,
);
