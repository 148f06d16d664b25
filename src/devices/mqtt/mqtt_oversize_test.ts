import assert from "node:assert/strict";
import type { Logger } from "@logtape/logtape";
import { Mosquitto, mosquittoNeed, TestMqttClient } from "../../../tests/support/mosquitto.ts";
import { waitFor, within } from "../../../tests/support/wait.ts";
import { systemClock } from "../../clock.ts";
import type { DeviceContext, InputDraft } from "../../io/device.ts";
import { MQTT_OVERSIZE_TOPICS_LOGGED, MqttDevice, type MqttStatus } from "./mqtt_device.ts";

const broker = await mosquittoNeed();
const needs = { ignore: broker.ignore };

/** A logger that keeps every line, its `{placeholders}` filled in. */
function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const keep = (message: string, properties?: Record<string, unknown>) =>
    void lines.push(message.replace(/\{(\w+)\}/g, (_, key: string) => String(properties?.[key])));
  const logger = { debug: keep, info: keep, warning: keep, warn: keep, error: keep } as unknown as Logger;
  return { logger, lines };
}

/** The device on its own, every event it hands in kept. */
async function startDevice(url: string, maxPayloadBytes: number) {
  const { logger, lines } = recordingLogger();
  const mqtt = new MqttDevice({
    settings: {
      url,
      username: "",
      password: "",
      subscribe: ["home/+/state", "home/+/motion"],
      publish: [],
      maxPayloadBytes,
    },
    clock: systemClock,
    logger,
  });
  const events: InputDraft[] = [];
  await mqtt.start({ emit: (draft: InputDraft) => void events.push(draft) } as unknown as DeviceContext);
  const status = () => mqtt.status() as unknown as MqttStatus;
  return { mqtt, events, lines, status };
}

Deno.test({
  name:
    "a message over max_payload_bytes is no event: dropped, acknowledged, counted and logged once per topic; the next one arrives",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    // One QoS 1 message in flight at a time: a drop homed did not acknowledge would hold back every later one.
    await using mosquitto = await Mosquitto.start({ config: ["max_inflight_messages 1"] });
    const { mqtt, events, lines, status } = await startDevice(mosquitto.url, 1_024);
    try {
      assert.equal(status().state, "connected");
      assert.equal(status().max_payload_bytes, 1_024);
      await using sensor = await TestMqttClient.connect(mosquitto.url);
      // QoS 0 first: the broker sends it at once, where QoS 1 ones wait their turn in flight.
      await sensor.publish("home/door/state", "z".repeat(5_000), { qos: 0 });
      await sensor.publish("home/cam/state", "x".repeat(2_000), { qos: 1 });
      await sensor.publish("home/cam/state", "y".repeat(3_000), { qos: 1 });
      await sensor.publish("home/hall/state", "s".repeat(1_024), { qos: 1 }); // exactly the limit
      await sensor.publish("home/hall/motion", "ON", { qos: 1 });
      await waitFor(() => events.length === 2, "the two messages within the limit, as events");
      assert.deepEqual(events.map((event) => [event.source, (event.payload as { payload: string }).payload.length]), [
        ["mqtt:home/hall/state", 1_024],
        ["mqtt:home/hall/motion", 2],
      ]);
      assert.equal(status().oversize, 3);
      assert.equal(status().messages, 2);
      assert.equal(status().last_oversize?.topic, "home/cam/state");
      assert.equal(status().last_oversize?.bytes, 3_000);
      assert.ok(!mqtt.lastValues().has("home/cam/state"), "a dropped message is not a topic's last value either");
      const warnings = lines.filter((line) => line.includes("max_payload_bytes"));
      assert.deepEqual(warnings, [
        "MQTT: dropped a message of 5000 bytes on home/door/state: over smart_home.mqtt.max_payload_bytes (1024); " +
        "later ones on this topic are dropped and counted (status: oversize) without another line",
        "MQTT: dropped a message of 2000 bytes on home/cam/state: over smart_home.mqtt.max_payload_bytes (1024); " +
        "later ones on this topic are dropped and counted (status: oversize) without another line",
      ]);
      assert.equal(status().reconnects, 0, "the connection stayed up");
    } finally {
      await within(mqtt.stop(), 10_000, "the device to stop");
    }
  },
});

Deno.test({
  name: "a retained message over the limit is dropped too, and the broker's later live messages still come",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start({ config: ["max_inflight_messages 1"] });
    await using sensor = await TestMqttClient.connect(mosquitto.url);
    await sensor.publish("home/cam/state", "r".repeat(4_096), { qos: 1, retain: true });
    const { mqtt, events, status } = await startDevice(mosquitto.url, 1_024);
    try {
      await waitFor(() => status().oversize === 1, "the retained message to be dropped");
      await sensor.publish("home/cam/state", "idle", { qos: 1 });
      await waitFor(() => events.length === 1, "the live message after it");
      assert.equal(status().retained, 0);
      assert.equal(mqtt.lastValues().get("home/cam/state")?.payload, "idle");
    } finally {
      await within(mqtt.stop(), 10_000, "the device to stop");
    }
  },
});

Deno.test({
  name: "oversize messages on more than 1000 topics: the first 1000 are named, then one line says the rest are not",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const { mqtt, lines, status } = await startDevice(mosquitto.url, 1_024);
    try {
      await using flood = await TestMqttClient.connect(mosquitto.url);
      const big = "f".repeat(1_100);
      for (let i = 0; i < MQTT_OVERSIZE_TOPICS_LOGGED + 50; i++) flood.publishNow(`home/t${i}/state`, big);
      for (let i = 0; i < 50; i++) flood.publishNow("home/t0/state", big);
      await flood.flushed();
      await waitFor(() => status().oversize === MQTT_OVERSIZE_TOPICS_LOGGED + 100, "every oversize message counted");
      const named = lines.filter((line) => line.includes("max_payload_bytes"));
      assert.equal(named.length, MQTT_OVERSIZE_TOPICS_LOGGED + 1);
      assert.match(named.at(-1)!, /came on 1000 topics; further ones are dropped and counted .* without naming them/);
    } finally {
      await within(mqtt.stop(), 10_000, "the device to stop");
    }
  },
});

Deno.test("max_payload_bytes out of range is refused when the device is made, naming the setting and the value", () => {
  const make = (maxPayloadBytes: number) =>
    new MqttDevice({
      settings: {
        url: "mqtt://127.0.0.1:1883",
        username: "",
        password: "",
        subscribe: [],
        publish: [],
        maxPayloadBytes,
      },
      clock: systemClock,
      logger: recordingLogger().logger,
    });
  for (const bad of [0, 1_023, 1_500.5, 67_108_865]) {
    assert.throws(
      () => make(bad),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message.startsWith(`smart_home.mqtt.max_payload_bytes: ${bad} is not a size homed allows; use a whole`),
      String(bad),
    );
  }
  assert.equal((make(1_024).status() as unknown as MqttStatus).max_payload_bytes, 1_024);
});
