import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { RecordingDevice } from "../../tests/support/recording_device.ts";
import { testPlugins } from "../../tests/support/plugins.ts";
import type { Device } from "../io/device.ts";

const SHIPPED = fileURLToPath(new URL("../../plugins/", import.meta.url)).replace(/\/$/, "");

Deno.test("every plugin shipped in plugins/ loads without a problem: manifests valid, SKILL.md metadata parsed", async () => {
  const groups: string[][] = [];
  const plugins = testPlugins(SHIPPED, {
    devices: {
      setDevices(_group: string, devices: readonly Device[]) {
        groups.push(devices.map((device) => device.name));
        return Promise.resolve();
      },
    },
    natives: { onebot: () => new RecordingDevice("qq") },
  });
  await plugins.start();
  try {
    assert.deepEqual(plugins.problems(), []);
    const folders = [...Deno.readDirSync(SHIPPED)].filter((entry) => entry.isDirectory).map((entry) => entry.name);
    const listed = plugins.list();
    for (const folder of folders) {
      assert.ok(listed.some((plugin) => plugin.name === folder), `plugins/${folder} is loaded`);
    }
    for (const plugin of listed) {
      assert.deepEqual([plugin.name, plugin.kind, plugin.eligible, plugin.errors], [
        plugin.name,
        plugin.kind,
        true,
        [],
      ]);
    }
    assert.deepEqual(
      listed.map((plugin) => [plugin.name, plugin.kind, plugin.reasons]),
      [
        ["qq", "skill", ["no requirements"]], // its metadata.openclaw was read: it has gates, none required
        ["qq", "native", ["its device comes from the onebot factory"]],
      ],
    );
    assert.deepEqual(groups, [["qq"]], "the native factory's device, and no second device with tools of its own");
  } finally {
    await plugins.stop();
  }
});

Deno.test("the shipped QQ plugin with QQ on through onebot.enabled: no problem, no device of its own, the reason said", async () => {
  const groups: string[][] = [];
  const plugins = testPlugins(SHIPPED, {
    devices: {
      setDevices(_group: string, devices: readonly Device[]) {
        groups.push(devices.map((device) => device.name));
        return Promise.resolve();
      },
    },
    // As qq_setup.ts's factory while the core device is on: homed's own QQ serves, nothing is built.
    natives: { onebot: () => undefined },
  });
  await plugins.start();
  try {
    assert.deepEqual(plugins.problems(), [], "no warning on every start");
    assert.deepEqual(
      plugins.list().map((plugin) => [plugin.name, plugin.kind, plugin.eligible, plugin.reasons, plugin.errors]),
      [
        ["qq", "skill", true, ["no requirements"], []],
        ["qq", "native", true, ["its onebot device is already on in homed's config"], []],
      ],
    );
    assert.deepEqual(groups, [[]], "neither a second qq device nor a tool-less plugin-qq");
  } finally {
    await plugins.stop();
  }
});
