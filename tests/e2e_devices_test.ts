/**
 * Local devices end to end: a real homed with a sensor board and a console on serial ports (pseudo-terminals from
 * socat), a doorbell and a porch light on GPIO (stand-ins for libgpiod's v1 tools on PATH, printing their real
 * formats), a microphone, a speaker and a camera (stand-in commands), and strict fakes of the LLM, vision, speech-to-text
 * and text-to-speech servers. Sensor lines and edges are device events that cost no LLM call and show in the next turn;
 * the console is answered on its port; the butler switches the light, hears a spoken request, looks through the camera
 * and answers aloud.
 */

import assert from "node:assert/strict";
import { DEFAULT_CONTRACT, TEST_KEY } from "./support/contract.ts";
import { FakeLlm } from "./support/fake_llm.ts";
import { FakeStt, FakeTts, FakeVision, samplePng, sineWav } from "./support/fake_media.ts";
import { startHomed, workspace } from "./support/homed_process.ts";
import { outsideNeed, programRuns } from "./support/outside_tool.ts";
import { FarEnd } from "./support/pty_far_end.ts";
import { teardown } from "./support/teardown.ts";
import { waitFor } from "./support/wait.ts";

const socat = await outsideNeed("socat", () => programRuns("socat", ["-V"]));
type Messages = Array<{ role: string; content: string }>;

/** libgpiod v1's tools as stand-ins: gpiomon reports one press of line 17, gpioset records what it was asked. */
async function gpioTools(bin: string, dir: string): Promise<void> {
  const version = (tool: string) => `if [ "$1" = "--version" ]; then echo "${tool} (libgpiod) v1.6.3"; exit 0; fi\n`;
  const scripts: Record<string, string> = {
    gpiomon: `${version("gpiomon")}sleep 0.3\necho "event: FALLING EDGE offset: 17 timestamp: [     512.000000001]"\n` +
      "exec sleep 600\n",
    gpioget: `${version("gpioget")}out=""\nfor a in "$@"; do case "$a" in *[!0-9]*) ;; *) out="$out 1";; esac; done\n` +
      'echo "${out# }"\n',
    gpioset: `${version("gpioset")}echo "$*" >> "${dir}/gpioset.args"\n`,
  };
  for (const [name, body] of Object.entries(scripts)) {
    await Deno.writeTextFile(`${bin}/${name}`, `#!/bin/sh\n${body}`);
    await Deno.chmod(`${bin}/${name}`, 0o755);
  }
}

/** 16 kHz s16le: silence, a second of tone (speech to the detector), silence. */
function utterancePcm(): Uint8Array {
  const rate = 16_000;
  const pcm = new Uint8Array(2 * rate * 3.5);
  const view = new DataView(pcm.buffer);
  for (let i = rate; i < 2 * rate; i++) {
    view.setInt16(2 * i, Math.round(8_000 * Math.sin(2 * Math.PI * 220 * i / rate)), true);
  }
  return pcm;
}

