import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../../tests/support/fake_clock.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { decodeWav, durationMs } from "../../audio/wav.ts";
import { type Clock, systemClock } from "../../clock.ts";
import type { InputEvent } from "../../io/event.ts";
import { IOManager } from "../../io/io_manager.ts";
import { RouteTable } from "../../io/route_table.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import { CALLED_TEXT, matchWakeWord, MicrophoneDevice, type MicrophoneSettings } from "./microphone_device.ts";

const RATE = 16_000;

/** s16le mono at 16 kHz: 1 s of silence, then each tone length (a 440 Hz tone) followed by 1.2 s of silence. */
function speech(toneMs: readonly number[]): Uint8Array {
  const parts = [
    { ms: 1_000, amplitude: 0 },
    ...toneMs.flatMap((ms) => [{ ms, amplitude: 8_000 }, { ms: 1_200, amplitude: 0 }]),
  ];
  const total = parts.reduce((sum, part) => sum + (part.ms * RATE) / 1000, 0);
  const pcm = new Uint8Array(2 * total);
  const view = new DataView(pcm.buffer);
  let i = 0;
  for (const part of parts) {
    const end = i + (part.ms * RATE) / 1000;
    for (; i < end; i++) {
      view.setInt16(2 * i, Math.round(part.amplitude * Math.sin((2 * Math.PI * 440 * i) / RATE)), true);
    }
  }
  return pcm;
}

/**
 * A stand-in for `arecord -t raw`: a shell script that prints the PCM file (as arecord prints what it records) and
 * then, with `stay`, keeps running like a real capture does; without, exits.
 */
