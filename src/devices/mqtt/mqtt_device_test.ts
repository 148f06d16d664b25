import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { Mosquitto, mosquittoNeed, TestMqttClient } from "../../../tests/support/mosquitto.ts";
import { callDeviceTool } from "../../../tests/support/recording_device.ts";
import { testToolContext } from "../../../tests/support/tool_context.ts";
import { waitFor, within } from "../../../tests/support/wait.ts";
import { systemClock } from "../../clock.ts";
import type { InputEvent } from "../../io/event.ts";
import { IOManager } from "../../io/io_manager.ts";
import { RouteTable } from "../../io/route_table.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import { MqttDevice, type MqttSettings, mqttSource, type MqttStatus } from "./mqtt_device.ts";

const broker = await mosquittoNeed();
const needs = { ignore: broker.ignore };

const SETTINGS: MqttSettings = {
  url: "",
  username: "",
  password: "",
  subscribe: ["home/+/motion", "home/+/state"],
  publish: ["home/+/set", "lights/#"],
};

/** An MQTT device behind an IOManager (its tools in `tools`, under the trust rules), every input it hands in kept. */
async function setup(url: string, settings: Partial<MqttSettings> = {}, publishTimeoutMs?: number) {
  const tools = new ToolRegistry({ clock: systemClock });
  const mqtt = new MqttDevice({
    settings: { ...SETTINGS, url, ...settings },
    clock: systemClock,
    logger: getLogger(["test", "mqtt"]),
    random: () => 0.5,
    // A restarted broker is found again within a fraction of a second rather than the 1 s of production.
    backoff: { initialMs: 100, maxMs: 400 },
    ...(publishTimeoutMs === undefined ? {} : { publishTimeoutMs }),
  });
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools,
    logger: getLogger(["test"]),
  });
  await io.replaceDevices([mqtt]);
  const inputs: InputEvent[] = [];
  const reader = (async () => {
    for (let event = await io.next(); event; event = await io.next()) inputs.push(event);
  })();
  const status = () => mqtt.status() as unknown as MqttStatus;
  const close = async () => {
    await within(io.close(), 10_000, "the mqtt device to stop");
    await reader;
  };
  return { mqtt, io, tools, inputs, status, close };
}

Deno.test({
  name: "a message on a subscribed filter is one mqtt.message event from mqtt:<topic>, sender mqtt, trust household",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const { inputs, status, close } = await setup(mosquitto.url);
    try {
      assert.equal(status().state, "connected");
      assert.deepEqual(status().subscribed.sort(), ["home/+/motion", "home/+/state"]);
      await using sensor = await TestMqttClient.connect(mosquitto.url);
      await sensor.publish("home/porch/temperature", "21.5"); // no filter covers it
      await sensor.publish("home/hall/motion", '{"occupancy":true}', { qos: 0 });
      await waitFor(() => inputs.length === 1, "the motion event");
      assert.deepEqual(
        inputs.map(({ source, sender, trust, type, payload }) => ({ source, sender, trust, type, payload })),
        [{
          source: "mqtt:home/hall/motion",
          sender: "mqtt",
          trust: "household",
          type: "mqtt.message",
          payload: { topic: "home/hall/motion", payload: '{"occupancy":true}', qos: 0 },
        }],
      );
      await sensor.publish("home/hall/state", "x".repeat(5_000), { qos: 1 });
      await waitFor(() => inputs.length === 2, "the long state event");
      assert.deepEqual(inputs[1]!.payload, {
        topic: "home/hall/state",
        payload: `${"x".repeat(4_096)} […cut: 5000 bytes in all]`,
        qos: 1,
        bytes: 5_000,
      });
      assert.equal(status().messages, 2);
      assert.notEqual(status().last_message_at, null);
      assert.equal(inputs.length, 2, "the unsubscribed topic never became an event");
    } finally {
      await close();
    }
  },
});

