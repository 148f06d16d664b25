import assert from "node:assert/strict";
import type { Tool } from "../tools/tool.ts";
import { PluginDevice, pluginDeviceName } from "./plugin_device.ts";

Deno.test("plugin devices: names a device table accepts; a plugin without a channel refuses output, naming itself", async () => {
  assert.equal(pluginDeviceName("weather"), "plugin-weather");
  assert.equal(pluginDeviceName("My Notes.v2"), "plugin-My_Notes_v2");
  const device = new PluginDevice("weather", "Forecasts", []);
  assert.equal(device.outputCapabilities(), 0);
  assert.deepEqual(device.tools(), []);
  await assert.rejects(device.send({ target: "plugin-weather", type: "message", payload: { text: "hi" } }), {
    message: "plugin-weather has no output channel",
  });
});

Deno.test("plugin devices: offer the plugin's tools themselves, handler and own timeout included", () => {
  const forecast: Tool = {
    name: "weather_today",
    description: "Today's forecast",
    parameters: { type: "object", properties: {} },
    allow: "anyone",
    timeoutMs: 5_000,
    execute: () => "Sunny, 21 °C",
  };
  const device = new PluginDevice("weather", "Forecasts", [forecast]);
  assert.deepEqual(device.tools(), [forecast]);
  assert.equal(device.tools()[0], forecast, "the very tool, not a copy that could drift from it");
});
