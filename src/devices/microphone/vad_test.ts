import assert from "node:assert/strict";
import { type Utterance, VAD_FRAME_MS, VoiceActivityDetector } from "./vad.ts";

const RATE = 16_000;
const SETTINGS = { sampleRate: RATE, threshold: 600, minSpeechMs: 300, endSilenceMs: 800, maxUtteranceMs: 15_000 };

/** Stretches of a 440 Hz tone (`amplitude` 0: silence) over a low hiss, as s16le mono; the hiss is seeded. */
function signal(parts: ReadonlyArray<{ ms: number; amplitude: number }>, rate = RATE): Uint8Array {
  const total = parts.reduce((sum, part) => sum + Math.round((part.ms * rate) / 1000), 0);
  const pcm = new Uint8Array(2 * total);
  const view = new DataView(pcm.buffer);
  let seed = 12_345;
  let i = 0;
  for (const part of parts) {
    const end = i + Math.round((part.ms * rate) / 1000);
    for (; i < end; i++) {
      seed = (seed * 1_103_515_245 + 12_345) >>> 0;
      const hiss = ((seed >>> 16) / 65_536 - 0.5) * 160; // RMS ≈ 46, far under the threshold
      view.setInt16(2 * i, Math.round(part.amplitude * Math.sin((2 * Math.PI * 440 * i) / rate) + hiss), true);
    }
  }
  return pcm;
}

const silence = (ms: number) => ({ ms, amplitude: 0 });
const tone = (ms: number) => ({ ms, amplitude: 8_000 }); // RMS ≈ 5,657

/** The brief's signal: 1 s silence, 1.2 s tone, 1 s silence, a 100 ms click, 1 s silence, 20 s tone. */
const TEST_SIGNAL = signal([silence(1_000), tone(1_200), silence(1_000), tone(100), silence(1_000), tone(20_000)]);

/** Feeds `pcm` in chunks of the sizes `sizes()` gives; returns what push gave and what end gave. */
function feed(vad: VoiceActivityDetector, pcm: Uint8Array, sizes: () => number) {
  const pushed: Utterance[] = [];
  for (let at = 0; at < pcm.length;) {
    const size = Math.min(sizes(), pcm.length - at);
    pushed.push(...vad.push(pcm.subarray(at, at + size)));
    at += size;
  }
  const speaking = vad.speaking;
  return { pushed, speaking, ended: vad.end() };
}

const FRAME = VAD_FRAME_MS;
const near = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= FRAME, `${what}: ${actual} ms, expected ${expected} ± ${FRAME} ms`);

Deno.test("tone and silence: two utterances, the click dropped, the long one cut at max length and a new one started", () => {
  const { pushed, speaking, ended } = feed(new VoiceActivityDetector(SETTINGS), TEST_SIGNAL, () => 4_096);
  assert.equal(pushed.length, 2, JSON.stringify(pushed.map(({ pcm: _, ...rest }) => rest)));
  const [first, second] = pushed as [Utterance, Utterance];
  // 200 ms pre-roll + 1.2 s tone + 200 ms tail, starting 200 ms before the tone.
  near(first.startMs, 800, "first start");
  near(first.durationMs, 1_600, "first duration");
  near(first.speechMs, 1_200, "first speech");
  assert.equal(first.cut, false);
  assert.equal(first.pcm.length, (first.durationMs * RATE * 2) / 1000, "the PCM is as long as the duration says");
  // The click at 3.2 s is no utterance; the long tone (from 4.3 s) is cut at 15 s, pre-roll included.
  near(second.startMs, 4_100, "second start");
  assert.equal(second.durationMs, 15_000, "cut at exactly max_utterance");
  assert.equal(second.cut, true);
  assert.ok(speaking, "the speech after the cut is already an utterance in progress");
  // What the stream's end gives: the rest of the tone, right after the cut (nothing lost, nothing repeated).
  assert.equal(ended.length, 1);
  near(ended[0]!.startMs, second.startMs + second.durationMs, "continuation start");
  near(ended[0]!.durationMs, 24_300 - 19_100, "continuation duration");
});