async function standIn(pcm: Uint8Array, options: { stay: boolean; ignoreTerm?: boolean }) {
  const dir = await Deno.makeTempDir({ prefix: "homed-mic-test-" });
  await Deno.writeFile(`${dir}/capture.raw`, pcm);
  const script = [
    options.ignoreTerm ? "trap '' TERM" : "",
    'touch "$1.started"',
    'cat "$1"',
    options.stay ? "exec sleep 30" : "",
  ].filter(Boolean).join("\n");
  await Deno.writeTextFile(`${dir}/capture.sh`, `${script}\n`);
  return {
    command: ["sh", `${dir}/capture.sh`, `${dir}/capture.raw`],
    /** Once the script has run this far (past its trap), this file exists. */
    started: () => Deno.stat(`${dir}/capture.raw.started`).then(() => true, () => false),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

const SETTINGS: MicrophoneSettings = {
  command: [],
  sampleRate: RATE,
  trust: "household",
  wakeWords: [],
  threshold: 600,
  minSpeechMs: 300,
  endSilenceMs: 800,
  maxUtteranceMs: 15_000,
};

/** A microphone under an IOManager, whose inputs the test reads. */
async function setup(
  settings: Partial<MicrophoneSettings>,
  hear: (wav: Uint8Array, signal: AbortSignal) => Promise<string>,
  clock: Clock = new FakeClock(),
) {
  const mic = new MicrophoneDevice({
    settings: { ...SETTINGS, ...settings },
    hear,
    clock,
    logger: getLogger(["test"]),
  });
  const io = new IOManager({
    clock,
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
  });
  await io.replaceDevices([mic]);
  const inputs: InputEvent[] = [];
  const reader = (async () => {
    for (let event = await io.next(); event; event = await io.next()) inputs.push(event);
  })();
  const close = async () => {
    await io.close();
    await reader;
  };
  return { mic, io, inputs, close };
}

/** A `hear` that answers with `transcripts` in turn and records the WAV files it got. */
function scripted(transcripts: ReadonlyArray<string | Error>) {
  const heard: Uint8Array[] = [];
  const hear = (wav: Uint8Array) => {
    const next = transcripts[heard.length];
    heard.push(wav);
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next ?? "");
  };
  return { hear, heard };
}

Deno.test("wake words: only what starts with one becomes a message from mic, the word removed", async () => {
  await using capture = await standIn(speech([600, 600, 600, 600, 600]), { stay: true });
  const stt = scripted(["管家，开灯", "Homed what time is it", "今天天气不错", "管家。", "  "]);
  const { mic, inputs, close } = await setup({ command: capture.command, wakeWords: ["管家", "homed"] }, stt.hear);
  await waitFor(() => mic.status().transcribed === 5, "five transcripts");
  await waitFor(() => inputs.length === 3, "three messages");
  assert.deepEqual(inputs.map((e) => [e.source, e.sender, e.trust, e.type, e.payload]), [
    ["mic", "mic", "household", "message", { text: "开灯", spoken: true }],
    ["mic", "mic", "household", "message", { text: "what time is it", spoken: true }],
    ["mic", "mic", "household", "message", { text: CALLED_TEXT, spoken: true }],
  ]);
  const status = mic.status();
  assert.equal(status.utterances, 5);
  assert.equal(status.ignored_without_wake_word, 1, "今天天气不错 is background talk");
  assert.equal(status.messages, 3, "the empty transcript is no message either");
  assert.equal(typeof status.last_heard_at, "string");
  // Each utterance reached speech to text as a WAV of the capture's rate: 200 ms pre-roll + 600 ms + 200 ms tail.
  const wav = decodeWav(stt.heard[0]!);
  assert.equal(wav.sampleRate, RATE);
  assert.equal(wav.channels, 1);
  assert.equal(durationMs(wav), 1_000);
  assert.equal((status.capture as { running: boolean }).running, true, "the capture keeps running");
  await close();
});

Deno.test("a failing speech-to-text call is counted and logged; the next utterance is still handled", async () => {
  await using capture = await standIn(speech([600, 700]), { stay: false });
  const stt = scripted([new Error("connection refused (http://127.0.0.1:8000/v1)"), "开灯"]);
  const { mic, inputs, close } = await setup({ command: capture.command }, stt.hear);
  await waitFor(() => inputs.length === 1, "the message after the failure");
  assert.equal(inputs[0]!.payload.text, "开灯");
  const status = mic.status();
  assert.equal(status.stt_failures, 1);
  assert.equal(status.transcribed, 1);
  assert.equal(status.last_error, "Speech to text failed: connection refused (http://127.0.0.1:8000/v1)");
  // The stand-in exited after its file: the watched command says so and waits (the fake clock) to start it again.
  await waitFor(() => (mic.status().capture as { restart_in_ms: number | null }).restart_in_ms !== null, "the exit");
  assert.match(String((mic.status().capture as { last_error: string }).last_error), /^sh exited with code 0/);
  await close();
});

Deno.test("the capture program's end finishes the utterance it was in the middle of", async () => {
  const pcm = speech([600]).subarray(0, 2 * RATE * 1.5); // cut off 0.5 s into the tone
  await using capture = await standIn(pcm, { stay: false });
  const stt = scripted(["开灯"]);
  const { inputs, close } = await setup({ command: capture.command }, stt.hear);
  await waitFor(() => inputs.length === 1, "the message");
  assert.equal(durationMs(decodeWav(stt.heard[0]!)), 700, "200 ms pre-roll and the 500 ms of tone there was");
  await close();
});

Deno.test("a missing capture program shows in the status; the device still starts and nothing else fails", async () => {
  const { mic, io, close } = await setup({ command: ["homed-no-such-arecord", "-q"] }, () => Promise.resolve("x"));
  await waitFor(() => (mic.status().capture as { last_error: string | null }).last_error !== null, "the failed start");
  const capture = mic.status().capture as { running: boolean; last_error: string; restart_in_ms: number | null };
  assert.equal(
    capture.last_error,
    "homed-no-such-arecord is not installed (not found on PATH); install it or change devices.microphone.command",
  );
  assert.equal(capture.running, false);
  assert.ok(capture.restart_in_ms !== null, "it is tried again later");
  assert.deepEqual(io.channels().map((c) => [c.name, c.capabilities]), [["mic", []]]);
  await close();
});

Deno.test("while one utterance is transcribed, at most four wait: the oldest beyond are dropped and counted", async () => {
  // Tone lengths tell the utterances apart in the WAV that reaches speech to text.
  const tones = [400, 500, 600, 700, 800, 900, 1_000];
  await using capture = await standIn(speech(tones), { stay: true });
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const hear = async (wav: Uint8Array) => {
    await gate;
    return `${durationMs(decodeWav(wav)) - 400} ms`; // less the pre-roll and the tail
  };
  const { mic, inputs, close } = await setup({ command: capture.command }, hear);
  await waitFor(() => mic.status().utterances === 7, "seven utterances");
  assert.equal(mic.status().dropped, 2);
  release();
  await waitFor(() => inputs.length === 5, "five messages");
  assert.deepEqual(inputs.map((e) => e.payload.text), ["400 ms", "700 ms", "800 ms", "900 ms", "1000 ms"]);
  await close();
});

Deno.test("stopping does not wait for a transcription that never ends", async () => {
  await using capture = await standIn(speech([600]), { stay: true });
  let asked = false;
  const hear = () => {
    asked = true;
    return new Promise<string>(() => {});
  };
  const { inputs, close } = await setup({ command: capture.command }, hear);
  await waitFor(() => asked, "the transcription to start");
  await close();
  assert.deepEqual(inputs, []);
});

Deno.test("a capture program that ignores SIGTERM is killed when the device stops", async () => {
  await using capture = await standIn(speech([]), { stay: true, ignoreTerm: true });
  const { mic, close } = await setup({ command: capture.command }, () => Promise.resolve(""), systemClock);
  await waitFor(capture.started, "the capture running, SIGTERM ignored");
  assert.equal((mic.status().capture as { running: boolean }).running, true);
  const started = performance.now();
  await close();
  const took = performance.now() - started;
  assert.equal(mic.status().capture, null, "no capture while stopped");
  assert.ok(took >= 1_500 && took < 5_000, `SIGKILL after the 2 s grace, not the 30 s it wanted (${took} ms)`);
});

Deno.test("wake words match case-insensitively at a word boundary, after leading punctuation", () => {
  const words = ["管家", "homed"];
  assert.equal(matchWakeWord("管家，开灯", words), "开灯");
  assert.equal(matchWakeWord("管家开灯", words), "开灯", "Chinese runs on without a space");
  assert.equal(matchWakeWord("“HOMED!” lights off.", words), "lights off.");
  assert.equal(matchWakeWord("...homed", words), "");
  assert.equal(matchWakeWord("homedepot has a sale", words), undefined, "not inside a longer word");
  assert.equal(matchWakeWord("我叫管家开灯", words), undefined, "only at the start");
});

Deno.test("voice-activity settings that cannot work are refused naming the setting", () => {
  assert.throws(
    () =>
      new MicrophoneDevice({
        settings: { ...SETTINGS, threshold: 40_000 },
        hear: () => Promise.resolve(""),
        clock: systemClock,
        logger: getLogger(["test"]),
      }),
    { name: "RangeError", message: "devices.microphone: threshold must be an RMS from 1 to 32767, not 40000" },
  );
});
