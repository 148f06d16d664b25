import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { workspace } from "../../tests/support/homed_process.ts";
import { loadConfig } from "../config/load.ts";
import { log } from "../log/logging.ts";
import { scheduleBaseline } from "./tracker_setup.ts";

async function loadedIn() {
  const ws = await workspace({ paths: { knowledge: "knowledge" } });
  await Deno.mkdir(join(ws.dir, "knowledge", "tea"), { recursive: true });
  await Deno.writeTextFile(join(ws.dir, "knowledge", "tea", "content.md"), "# Tea\nGreen tea at 80 °C.\n");
  const loaded = await loadConfig({ flag: ws.configPath, readEnv: (name) => ws.env[name], cwd: ws.dir });
  return { dir: ws.dir, loaded, manifest: join(loaded.config.daemon.data_dir, "tracker", "manifest.json") };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("the first baseline: the stop waits for the one being written, so nothing writes into the data dir after it", async () => {
  const { dir, loaded, manifest } = await loadedIn();
  try {
    const clock = new FakeClock();
    const stop = scheduleBaseline(loaded, clock, log("tracker"));
    clock.advance(1_000);
    // Stopping right after it began: the stop resolves only once the manifest is whole.
    await stop();
    const written = JSON.parse(await Deno.readTextFile(manifest));
    assert.ok(JSON.stringify(written).includes("content.md"), JSON.stringify(written));
    const tracker = join(loaded.config.daemon.data_dir, "tracker");
    const left = [...Deno.readDirSync(join(tracker, "objects"))].filter((entry) => entry.name.endsWith(".tmp"));
    assert.deepEqual(left, [], "no half-written object is left");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the first baseline: a stop before its second cancels it, and nothing is written", async () => {
  const { dir, loaded, manifest } = await loadedIn();
  try {
    const clock = new FakeClock();
    const stop = scheduleBaseline(loaded, clock, log("tracker"));
    clock.advance(999);
    await stop();
    clock.advance(10_000);
    assert.equal(await exists(manifest), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
