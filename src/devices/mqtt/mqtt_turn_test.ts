/**
 * The MQTT device with the agent: a message on a subscribed topic costs no LLM call and shows up, coalesced per topic,
 * in the reference block of the next turn someone starts. (A test file, so it may reach up to `src/agent/`; the
 * device itself may not.)
 */

import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { Mosquitto, mosquittoNeed, TestMqttClient } from "../../../tests/support/mosquitto.ts";
import { RecordingDevice } from "../../../tests/support/recording_device.ts";
import { ScriptedProvider } from "../../../tests/support/scripted_provider.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { Agent } from "../../agent/core/agent.ts";
import type { Persona } from "../../agent/personal.ts";
import { systemClock } from "../../clock.ts";
import { ContextWindow } from "../../context/context_window.ts";
import { IOManager } from "../../io/io_manager.ts";
import { RouteTable } from "../../io/route_table.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import { MqttDevice, type MqttStatus } from "./mqtt_device.ts";

const broker = await mosquittoNeed();
const PERSONA: Persona = Object.freeze({ text: "# Test persona\n", source: "test", sha256: "x" });

Deno.test({
  name: "subscribed messages start no turn and show up, one row per topic, in the next turn's request",
  ignore: broker.ignore,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const clock = systemClock;
    const tools = new ToolRegistry({ clock });
    const io = new IOManager({ clock, routes: new RouteTable({}, {}, undefined), tools, logger: getLogger(["test"]) });
    const mqtt = new MqttDevice({
      settings: { url: mosquitto.url, username: "", password: "", subscribe: ["home/#"], publish: ["home/+/set"] },
      clock,
      logger: getLogger(["test", "mqtt"]),
    });
    const chat = new RecordingDevice("chat");
    await io.replaceDevices([chat, mqtt]);
    const provider = new ScriptedProvider({ personaPrefix: PERSONA.text });
    const agent = new Agent({
      io,
      provider,
      tools,
      persona: PERSONA,
      clock,
      logger: getLogger(["test"]),
      maxToolRounds: 4,
      context: new ContextWindow({ maxEntries: 30, maxTokens: 48_000 }),
      shutdownGraceMs: 1_000,
      keepReasoning: false,
    });
    await agent.start();
    try {
      await using sensor = await TestMqttClient.connect(mosquitto.url);
      await sensor.publish("home/hall/motion", "ON");
      await sensor.publish("home/hall/motion", "OFF");
      await sensor.publish("home/porch/temperature", "21.5");
      const status = () => mqtt.status() as unknown as MqttStatus;
      await waitFor(() => status().messages === 3 && io.queued === 0, "the agent to take the three events");
      assert.equal(provider.requests.length, 0, "device events start no LLM turn");
      provider.enqueue({ content: "The hall is quiet now." });
      const result = await chat.doneFor(chat.emit("Anything moving in the hall?").id);
      assert.equal(result.reply, "The hall is quiet now.");
      assert.equal(provider.requests.length, 1);
      const current = provider.requests[0]!.messages.at(-1)!.content as string;
      const rows = current.split("\n").filter((line) => / mqtt:home\//.test(line));
      assert.equal(rows.length, 2, `one row per topic:\n${current}`);
      assert.match(
        rows.find((row) => row.includes("motion"))!,
        /mqtt:home\/hall\/motion mqtt\.message ×2: \{"topic":"home\/hall\/motion","payload":"OFF","qos":1\}/,
      );
      assert.match(rows.find((row) => row.includes("porch"))!, /×1: .*"payload":"21\.5"/);
      assert.match(current, /### Recent device events \(recorded, not messages\)/);
    } finally {
      await agent.stop();
      await io.close();
    }
  },
});
