/**
 * What converting a QQ voice note costs: `silkToWav` (a voice note for speech-to-text) and `wavToSilk` (a spoken
 * reply back to QQ) for a 5 s voice note, speech-like (a gliding voiced tone with harmonics, syllable-rate loudness
 * and a little noise, seeded).
 *
 * - wavToSilk of a 24 kHz mono WAV (what most TTS servers give), of a 22.05 kHz one (resampled first) and of a
 *   44.1 kHz stereo one (mixed down first);
 * - silkToWav at 16 kHz (what speech-to-text servers want) and at 24 kHz.
 *
 * Each: the first call of the process (silk-wasm compiles its WebAssembly; it instantiates it again on every call),
 * then p50 and p99 of 50 calls after 5 warm-up ones.
 *
 * Run: deno run --no-prompt --allow-read=. --allow-write=bench --allow-sys=cpus --allow-run=git bench/media/codec.ts
 * (writes bench/out/media/results.json; --record: bench/media/results.json).
 *
 * @module
 */

import { silkToWav, wavToSilk } from "../../src/audio/silk.ts";
import { encodeWav } from "../../src/audio/wav.ts";
import { environment, percentile, writeResults } from "../support/report.ts";
import { seededRandom } from "../support/seeded_random.ts";

const SECONDS = 5;
const RUNS = 50;
const WARM_UP = 5;
const round = (x: number) => Math.round(x * 1000) / 1000;

/** `SECONDS` of speech-like sound at `rate` Hz in `channels` channels (the same in each), as a WAV. */
function voice(rate: number, channels = 1): Uint8Array {
  const random = seededRandom(20260105);
  const frames = rate * SECONDS;
  const pcm = new Uint8Array(2 * frames * channels);
  const view = new DataView(pcm.buffer);
  let phase = 0;
  for (let i = 0; i < frames; i++) {
    const t = i / rate;
    const pitch = 140 + 60 * Math.sin(2 * Math.PI * 0.7 * t);
    phase += (2 * Math.PI * pitch) / rate;
    let sample = 0;
    for (let harmonic = 1; harmonic <= 8; harmonic++) sample += Math.sin(harmonic * phase) / harmonic;
    const loudness = Math.max(0, Math.sin(2 * Math.PI * 4 * t));
    const value = Math.round((sample * loudness * 0.35 + (random.next() - 0.5) * 0.02) * 32767);
    for (let c = 0; c < channels; c++) view.setInt16(2 * (i * channels + c), value, true);
  }
  return encodeWav(pcm, rate, channels);
}

async function measure(work: () => Promise<unknown>): Promise<{ first_ms: number; p50_ms: number; p99_ms: number }> {
  let started = performance.now();
  await work();
  const first = performance.now() - started;
  const times: number[] = [];
  for (let i = 0; i < WARM_UP + RUNS; i++) {
    started = performance.now();
    await work();
    if (i >= WARM_UP) times.push(performance.now() - started);
  }
  return { first_ms: round(first), p50_ms: round(percentile(times, 50)), p99_ms: round(percentile(times, 99)) };
}

const mono24 = voice(24_000);
const mono22 = voice(22_050);
const stereo44 = voice(44_100, 2);
const rows: Record<string, { first_ms: number; p50_ms: number; p99_ms: number }> = {};
rows["wavToSilk 24 kHz mono"] = await measure(() => wavToSilk(mono24));
rows["wavToSilk 22.05 kHz mono (resampled)"] = await measure(() => wavToSilk(mono22));
rows["wavToSilk 44.1 kHz stereo (mixed down)"] = await measure(() => wavToSilk(stereo44));
const { silk, durationMs } = await wavToSilk(mono24);
rows["silkToWav at 16 kHz"] = await measure(() => silkToWav(silk, 16_000));
rows["silkToWav at 24 kHz"] = await measure(() => silkToWav(silk, 24_000));

const env = await environment();
const results = { ...env, voice_note: { seconds: SECONDS, silk_bytes: silk.length, duration_ms: durationMs }, rows };
await writeResults(new URL("./results.json", import.meta.url), results);
console.log(
  `SILK codec (${
    env.commit.slice(0, 10)
  }, deno ${env.deno}, ${env.cpu}); a ${SECONDS} s voice note, ${silk.length} bytes of SILK`,
);
console.table(rows);
