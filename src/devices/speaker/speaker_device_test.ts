import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { encodeWav } from "../../audio/wav.ts";
import { type Clock, systemClock } from "../../clock.ts";
import { Capability, type OutputEvent } from "../../io/event.ts";
import { CommandError } from "../../process/run_command.ts";
import { SpeakerDevice, type SpeakerSettings } from "./speaker_device.ts";

/** A WAV of `ms` of a 440 Hz tone at 16 kHz, as a TTS server would give. */
function toneWav(ms: number): Uint8Array {
  const samples = (16 * ms) | 0;
  const pcm = new Uint8Array(2 * samples);
  const view = new DataView(pcm.buffer);
  for (let i = 0; i < samples; i++) {
    view.setInt16(2 * i, Math.round(8_000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)), true);
  }
  return encodeWav(pcm, 16_000);
}

/** A directory with stand-in players (shell scripts in place of `aplay`), removed at the end. */
async function players() {
  const dir = await Deno.makeTempDir({ prefix: "homed-speaker-test-" });
  const script = async (name: string, body: string) => {
    await Deno.writeTextFile(`${dir}/${name}.sh`, `${body}\n`);
    return ["sh", `${dir}/${name}.sh`];
  };
  return {
    dir,
    /** Plays by writing what it was given on standard input to `played.wav`. */
    recorder: await script("recorder", `cat > "${dir}/played.wav"`),
    /** Reads its input, then never finishes (a sound card that hangs). */
    hanging: await script("hanging", `cat > /dev/null; touch "${dir}/hanging.started"; exec sleep 30`),
    /** Logs when each playback starts and ends, taking 150 ms. */
    slow: await script("slow", `echo start >> "${dir}/log"; cat > /dev/null; sleep 0.15; echo end >> "${dir}/log"`),
    exists: (name: string) => Deno.stat(`${dir}/${name}`).then(() => true, () => false),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

function speaker(
  settings: Partial<SpeakerSettings>,
  options: { media?: Record<string, Uint8Array>; clock?: Clock } = {},
) {
  const spoken: string[] = [];
  const wavs: Uint8Array[] = [];
  const device = new SpeakerDevice({
    settings: { command: ["aplay", "-q"], timeoutMs: 5_000, ...settings },
    speak: (text) => {
      spoken.push(text);
      const wav = toneWav(100 + 10 * spoken.length);
      wavs.push(wav);
      return Promise.resolve(wav);
    },
    read: (id) => Promise.resolve(options.media?.[id]),
    clock: options.clock ?? new FakeClock(),
    logger: getLogger(["test"]),
  });
  return { device, spoken, wavs };
}

const message = (text: string): OutputEvent => ({ target: "speaker", type: "message", payload: { text } });

async function rejection(work: Promise<unknown>): Promise<Error> {
  const error = await work.then(() => undefined, (error: unknown) => error);
  assert.ok(error instanceof Error, `a rejection, not ${String(error)}`);
  return error;
}

Deno.test("a message is spoken: the player gets exactly the WAV text to speech gave, on its standard input", async () => {
  await using dir = await players();
  const { device, spoken, wavs } = speaker({ command: dir.recorder });
  assert.equal(device.outputCapabilities(), Capability.Text | Capability.Audio);
  await device.send(message("  灯已打开  "));
  assert.deepEqual(spoken, ["灯已打开"]);
  assert.deepEqual(await Deno.readFile(`${dir.dir}/played.wav`), wavs[0]);
  // A failed turn is spoken too: the household hears that something went wrong.
  await device.send({ target: "speaker", type: "error", payload: { text: "The model did not answer", code: "x" } });
  assert.deepEqual(spoken, ["灯已打开", "The model did not answer"]);
  assert.deepEqual(await Deno.readFile(`${dir.dir}/played.wav`), wavs[1]);
  assert.deepEqual(device.status(), {
    played: 2,
    failures: 0,
    last_played_at: new Date(new FakeClock().now()).toISOString(),
    last_error: null,
  });
});

Deno.test("audio output plays held media by its id; a missing id or another type is refused naming it", async () => {
  await using dir = await players();
  const held = toneWav(250);
  const { device, spoken } = speaker({ command: dir.recorder }, { media: { "ab12.wav": held } });
  await device.send({ target: "speaker", type: "audio", payload: { media: "ab12.wav", text: "灯已打开" } });
  assert.deepEqual(await Deno.readFile(`${dir.dir}/played.wav`), held);
  assert.deepEqual(spoken, [], "held audio is not spoken again");
  await Deno.remove(`${dir.dir}/played.wav`);

  const missing = await rejection(device.send({ target: "speaker", type: "audio", payload: { media: "gone.wav" } }));
  assert.ok(missing instanceof TypeError);
  assert.equal(missing.message, 'The media "gone.wav" is not held by homed (any more)');
  const image = await rejection(device.send({ target: "speaker", type: "image", payload: { media: "ab12.wav" } }));
  assert.ok(image instanceof TypeError);
  assert.equal(image.message, "The speaker plays text and audio, not image output (to speaker)");
  assert.equal(await dir.exists("played.wav"), false, "the player did not run for either");
  assert.equal(device.status().failures, 2);
  assert.equal(device.status().last_error, image.message);
});

Deno.test("a player that hangs is killed at devices.speaker.timeout and the send rejects saying so", async () => {
  await using dir = await players();
  const { device } = speaker({ command: dir.hanging, timeoutMs: 300 }, { clock: systemClock });
  const started = performance.now();
  const error = await rejection(device.send(message("hello")));
  assert.ok(error instanceof CommandError);
  assert.equal(error.code, "timeout");
  assert.equal(error.message, "sh did not finish within 300 ms and was stopped (devices.speaker.command)");
  assert.ok(performance.now() - started < 5_000, "not the 30 s the player wanted");
  assert.equal(device.status().last_error, error.message);
});

Deno.test("a missing player gives a clear error naming the program and the setting", async () => {
  const { device } = speaker({ command: ["homed-no-such-aplay", "-q"] });
  const error = await rejection(device.send(message("hello")));
  assert.ok(error instanceof CommandError);
  assert.equal(error.code, "missing");
  assert.equal(
    error.message,
    "homed-no-such-aplay is not installed (not found on PATH); install it or change devices.speaker.command",
  );
});

Deno.test("two outputs never play at once, even when sent together", async () => {
  await using dir = await players();
  const { device } = speaker({ command: dir.slow });
  await Promise.all([device.send(message("one")), device.send(message("two"))]);
  assert.equal(await Deno.readTextFile(`${dir.dir}/log`), "start\nend\nstart\nend\n");
  assert.equal(device.status().played, 2);
});

Deno.test("stopping the speaker cuts off the sound playing", async () => {
  await using dir = await players();
  const { device } = speaker({ command: dir.hanging, timeoutMs: 60_000 }, { clock: systemClock });
  const sending = rejection(device.send(message("a long story")));
  await waitFor(() => dir.exists("hanging.started"), "the player to start");
  const started = performance.now();
  await device.stop();
  assert.equal((await sending).message, "The speaker was stopped while playing");
  assert.ok(performance.now() - started < 5_000, "killed, not waited for");
  assert.equal(device.status().failures, 1);
});
