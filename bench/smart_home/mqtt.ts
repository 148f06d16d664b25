/**
 * MQTT broker → device events: how many messages a second the MQTT device turns into InputEvents, and whether any is
 * lost. A real mosquitto on loopback; a publisher in a Worker (this same file, loaded with `?publisher`, so
 * publishing runs beside homed rather than taking turns with it on one event loop) sends N QoS 0 messages as fast as
 * MQTT.js writes them, spread over several topics under the subscribed filter `bench/+/seq`; the main thread runs
 * `MqttDevice` behind an `IOManager` and reads every input as an agent would. Measured from the first publish to the
 * last InputEvent read; every topic's sequence numbers are checked to be all there and in order. The goal is
 * ≥ 5,000 events/s with none lost.
 *
 * Run (from the repository root):
 * `deno run --no-prompt --allow-read=.,/tmp --allow-write=bench,/tmp --allow-net=127.0.0.1 --allow-sys=cpus
 * --allow-run=git,mosquitto,/usr/sbin/mosquitto bench/smart_home/mqtt.ts` — writes bench/out/smart_home/mqtt.json;
 * `--record`: bench/smart_home/mqtt.json.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import { IOManager } from "../../src/io/io_manager.ts";
import { RouteTable } from "../../src/io/route_table.ts";
import { MqttDevice, type MqttStatus } from "../../src/devices/mqtt/mqtt_device.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { Mosquitto, TestMqttClient } from "../../tests/support/mosquitto.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

/** Messages per measured run. */
const MESSAGES = 20_000;
/** Topics they are spread over (`bench/t0/seq` …), one coalesced event row each in homed. */
const TOPICS = 10;
/** Measured runs, after one warm-up run of a tenth the size. */
const RUNS = 3;
/** A run that sees no new event for this long is over, with what arrived. */
const QUIET_MS = 5_000;
const GOAL_PER_S = 5_000;

/** What the main thread asks of the publisher, and what it answers. */
interface PublishOrder {
  url: string;
  messages: number;
  topics: number;
}
interface PublishReport {
  firstSentAt: number;
  lastSentAt: number;
}

/** Milliseconds on a clock a Worker and the main thread share (each has its own `performance.timeOrigin`). */
const now = () => performance.timeOrigin + performance.now();
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

if (new URL(import.meta.url).searchParams.has("publisher")) {
  // The publisher: one connection, every message QoS 0, no waiting between them.
  const scope = globalThis as unknown as {
    onmessage: (message: MessageEvent<PublishOrder>) => void;
    postMessage(report: PublishReport): void;
  };
  scope.onmessage = async ({ data: order }) => {
    const client = await TestMqttClient.connect(order.url, "bench-publisher");
    const firstSentAt = now();
    for (let seq = 0; seq < order.messages; seq++) {
      client.publishNow(`bench/t${seq % order.topics}/seq`, `${seq} ${now()}`);
    }
    await client.flushed();
    const lastSentAt = now();
    await client.close();
    scope.postMessage({ firstSentAt, lastSentAt });
  };
} else {
  await main();
}

async function main(): Promise<void> {
  await using mosquitto = await Mosquitto.start();
  const tools = new ToolRegistry({ clock: systemClock });
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools,
    logger: getLogger(["bench"]),
  });
  const mqtt = new MqttDevice({
    settings: { url: mosquitto.url, username: "", password: "", subscribe: ["bench/+/seq"], publish: [] },
    clock: systemClock,
    logger: getLogger(["bench", "mqtt"]),
  });
  await io.replaceDevices([mqtt]);
  const status = () => mqtt.status() as unknown as MqttStatus;
  if (status().state !== "connected") throw new Error(`the device did not connect: ${status().last_error}`);

  // The reader: takes every input as the agent does, keeping what a run needs to check and time it.
  let run: { seen: number[]; order: number; lastReadAt: number; latencies: number[]; outOfOrder: number } | undefined;
  const reader = (async () => {
    for (let event = await io.next(); event; event = await io.next()) {
      if (!run) continue;
      const readAt = now();
      const [seqText, sentText] = String(event.payload.payload).split(" ");
      const seq = Number(seqText);
      const topic = seq % TOPICS;
      // Per topic, sequence numbers must arrive in order: seq, seq + TOPICS, …
      if (seq !== (run.seen[topic] ?? topic - TOPICS) + TOPICS) run.outOfOrder++;
      run.seen[topic] = seq;
      run.order++;
      run.lastReadAt = readAt;
      run.latencies.push(readAt - Number(sentText));
    }
  })();

  const worker = new Worker(new URL("?publisher", import.meta.url), { type: "module" });
  const publish = (messages: number) =>
    new Promise<PublishReport>((resolve, reject) => {
      worker.onmessage = (message: MessageEvent<PublishReport>) => resolve(message.data);
      worker.onerror = (error) => reject(error);
      worker.postMessage({ url: mosquitto.url, messages, topics: TOPICS } satisfies PublishOrder);
    });

  const measure = async (messages: number) => {
    run = { seen: [], order: 0, lastReadAt: 0, latencies: [], outOfOrder: 0 };
    const before = status().messages;
    const report = await publish(messages);
    // Wait for the last event, or for the flow to stop (then what is missing is lost).
    let count = run.order;
    let quietSince = performance.now();
    while (run.order < messages && performance.now() - quietSince < QUIET_MS) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (run.order !== count) [count, quietSince] = [run.order, performance.now()];
    }
    const done = run;
    run = undefined;
    const seconds = (done.lastReadAt - report.firstSentAt) / 1_000;
    return {
      messages,
      received: done.order,
      lost: messages - done.order,
      out_of_order: done.outOfOrder,
      broker_delivered: status().messages - before,
      publish_ms: round(report.lastSentAt - report.firstSentAt),
      total_ms: round(seconds * 1_000),
      events_per_s: Math.round(done.order / seconds),
      latency_p50_ms: round(percentile(done.latencies, 50)),
      latency_p99_ms: round(percentile(done.latencies, 99)),
    };
  };

  try {
    await measure(MESSAGES / 10);
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await measure(MESSAGES));
    const rates = runs.map((r) => r.events_per_s);
    const lost = runs.reduce((sum, r) => sum + r.lost + r.out_of_order, 0);
    const median = percentile(rates, 50);
    const env = await environment();
    const results = {
      ...env,
      broker: "mosquitto (Debian), loopback",
      messages_per_run: MESSAGES,
      topics: TOPICS,
      runs,
      events_per_s_median: median,
      lost_or_out_of_order: lost,
      dropped_by_device: status().dropped,
      goal_events_per_s: GOAL_PER_S,
      goal_met: median >= GOAL_PER_S && lost === 0,
    };
    await writeResults(new URL("./mqtt.json", import.meta.url), results);
    console.table(runs.map((r, i) => ({ run: i + 1, ...r })));
    console.log(
      `median ${median} events/s (goal ≥ ${GOAL_PER_S}), lost or out of order: ${lost}; ${env.cpu}, Deno ${env.deno}`,
    );
    if (!results.goal_met) Deno.exitCode = 1;
  } finally {
    worker.terminate();
    await io.close();
    await reader;
  }
}