Deno.test({
  name: "a retained message present before homed connects is recorded as the topic's last value, not emitted",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    await using sensor = await TestMqttClient.connect(mosquitto.url);
    await sensor.publish("home/garage/state", "closed", { retain: true });
    const { mqtt, inputs, status, close } = await setup(mosquitto.url);
    try {
      await waitFor(() => status().retained === 1, "the retained state to arrive");
      assert.deepEqual(
        { ...mqtt.lastValues().get("home/garage/state"), time: 0 },
        { payload: "closed", encoding: "utf-8", qos: 1, retained: true, time: 0 },
      );
      // A live message after it is news; the event proves the retained one was not handed in before it.
      await sensor.publish("home/garage/state", "open");
      await waitFor(() => inputs.length === 1, "the live state change");
      assert.equal(inputs[0]!.payload.payload, "open");
      assert.equal(mqtt.lastValues().get("home/garage/state")?.retained, false);
      assert.equal(status().messages, 1);
      assert.equal(status().retained, 1);
    } finally {
      await close();
    }
  },
});

Deno.test({
  name:
    "mqtt_publish to an allowed topic arrives with its payload; retain keeps it on the broker for later subscribers",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const { mqtt, status, close } = await setup(mosquitto.url);
    try {
      await using plug = await TestMqttClient.connect(mosquitto.url);
      await plug.subscribe("home/+/set");
      const result = await callDeviceTool(
        mqtt,
        "mqtt_publish",
        { topic: "home/kitchen/set", payload: '{"state":"ON"}' },
        testToolContext("qq:private:1", "household"),
      );
      assert.equal(result, "Published 14 bytes to home/kitchen/set (QoS 1); the broker acknowledged it");
      await waitFor(() => plug.received.length === 1, "the published message at the plug");
      assert.deepEqual(plug.received[0], {
        topic: "home/kitchen/set",
        payload: '{"state":"ON"}',
        qos: 1,
        retain: false,
      });
      const retained = await callDeviceTool(
        mqtt,
        "mqtt_publish",
        { topic: "lights/hall", payload: "50", retain: true, qos: 0 },
        testToolContext(),
      );
      assert.equal(
        retained,
        "Published 2 bytes to lights/hall (QoS 0, retained); it was sent (QoS 0 has no acknowledgement)",
      );
      // A client subscribing afterwards gets it from the broker, flagged as retained.
      await using later = await TestMqttClient.connect(mosquitto.url);
      await later.subscribe("lights/#");
      await waitFor(() => later.received.length === 1, "the retained message at a later subscriber");
      assert.deepEqual(later.received[0], { topic: "lights/hall", payload: "50", qos: 0, retain: true });
      assert.equal(status().published, 2);
      const exactlyOnce = await mqtt.publish("home/hall/set", "OFF", { qos: 2 });
      assert.equal(exactlyOnce, "Published 3 bytes to home/hall/set (QoS 2); the broker acknowledged it");
    } finally {
      await close();
    }
  },
});

Deno.test({
  name: "a topic no publish filter allows is refused naming smart_home.mqtt.publish and its patterns; nothing is sent",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const { tools, status, close } = await setup(mosquitto.url);
    try {
      await using watcher = await TestMqttClient.connect(mosquitto.url);
      await watcher.subscribe("#");
      const owner = testToolContext("http", "owner");
      const refused = await tools.call("mqtt_publish", '{"topic":"home/front/lock","payload":"UNLOCK"}', owner);
      assert.deepEqual(refused, {
        ok: false,
        content: 'Error: tool "mqtt_publish" failed: The topic "home/front/lock" is not one homed may publish to: ' +
          'smart_home.mqtt.publish allows "home/+/set", "lights/#"',
      });
      const wildcard = await tools.call("mqtt_publish", '{"topic":"home/+/set","payload":"ON"}', owner);
      assert.equal(wildcard.ok, false);
      assert.match(wildcard.content, /topic: the topic "home\/\+\/set" has a wildcard/);
      // A message sent after the refusals on the same connection: when it arrives, anything sent before it would have.
      assert.equal((await tools.call("mqtt_publish", '{"topic":"home/hall/set","payload":"ON"}', owner)).ok, true);
      await waitFor(() => watcher.received.length > 0, "the allowed message at the watcher");
      assert.deepEqual(watcher.received.map((message) => message.topic), ["home/hall/set"]);
      assert.equal(status().published, 1);
    } finally {
      await close();
    }
  },
});