Deno.test({
  name:
    "sensor lines and a doorbell are events; the console is answered on its port; the butler hears, looks and speaks",
  ignore: socat.ignore,
  async fn() {
    socat.assertAvailable();
    const dir = await Deno.makeTempDir({ prefix: "homed-devices-" });
    const bin = `${dir}/bin`;
    await Deno.mkdir(bin);
    await gpioTools(bin, dir);
    await Deno.writeFile(`${dir}/speech.raw`, utterancePcm());
    await Deno.writeFile(`${dir}/frame.png`, samplePng(500));
    // The microphone speaks once the test says so; the speaker keeps what it was given to play.
    await Deno.writeTextFile(
      `${dir}/capture.sh`,
      `while [ ! -f "${dir}/speak" ]; do sleep 0.05; done\ncat "${dir}/speech.raw"\nexec sleep 600\n`,
    );
    await Deno.writeTextFile(`${dir}/play.sh`, `cat > "${dir}/played.wav"\n`);
    await Deno.writeTextFile(`${dir}/snap.sh`, `cat "${dir}/frame.png"\n`);
    const sensors = await FarEnd.start(`${dir}/sensors`);
    const console = await FarEnd.start(`${dir}/console`);
    const llm = FakeLlm.start(DEFAULT_CONTRACT);
    const vision = FakeVision.start({ model: "vision-test" });
    const stt = FakeStt.start({ model: "whisper-test" });
    const tts = FakeTts.start({ model: "tts-test", voice: "zf_xiaobei" });
    const ws = await workspace({
      llm: { base_url: llm.baseUrl, api_key: TEST_KEY },
      onebot: { enabled: false },
      // A sensor line and a doorbell press in the reference block are a device's words, below the owner's: without
      // this rule the owner's porch light would wait for the owner's yes (agent.tool_policy lets the owner allow it).
      agent: { tool_policy: { gpio_set: { owner: "allow" } } },
      vision: { base_url: vision.baseUrl, model: "vision-test" },
      speech: {
        stt: { base_url: stt.baseUrl, model: "whisper-test" },
        tts: { base_url: tts.baseUrl, model: "tts-test", voice: "zf_xiaobei" },
      },
      devices: {
        serial: {
          sensors: { path: `${dir}/sensors` },
          console: { path: `${dir}/console`, turns: true, trust: "owner" },
        },
        gpio: {
          doorbell: { line: 17, direction: "in", edge: "falling", debounce: "0s" },
          porch: { line: 22, direction: "out" },
        },
        microphone: { command: ["sh", `${dir}/capture.sh`], wake_words: ["管家"] },
        speaker: { command: ["sh", `${dir}/play.sh`] },
        camera: { command: ["sh", `${dir}/snap.sh`] },
      },
    }, { PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` });
    const homed = await startHomed(ws);
    const devices = async () => (await (await fetch(`${homed.url}/api/status`)).json()).services.io.devices;
    try {
      // Events: a sensor line and the doorbell, recorded without any LLM call.
      await sensors.write("temp=21.5\n");
      await waitFor(async () => (await devices()).serial?.ports?.sensors?.lines === 1, "the sensor line");
      await waitFor(async () => (await devices()).gpio?.lines?.doorbell?.events === 1, "the doorbell press");
      assert.equal(llm.requests.length, 0, "events cost no LLM call");

      // The console: a message answered on its port; the butler switches the porch light on the way.
      llm.enqueue({ toolCalls: [{ name: "gpio_set", arguments: { name: "porch", value: 1 } }] }, {
        reply: "Porch light on.",
      });
      await console.write("status?\n");
      await waitFor(() => console.received.includes("Porch light on.\n"), "the reply on the console port");
      const asked = (llm.requests[0]!.body.messages as Messages).at(-1)!.content;
      assert.match(asked, /\[via serial:console, from console, trust owner\] status\?/);
      assert.match(asked, /temp=21\.5/, "the sensor line is in the next turn's reference block");
      assert.match(asked, /gpio:doorbell/, "and the doorbell");
      assert.equal((await Deno.readTextFile(`${dir}/gpioset.args`)).trim(), "gpiochip0 22=1");

      // The microphone: a spoken request with the wake word; the camera; the answer spoken on the speaker.
      stt.enqueue({ text: "管家，看看门口有什么" });
      vision.enqueue({ description: "A parcel on the doormat." });
      llm.enqueue({ toolCalls: [{ name: "camera_snapshot", arguments: {} }] }, { reply: "门口有一个快递。" });
      tts.enqueue({ audio: sineWav({ ms: 400 }) });
      await Deno.writeTextFile(`${dir}/speak`, "");
      await waitFor(
        () => Deno.stat(`${dir}/played.wav`).then((file) => file.size > 44, () => false),
        "the spoken reply",
      );
      assert.match(
        (llm.requests[2]!.body.messages as Messages).at(-1)!.content,
        /\[via mic, from mic, trust household\] 看看门口有什么/,
      );
      const toolResult = (llm.requests[3]!.body.messages as Messages).filter((message) => message.role === "tool").at(
        -1,
      )!;
      assert.match(
        toolResult.content,
        /^The camera shows: A parcel on the doormat\.\n\(The picture is held as media [0-9a-f]{64}\.png\.\)$/,
      );
      assert.equal(tts.requests[0]!.input, "门口有一个快递。");
      const spoken = sineWav({ ms: 400 });
      assert.deepEqual(await Deno.readFile(`${dir}/played.wav`), spoken, "the player got exactly the speech");

      const status = await devices();
      assert.equal(status.serial.ports.sensors.state, "open");
      assert.equal(status.gpio.version, "v1");
      assert.equal(status.mic.messages, 1);
      assert.equal(status.speaker.played, 1);
      assert.equal(status.camera.snapshots, 1);
    } finally {
      await teardown(
        async () => assert.equal(await homed.stop(), 0, homed.stderr()),
        () => sensors.close(),
        () => console.close(),
        () => llm.close(),
        () => vision.close(),
        () => stt.close(),
        () => tts.close(),
        () => Deno.remove(dir, { recursive: true }),
      );
    }
  },
});
