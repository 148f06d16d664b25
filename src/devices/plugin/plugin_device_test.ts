import assert from "node:assert/strict";
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
  assert.throws(() => device.execute("nope", {}, {} as never), { message: "plugin-weather has no tool nope" });
});