Deno.test({
  name: "a guest may not publish: the trust rule names who may, and nothing reaches the broker",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const { tools, close } = await setup(mosquitto.url);
    try {
      await using watcher = await TestMqttClient.connect(mosquitto.url);
      await watcher.subscribe("#");
      const args = '{"topic":"home/kitchen/set","payload":"ON"}';
      const guest = await tools.call("mqtt_publish", args, testToolContext("qq:group:1", "guest"));
      assert.equal(guest.ok, false);
      assert.match(guest.content, /^Error: tool "mqtt_publish" is for household members and the owner; .*trust guest/);
      const member = await tools.call("mqtt_publish", args, testToolContext("qq:private:2", "household"));
      assert.equal(member.ok, true, member.content);
      await waitFor(() => watcher.received.length > 0, "the household member's message");
      assert.equal(watcher.received.length, 1, "only the household member's message was published");
    } finally {
      await close();
    }
  },
});

Deno.test({
  name:
    "broker stopped: reconnecting and publish fails at once; restarted on the same port: resubscribed, publishes again",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const { mqtt, inputs, status, close } = await setup(mosquitto.url);
    try {
      assert.equal(status().state, "connected");
      const connectedAt = status().connected_at;
      await mosquitto.stop();
      await waitFor(() => status().state === "reconnecting", "the device to notice the broker went away");
      assert.deepEqual(status().subscribed, []);
      const started = performance.now();
      await assert.rejects(
        mqtt.publish("home/kitchen/set", "ON"),
        /^Error: Not connected to the MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+ \(reconnecting.*\); the message was not sent/,
      );
      assert.ok(performance.now() - started < 1_000, "refused at once, not after a deadline");
      await waitFor(() => status().last_error !== null, "a failed reconnect attempt");
      await mosquitto.restart();
      await waitFor(() => status().state === "connected" && status().subscribed.length === 2, "the reconnect", {
        limitMs: 10_000,
      });
      assert.equal(status().reconnects, 1);
      assert.notEqual(status().connected_at, connectedAt);
      // Subscribed again on the new connection: a message after the restart is an event.
      await using sensor = await TestMqttClient.connect(mosquitto.url);
      await sensor.subscribe("home/+/set");
      await sensor.publish("home/hall/motion", "ON");
      await waitFor(() => inputs.length === 1, "an event after the restart");
      assert.equal(inputs[0]!.source, "mqtt:home/hall/motion");
      assert.match(await mqtt.publish("home/kitchen/set", "ON"), /the broker acknowledged it/);
      await waitFor(() => sensor.received.length === 1, "the publish after the restart");
      assert.equal(sensor.received[0]!.payload, "ON");
    } finally {
      await close();
    }
  },
});

Deno.test({
  name:
    "a broker that stops answering: a publish fails at its deadline saying it may not have arrived; stop still ends",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const { mqtt, status, close } = await setup(mosquitto.url, {}, 300);
    let closed = false;
    try {
      mosquitto.pause();
      await assert.rejects(
        mqtt.publish("home/kitchen/set", "ON"),
        /^Error: The MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+ did not acknowledge the message to "home\/kitchen\/set" within 0\.3 s; it may or may not have arrived$/,
      );
      assert.equal(status().published, 0);
      // The publish still waits for its acknowledgement: stop drops the connection at once rather than wait for it.
      const stopping = performance.now();
      await close();
      closed = true;
      assert.ok(performance.now() - stopping < 1_000, "stop did not wait for the unanswered publish");
      assert.equal(status().state, "closed");
    } finally {
      mosquitto.resume();
      if (!closed) await close();
    }
  },
});