Deno.test("chunking does not matter: random sizes, odd byte counts and single bytes give the same utterances", () => {
  const reference = feed(new VoiceActivityDetector(SETTINGS), TEST_SIGNAL, () => 4_096);
  let seed = 7;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  for (const sizes of [() => 1 + Math.floor(random() * 3_001), () => 1 + 2 * Math.floor(random() * 50), () => 1]) {
    const run = feed(new VoiceActivityDetector(SETTINGS), TEST_SIGNAL, sizes);
    assert.deepEqual(run, reference);
  }
});

Deno.test("the pre-roll keeps the quiet start of a word; the utterance's samples are the stream's own", () => {
  const pcm = signal([silence(1_000), { ms: 100, amplitude: 500 }, tone(600), silence(1_000)]);
  const [utterance] = new VoiceActivityDetector(SETTINGS).push(pcm);
  assert.ok(utterance);
  near(utterance.startMs, 900, "start (the soft 100 ms before the loud part are in)");
  const from = (utterance.startMs * RATE * 2) / 1000;
  assert.deepEqual(utterance.pcm, pcm.slice(from, from + utterance.pcm.length));
});

Deno.test("a pause shorter than end_silence keeps one utterance; a longer one makes two", () => {
  const vad = new VoiceActivityDetector(SETTINGS);
  const one = vad.push(signal([silence(500), tone(700), silence(500), tone(700), silence(1_000)]));
  assert.deepEqual(one.map((u) => u.speechMs), [1_400]);
  const two = vad.push(signal([tone(700), silence(900), tone(700), silence(1_000)]));
  assert.deepEqual(two.map((u) => u.speechMs), [700, 700]);
});

Deno.test("sparse taps that add up to min_speech are not speech; min_speech of steady sound is", () => {
  const taps = Array.from({ length: 20 }, () => [tone(20), silence(60)]).flat();
  assert.deepEqual(new VoiceActivityDetector(SETTINGS).push(signal([...taps, silence(1_000)])), []);
  const short = new VoiceActivityDetector(SETTINGS).push(signal([tone(280), silence(1_000)]));
  assert.deepEqual(short, [], "280 ms is under min_speech");
  const enough = new VoiceActivityDetector(SETTINGS).push(signal([tone(300), silence(1_000)]));
  assert.equal(enough.length, 1);
});

Deno.test("other sample rates keep their time: 44.1 kHz and 8 kHz give the same millisecond figures", () => {
  for (const rate of [8_000, 44_100]) {
    const vad = new VoiceActivityDetector({ ...SETTINGS, sampleRate: rate });
    const [utterance] = vad.push(signal([silence(1_000), tone(1_200), silence(1_000)], rate));
    assert.ok(utterance, `an utterance at ${rate} Hz`);
    near(utterance.startMs, 800, `start at ${rate} Hz`);
    near(utterance.durationMs, 1_600, `duration at ${rate} Hz`);
  }
});

Deno.test("memory stays bounded: ten minutes of speech are cut into max-length pieces", () => {
  const vad = new VoiceActivityDetector({ ...SETTINGS, maxUtteranceMs: 2_000 });
  const second = signal([tone(1_000)]);
  let count = 0;
  for (let s = 0; s < 600; s++) {
    for (const utterance of vad.push(second)) {
      count++;
      assert.ok(utterance.pcm.length <= 2 * RATE * 2, `at most 2 s, not ${utterance.pcm.length} bytes`);
    }
  }
  assert.equal(count, 300, "600 s in 2 s pieces");
});

Deno.test("settings out of range are refused naming the setting and the value", () => {
  assert.throws(
    () => new VoiceActivityDetector({ ...SETTINGS, threshold: 0 }),
    { name: "RangeError", message: "threshold must be an RMS from 1 to 32767, not 0" },
  );
  assert.throws(
    () => new VoiceActivityDetector({ ...SETTINGS, sampleRate: 16_000.5 }),
    /^RangeError: sampleRate must be a whole number of hertz from 1000 to 384000, not 16000\.5$/,
  );
  assert.throws(
    () => new VoiceActivityDetector({ ...SETTINGS, minSpeechMs: 1_000, maxUtteranceMs: 2_000 }),
    /minSpeechMs \(1000\) is too long for maxUtteranceMs \(2000\).*must be over 2200/,
  );
});
