/**
 * What voice activity detection costs the microphone device: microseconds of CPU per second of audio, for the
 * `VoiceActivityDetector` fed 60 s of a speech-like signal (voiced phrases with syllable-rate loudness, pauses, room
 * hiss) in the 4 KiB chunks a pipe from `arecord` gives — at 16 kHz (the default), 48 kHz (the highest
 * `devices.microphone.sample_rate`) and, as a worst case, 16 kHz in 1-byte chunks. The detector runs for as long as
 * homed does, so this is a standing load: 1 ms per second of audio would be 0.1 % of one core.
 *
 * Run: `deno run --no-prompt --allow-read=. --allow-write=bench --allow-sys=cpus --allow-run=git bench/devices/vad.ts`
 * (writes bench/out/devices/results.json; `--record`: bench/devices/results.json).
 *
 * @module
 */

import { VoiceActivityDetector } from "../../src/devices/microphone/vad.ts";
import { environment, percentile, writeResults } from "../support/report.ts";
import { seededRandom } from "../support/seeded_random.ts";

const SECONDS = 60;
const RUNS = 40;
const WARM_UP = 10;
const CHUNK = 4_096;
const round = (x: number) => Math.round(x * 10) / 10;

/**
 * Phrases of 0.5–3 s of a voiced sound (f0 100–250 Hz with three harmonics, loudness rising and falling with 4–6
 * syllables a second), pauses of 0.2–1.5 s between them, over hiss well under the threshold.
 */
function speechLike(rate: number): Uint8Array {
  // Two streams: the phrases are the same at every rate, whatever the hiss draws.
  const random = seededRandom(20_261_130);
  const noise = seededRandom(7);
  const total = rate * SECONDS;
  const pcm = new Uint8Array(2 * total);
  const view = new DataView(pcm.buffer);
  let i = 0;
  let voiced = false;
  while (i < total) {
    const length = Math.min(
      total - i,
      Math.round(rate * (voiced ? 0.5 + 2.5 * random.next() : 0.2 + 1.3 * random.next())),
    );
    const f0 = 100 + 150 * random.next();
    const syllables = 4 + 2 * random.next();
    const level = 3_000 + 6_000 * random.next();
    for (let k = 0; k < length; k++, i++) {
      const t = k / rate;
      const hiss = (noise.next() - 0.5) * 200;
      let value = hiss;
      if (voiced) {
        // Loudness dips between syllables (some dips fall under the threshold, as in real speech).
        const envelope = 0.15 + 0.85 * Math.abs(Math.sin(Math.PI * syllables * t));
        const phase = 2 * Math.PI * f0 * t;
        value += level * envelope * (Math.sin(phase) + 0.5 * Math.sin(2 * phase) + 0.25 * Math.sin(3 * phase)) / 1.75;
      }
      view.setInt16(2 * i, Math.max(-32_768, Math.min(32_767, Math.round(value))), true);
    }
    voiced = !voiced;
  }
  return pcm;
}

interface Row {
  p50_us_per_audio_s: number;
  p99_us_per_audio_s: number;
  utterances: number;
  runs: number;
}

function measure(rate: number, chunk: number, runs = RUNS): Row {
  const pcm = speechLike(rate);
  const perSecond: number[] = [];
  let utterances = 0;
  for (let run = 0; run < WARM_UP + runs; run++) {
    const vad = new VoiceActivityDetector({
      sampleRate: rate,
      threshold: 600,
      minSpeechMs: 300,
      endSilenceMs: 800,
      maxUtteranceMs: 15_000,
    });
    let found = 0;
    const started = performance.now();
    for (let at = 0; at < pcm.length; at += chunk) found += vad.push(pcm.subarray(at, at + chunk)).length;
    found += vad.end().length;
    const elapsed = performance.now() - started;
    if (run >= WARM_UP) perSecond.push((elapsed * 1000) / SECONDS);
    utterances = found;
  }
  return {
    p50_us_per_audio_s: round(percentile(perSecond, 50)),
    p99_us_per_audio_s: round(percentile(perSecond, 99)),
    utterances,
    runs,
  };
}

const rows: Record<string, Row> = {
  "16 kHz, 4 KiB chunks": measure(16_000, CHUNK),
  "48 kHz, 4 KiB chunks": measure(48_000, CHUNK),
  // A chunk per byte: the partial-frame path for every sample, the worst a capture program could do.
  "16 kHz, 1-byte chunks (worst case)": measure(16_000, 1, 10),
};

const env = await environment();
await writeResults(new URL("./vad.json", import.meta.url), {
  ...env,
  audio_seconds: SECONDS,
  chunk_bytes: CHUNK,
  rows,
});
console.log(`VAD cost per second of audio (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
