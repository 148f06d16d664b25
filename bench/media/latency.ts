/**
 * What an image and a voice note add to a turn besides the model: `MediaService.perceive` with the vision model and
 * speech-to-text server answering at once in-process (no HTTP, no model time), so what is measured is homed's own
 * work — the address checks, the bounded fetch over loopback from a NapCat-like media server in a Worker, sniffing,
 * the media cache write and, for the voice note, SILK → WAV. The image is 300 KB (a phone photo QQ recompressed), the
 * voice note 5 s of SILK; the vision client's data-URL encoding of the image is measured beside it (it runs on every
 * image, before the request). Anchor: a bare `fetch` of the same bytes from the same server, in the same run.
 *
 * Run: `deno task bench:media` (writes bench/out/media/latency.json; `--record`: bench/media/latency.json).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { wavToSilk } from "../../src/audio/silk.ts";
import { encodeWav } from "../../src/audio/wav.ts";
import { systemClock } from "../../src/clock.ts";
import { MediaCache } from "../../src/media/media_cache.ts";
import { MediaService } from "../../src/media/media_service.ts";
import { encodeBase64 } from "../../src/text/base64.ts";
import { environment, percentile, writeResults } from "../support/report.ts";
import { seededRandom } from "../support/seeded_random.ts";

const RUNS = 200;
const WARM_UP = 20;
const round = (x: number) => Math.round(x * 1000) / 1000;

/** A 300 KB "photo": a PNG signature, then seeded noise (compressed image data looks like noise). */
function photo(): Uint8Array {
  const random = seededRandom(7);
  const bytes = new Uint8Array(300 * 1024).map(() => Math.floor(random.next() * 256));
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

/** 5 s of a voiced, syllable-rate tone at 24 kHz, as SILK. */
async function voiceNote(): Promise<Uint8Array> {
  const rate = 24_000;
  const pcm = new Uint8Array(2 * rate * 5);
  const view = new DataView(pcm.buffer);
  for (let i = 0; i < rate * 5; i++) {
    const t = i / rate;
    const value = Math.sin(2 * Math.PI * 180 * t) * Math.max(0, Math.sin(2 * Math.PI * 4 * t)) * 0.4;
    view.setInt16(2 * i, Math.round(value * 32767), true);
  }
  return (await wavToSilk(encodeWav(pcm, rate))).silk;
}

const image = photo();
const voice = await voiceNote();
const worker = new Worker(new URL("./media_server_worker.ts", import.meta.url), { type: "module" });
const port = await new Promise<number>((resolve) => {
  worker.onmessage = (message: MessageEvent<number>) => resolve(message.data);
  worker.postMessage({ image, voice });
});
const base = `http://127.0.0.1:${port}`;

const dir = await Deno.makeTempDir({ prefix: "homed-bench-media-" });
const media = new MediaService({
  settings: {
    maxImageBytes: 10 * 2 ** 20,
    maxAudioBytes: 10 * 2 ** 20,
    guestMaxBytes: 2 * 2 ** 20,
    fetchTimeoutMs: 20_000,
    direct: false,
    replyWithVoice: "never",
  },
  cache: await MediaCache.open({ dir, maxBytes: 64 * 2 ** 20, clock: systemClock }),
  clock: systemClock,
  logger: getLogger(["bench"]),
  policy: { allowHosts: [], ownListen: { host: "127.0.0.1", port: 8080 }, resolve: () => Promise.resolve([]) },
  vision: { describe: () => Promise.resolve("a photo") },
  stt: { transcribe: () => Promise.resolve("hello") },
});
const input = { id: "e1", source: "qq:private:10001", sender: "10001", trust: "owner" as const };

async function measure(work: () => Promise<unknown>): Promise<{ p50_ms: number; p99_ms: number; n: number }> {
  const times: number[] = [];
  for (let i = 0; i < WARM_UP + RUNS; i++) {
    const started = performance.now();
    await work();
    if (i >= WARM_UP) times.push(performance.now() - started);
  }
  return { p50_ms: round(percentile(times, 50)), p99_ms: round(percentile(times, 99)), n: RUNS };
}

const rows: Record<string, { p50_ms: number; p99_ms: number; n: number }> = {};
rows["image: perceive (fetch, sniff, cache), model excluded"] = await measure(async () => {
  const seen = await media.perceive(input, [{ kind: "image", url: `${base}/photo.png`, via: "127.0.0.1" }]);
  if (seen.notes[0] !== "[image: a photo]") throw new Error(`unexpected: ${seen.notes[0]}`);
});
rows["image: data URL for the vision request"] = await measure(() =>
  Promise.resolve(`data:image/png;base64,${encodeBase64(image)}`)
);
rows["voice note: perceive (fetch, SILK → WAV, cache), model excluded"] = await measure(async () => {
  const heard = await media.perceive(input, [{ kind: "audio", url: `${base}/voice.silk`, via: "127.0.0.1" }]);
  if (!heard.spoken) throw new Error(`unexpected: ${heard.notes[0]}`);
});
rows["anchor: bare fetch of the image"] = await measure(async () => {
  await (await fetch(`${base}/photo.png`)).arrayBuffer();
});
rows["anchor: bare fetch of the voice note"] = await measure(async () => {
  await (await fetch(`${base}/voice.silk`)).arrayBuffer();
});
worker.terminate();
await Deno.remove(dir, { recursive: true });

const env = await environment();
const results = { ...env, image_bytes: image.length, voice_silk_bytes: voice.length, rows };
await writeResults(new URL("./latency.json", import.meta.url), results);
console.log(`media latency per attachment (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(rows);
