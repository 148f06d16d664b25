/**
 * homed's MQTT device alone in a process of its own, so a test can read what a message costs the memory of the
 * process that runs it — the publisher's copy of the message stays in the test's process. Subscribes to `home/#`
 * and answers on stdout, one JSON line each:
 *
 * 1. `{"step":"ready"}` once connected and subscribed;
 * 2. `{"step":"idle",…}` after its first event (a warm-up, so the message path is loaded and compiled) and a pause:
 *    the idle resident set (`rss`) and the process's peak so far (`max_rss`, getrusage's ru_maxrss), bytes; from then
 *    on the resident set is sampled every 5 ms;
 * 3. `{"step":"done",…}` after an event from `home/done`: the idle and highest sampled `rss`, `max_rss` then, the
 *    device's status, the sources of the events after the warm-up and every line it logged; then it exits.
 *
 * Run as `deno run --v8-flags=--max-semi-space-size=1 --no-prompt --allow-read=. --allow-net=127.0.0.1
 * tests/support/mqtt_device_child.ts <broker url> [max_payload_bytes]` (homed's V8 flags, `DAEMON_V8_FLAGS`).
 *
 * @module
 */

import process from "node:process";
import type { Logger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import type { DeviceContext, InputDraft } from "../../src/io/device.ts";
import { MqttDevice } from "../../src/devices/mqtt/mqtt_device.ts";

const [url, limit] = Deno.args;
if (!url) throw new Error("usage: mqtt_device_child.ts <broker url> [max_payload_bytes]");

const lines: string[] = [];
const keep = (message: string, properties?: Record<string, unknown>) =>
  void lines.push(message.replace(/\{(\w+)\}/g, (_, key: string) => String(properties?.[key])));
const logger = { debug: keep, info: keep, warning: keep, warn: keep, error: keep } as unknown as Logger;

const say = (line: Record<string, unknown>) => console.log(JSON.stringify(line));
const maxRss = () => process.resourceUsage().maxRSS * 1_024;

let warmedUp: () => void = () => {};
const warmUp = new Promise<void>((resolve) => (warmedUp = resolve));
let finished: () => void = () => {};
const done = new Promise<void>((resolve) => (finished = resolve));
const sources: string[] = [];
const emit = (draft: InputDraft) => {
  if (sources.push(draft.source) === 1) warmedUp();
  if (draft.source === "mqtt:home/done") finished();
};

const mqtt = new MqttDevice({
  settings: {
    url,
    username: "",
    password: "",
    subscribe: ["home/#"],
    publish: [],
    ...(limit ? { maxPayloadBytes: Number(limit) } : {}),
  },
  clock: systemClock,
  logger,
});
await mqtt.start({ emit } as unknown as DeviceContext);
say({ step: "ready", state: mqtt.status().state });

await warmUp;
await new Promise((resolve) => setTimeout(resolve, 300));
const idle = Deno.memoryUsage().rss;
say({ step: "idle", rss: idle, max_rss: maxRss() });
let peak = idle;
const sampling = setInterval(() => (peak = Math.max(peak, Deno.memoryUsage().rss)), 5);

await done;
clearInterval(sampling);
peak = Math.max(peak, Deno.memoryUsage().rss);
say({
  step: "done",
  rss_idle: idle,
  rss_peak: peak,
  max_rss: maxRss(),
  status: mqtt.status(),
  events: sources.slice(1),
  log: lines,
});
await mqtt.stop();
