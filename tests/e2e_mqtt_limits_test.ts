/**
 * MQTT's size limit end to end, against a real mosquitto: a 20 MB message on a subscribed topic — a camera's picture
 * — is dropped as it streams in (`smart_home.mqtt.max_payload_bytes`, 256 KiB by default), counted in
 * `/api/status`, logged once, and costs the process that runs the MQTT device no more than a few MB; the small
 * message after it still arrives as an event.
 */

import assert from "node:assert/strict";
import { DAEMON_V8_FLAGS } from "../src/rights/command_flags.ts";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { childEnv, REPO, startHomed, workspace } from "./support/homed_process.ts";
import { Mosquitto, mosquittoNeed, TestMqttClient } from "./support/mosquitto.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor, within } from "./support/wait.ts";

const broker = await mosquittoNeed();
const BIG = 20 * 1_048_576;
const MB = 1_048_576;
/** What a dropped 20 MB message may add to the device process's resident set (MQTT.js alone: +60 to +100 MB). */
const GROWTH_LIMIT = 16 * MB;

/** Lines of JSON from a child's stdout, one `next()` at a time. */
function jsonLines(stream: ReadableStream<Uint8Array>): AsyncIterator<Record<string, unknown>> {
  return (async function* () {
    let buffer = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      buffer += text;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        yield JSON.parse(buffer.slice(0, end)) as Record<string, unknown>;
        buffer = buffer.slice(end + 1);
      }
    }
  })();
}

Deno.test({
  name: "a 20 MB message costs the MQTT device's process a few MB at most; the next message is its one event",
  ignore: broker.ignore,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        DAEMON_V8_FLAGS,
        "--no-prompt",
        "--allow-read=.",
        "--allow-net=127.0.0.1",
        "tests/support/mqtt_device_child.ts",
        mosquitto.url,
      ],
      cwd: REPO,
      env: childEnv(),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    const lines = jsonLines(child.stdout);
    const step = async (name: string) => {
      const { value, done } = await within(lines.next(), 30_000, `the device's "${name}" line`);
      if (done) assert.fail(`the device process ended before "${name}": ${await stderr}`);
      assert.equal(value.step, name, JSON.stringify(value));
      return value;
    };
    let exited = false;
    try {
      assert.equal((await step("ready")).state, "connected");
      await using camera = await TestMqttClient.connect(mosquitto.url);
      await camera.publish("home/warmup", "1");
      const idle = await step("idle");
      const big = "j".repeat(BIG);
      await camera.publish("home/cam/snapshot", big, { qos: 1 });
      await camera.publish("home/cam/snapshot", big, { qos: 0 });
      await camera.publish("home/done", "ON");
      const done = await step("done");
      const status = done.status as Record<string, unknown>;
      const growth = {
        sampled: (done.rss_peak as number) - (done.rss_idle as number),
        peak: (done.max_rss as number) - (idle.max_rss as number),
      };
      const shown = `idle ${((done.rss_idle as number) / MB).toFixed(1)} MB, sampled peak +${
        (growth.sampled / MB).toFixed(1)
      } MB, ru_maxrss +${(growth.peak / MB).toFixed(1)} MB`;
      console.log(`MQTT device process: ${shown}`);
      // First, so a device that buffers the message fails here (+60 to +100 MB) rather than on what follows.
      assert.ok(growth.sampled < GROWTH_LIMIT && growth.peak < GROWTH_LIMIT, shown);
      assert.deepEqual(done.events, ["mqtt:home/done"], "the small message is the one event");
      assert.equal(status.oversize, 2);
      assert.equal(status.messages, 2, "the warm-up and the small message");
      assert.deepEqual({ ...(status.last_oversize as object), at: "" }, {
        topic: "home/cam/snapshot",
        bytes: BIG,
        at: "",
      });
      const named = (done.log as string[]).filter((line) => line.includes("max_payload_bytes"));
      assert.equal(named.length, 1, named.join("\n"));
      assert.match(
        named[0]!,
        /dropped a message of 20971520 bytes on home\/cam\/snapshot: over smart_home\.mqtt\.max_payload_bytes \(262144\)/,
      );
      assert.equal((await child.status).code, 0, await stderr);
      exited = true;
    } finally {
      if (!exited) {
        child.kill("SIGKILL");
        await child.status;
      }
      while (!(await lines.next()).done) { /* the rest of stdout */ }
      await stderr;
    }
  },
});

Deno.test({
  name: "homed: a message over smart_home.mqtt.max_payload_bytes shows in /api/status and is logged once per topic",
  ignore: broker.ignore,
  fn: async () => {
    broker.assertAvailable();
    await using mosquitto = await Mosquitto.start();
    const llm = FakeLlm.start(DEFAULT_CONTRACT);
    const homed = await startHomed(
      await workspace({
        llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
        smart_home: { mqtt: { url: mosquitto.url, subscribe: ["home/#"], max_payload_bytes: 65_536 } },
      }),
    );
    const status = async () => (await (await fetch(`${homed.url}/api/status`)).json()).services.io.devices.mqtt;
    try {
      await waitFor(async () => (await status())?.subscribed?.length === 1, "homed subscribed to home/#");
      await using camera = await TestMqttClient.connect(mosquitto.url);
      const big = "j".repeat(BIG);
      await camera.publish("home/cam/snapshot", big, { qos: 1 });
      await camera.publish("home/cam/snapshot", "k".repeat(65_537), { qos: 1 });
      await camera.publish("home/hall/motion", "ON", { qos: 1 });
      await waitFor(async () => (await status()).messages === 1, "the small message");
      const shown = await status();
      assert.equal(shown.max_payload_bytes, 65_536);
      assert.equal(shown.oversize, 2);
      assert.equal(shown.last_oversize.bytes, 65_537);
      assert.equal(shown.reconnects, 0);
      const lines = homed.stderr().split("\n").filter((line) => line.includes("max_payload_bytes"));
      assert.equal(lines.length, 1, homed.stderr());
      assert.match(
        lines[0]!,
        /dropped a message of 20971520 bytes on home\/cam\/snapshot: over smart_home\.mqtt\.max_payload_bytes \(65536\)/,
      );
    } finally {
      await teardown(
        async () => assert.equal(await homed.stop(), 0, homed.stderr()),
        () => llm.close(),
      );
    }
  },
});