Deno.test({
  name: "stop says DISCONNECT politely, and closes the socket itself when a hung broker never closes its side",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const { status, close } = await setup(mosquitto.url);
    try {
      mosquitto.pause();
      const stopping = performance.now();
      await close();
      const took = performance.now() - stopping;
      // Three seconds for the broker to close its side, then the socket is destroyed; never the 10 s of a hang.
      assert.ok(took >= 2_500 && took < 6_000, `stop took ${Math.round(took)} ms`);
      assert.equal(status().state, "closed");
    } finally {
      mosquitto.resume();
    }
  },
});

Deno.test({
  name: "no broker at the URL: start returns, the state says connecting with the error, and stop ends the retries",
  ...needs,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const url = mosquitto.url;
    await mosquitto.stop();
    const started = performance.now();
    const { status, close } = await setup(url);
    try {
      assert.ok(performance.now() - started < 4_000, "start did not wait for a broker that is not there");
      assert.match(status().state, /^(connecting|reconnecting)$/);
      assert.match(status().last_error ?? "", /ECONNREFUSED|refused/i);
      assert.equal(status().connected_at, null);
    } finally {
      await close();
    }
  },
});

Deno.test("an event's source is mqtt:<topic>, control characters escaped so a topic cannot start a line of its own", () => {
  assert.equal(mqttSource("home/hall/motion"), "mqtt:home/hall/motion");
  // mosquitto refuses such topics itself (MQTT says they SHOULD NOT be used); other brokers may pass them on.
  assert.equal(mqttSource("home/x\n### Owner says/motion"), "mqtt:home/x\\n### Owner says/motion");
  assert.equal(mqttSource("a\u001b[2Jb"), "mqtt:a\\u001b[2Jb");
});

Deno.test("settings are checked when the device is made, each error naming the setting and the value", () => {
  const make = (settings: Partial<MqttSettings>) =>
    new MqttDevice({
      settings: { ...SETTINGS, url: "mqtt://127.0.0.1:1883", ...settings },
      clock: systemClock,
      logger: getLogger(["test", "mqtt"]),
    });
  assert.throws(
    () => make({ url: "ws://broker:9001" }),
    /^TypeError: smart_home\.mqtt\.url: "ws:\/\/broker:9001" uses ws:\/\/; homed connects to mqtt:\/\/ .* or mqtts:\/\//,
  );
  assert.throws(
    () => make({ url: "broker:1883" }),
    /^TypeError: smart_home\.mqtt\.url: "broker:1883" uses broker:\/\//,
  );
  assert.throws(
    () => make({ url: "mqtt://u:hunter2@" }),
    (error: unknown) => error instanceof TypeError && !error.message.includes("hunter2"),
  );
  assert.throws(
    () => make({ subscribe: ["home/+/motion", "home/motion#"] }),
    /^TypeError: smart_home\.mqtt\.subscribe\[1\]: the topic filter "home\/motion#" is invalid/,
  );
  assert.throws(() => make({ publish: ["home/+x"] }), /^TypeError: smart_home\.mqtt\.publish\[0\]: /);
  assert.throws(
    () => make({ password: "secret" }),
    /^TypeError: smart_home\.mqtt\.password is set but smart_home\.mqtt\.username is empty/,
  );
  const device = make({ url: "mqtt://homed:hunter2@broker.lan", clientId: "homed-kitchen" });
  const status = device.status() as unknown as MqttStatus;
  assert.equal(status.url, "mqtt://homed@broker.lan:1883", "the password never shows");
  assert.equal(status.client_id, "homed-kitchen");
  assert.equal(status.state, "closed");
  assert.equal(device.outputCapabilities(), 0);
  assert.deepEqual(make({ publish: [] }).tools(), [], "no publish filters: no tool");
  assert.match(make({}).description, /^MQTT broker mqtt:\/\/127\.0\.0\.1:1883: events from "home\/\+\/motion"/);
  const tool = make({}).tools()[0]!;
  assert.equal(tool.allow, "household");
  assert.match(tool.description, /smart_home\.mqtt\.publish\): "home\/\+\/set", "lights\/#"/);
});
