import assert from "node:assert/strict";
import { isSilk, SILK_SAMPLE_RATES, silkToWav, wavToSilk } from "./silk.ts";
import { decodeWav, durationMs, encodeWav, type Wav } from "./wav.ts";

const MAGIC = new TextEncoder().encode("#!SILK_V3");

/** `seconds` of a `hz` sine at `rate`, in every one of `channels` channels, as a 16-bit WAV. */
function sineWav(rate: number, seconds: number, hz = 440, channels = 1): Uint8Array {
  const frames = Math.round(rate * seconds);
  const pcm = new Uint8Array(2 * frames * channels);
  const view = new DataView(pcm.buffer);
  for (let i = 0; i < frames; i++) {
    const sample = Math.round(Math.sin((2 * Math.PI * hz * i) / rate) * 12_000);
    for (let c = 0; c < channels; c++) view.setInt16(2 * (i * channels + c), sample, true);
  }
  return encodeWav(pcm, rate, channels);
}

/** Root mean square and sign changes of a mono WAV's samples. */
function measure(wav: Wav): { rms: number; crossings: number } {
  const view = new DataView(wav.pcm.buffer, wav.pcm.byteOffset, wav.pcm.byteLength);
  let squares = 0;
  let crossings = 0;
  let previous = 0;
  for (let i = 0; i < wav.pcm.length / 2; i++) {
    const sample = view.getInt16(2 * i, true);
    squares += sample * sample;
    // A crossing counts only between clear signs, so the decoder's low-level noise near zero does not add any.
    const sign = sample > 200 ? 1 : sample < -200 ? -1 : 0;
    if (sign !== 0 && previous !== 0 && sign !== previous) crossings++;
    if (sign !== 0) previous = sign;
  }
  return { rms: Math.sqrt(squares / (wav.pcm.length / 2)), crossings };
}

/** The frames of a SILK stream as `[offset of the length, length]`, after the 10-byte Tencent header. */
function frames(silk: Uint8Array): [number, number][] {
  const view = new DataView(silk.buffer, silk.byteOffset, silk.byteLength);
  const out: [number, number][] = [];
  for (let offset = 10; offset < silk.length; offset += 2 + view.getInt16(offset, true)) {
    out.push([offset, view.getInt16(offset, true)]);
  }
  return out;
}

Deno.test("isSilk takes #!SILK_V3 with or without Tencent's 0x02 byte, nothing else", () => {
  assert.equal(isSilk(new Uint8Array([2, ...MAGIC, 1, 0, 0])), true);
  assert.equal(isSilk(MAGIC), true);
  assert.equal(isSilk(new TextEncoder().encode("#!SILK_V")), false);
  assert.equal(isSilk(new TextEncoder().encode("#!AMR\n")), false);
  assert.equal(isSilk(new Uint8Array()), false);
});

Deno.test("a 1 s 440 Hz sine goes WAV → SILK → WAV: Tencent's header, 24 kHz mono, 1 s, still a 440 Hz tone", async () => {
  const { silk, durationMs: encoded } = await wavToSilk(sineWav(24_000, 1));
  assert.deepEqual([...silk.subarray(0, 10)], [2, ...MAGIC]);
  assert.equal(encoded, 1000);
  assert.equal(frames(silk).length, 50, "20 ms frames");
  const wav = decodeWav(await silkToWav(silk));
  assert.deepEqual([wav.sampleRate, wav.channels, wav.bitsPerSample], [24_000, 1, 16]);
  assert.ok(Math.abs(durationMs(wav) - 1000) <= 60, `duration ${durationMs(wav)} ms`);
  const { rms, crossings } = measure(wav);
  assert.ok(rms > 3000, `RMS ${rms.toFixed(0)}: the sine's is 8485`);
  assert.ok(Math.abs(crossings - 880) <= 30, `${crossings} zero crossings, 880 expected`);
});

Deno.test("silkToWav decodes at any of the SDK's rates, 16 kHz for speech-to-text, and refuses others", async () => {
  const { silk } = await wavToSilk(sineWav(16_000, 0.5));
  const wav = decodeWav(await silkToWav(silk, 16_000));
  assert.equal(wav.sampleRate, 16_000);
  assert.ok(Math.abs(durationMs(wav) - 500) <= 60, `duration ${durationMs(wav)} ms`);
  assert.deepEqual(SILK_SAMPLE_RATES, [8000, 12000, 16000, 24000, 32000, 44100, 48000]);
  await assert.rejects(silkToWav(silk, 22_050), {
    name: "RangeError",
    message: "A SILK decoder gives 8000, 12000, 16000, 24000, 32000, 44100, 48000 Hz, not 22050",
  });
});

Deno.test("a stereo 44.1 kHz WAV is mixed down and encoded: 2 s, still 440 Hz", async () => {
  const { silk, durationMs: encoded } = await wavToSilk(sineWav(44_100, 2, 440, 2));
  assert.equal(encoded, 2000);
  const wav = decodeWav(await silkToWav(silk));
  assert.ok(Math.abs(durationMs(wav) - 2000) <= 60, `duration ${durationMs(wav)} ms`);
  const { rms, crossings } = measure(wav);
  assert.ok(rms > 3000, `RMS ${rms.toFixed(0)}`);
  assert.ok(Math.abs(crossings - 1760) <= 60, `${crossings} zero crossings, 1760 expected`);
});

Deno.test("a rate the encoder does not take (22.05 kHz) is resampled, not mis-encoded", async () => {
  // silk-wasm given 22050 Hz itself writes a stream 17 times too large that decodes to noise.
  const { silk, durationMs: encoded } = await wavToSilk(sineWav(22_050, 1));
  assert.equal(encoded, 1000);
  assert.ok(silk.length < 8000, `${silk.length} bytes for 1 s`);
  const { crossings } = measure(decodeWav(await silkToWav(silk)));
  assert.ok(Math.abs(crossings - 880) <= 30, `${crossings} zero crossings, 880 expected`);
});

Deno.test("a stream without the 0x02 byte or with the reference encoder's -1 end mark decodes the same", async () => {
  const { silk } = await wavToSilk(sineWav(24_000, 0.2));
  const expected = await silkToWav(silk);
  assert.deepEqual(await silkToWav(silk.subarray(1)), expected);
  assert.deepEqual(await silkToWav(new Uint8Array([...silk, 0xff, 0xff, 0x12, 0x34])), expected, "trailer ignored");
});

Deno.test("a one-frame voice note decodes (the decoder's priming is padded, not fed past the end)", async () => {
  const { silk } = await wavToSilk(sineWav(24_000, 0.02));
  assert.equal(frames(silk).length, 1);
  const wav = decodeWav(await silkToWav(silk));
  assert.equal(durationMs(wav), 40, "the frame and one concealed");
});

Deno.test("corrupt SILK is refused with what is wrong: not SILK, cut off, impossible length, no frames", async () => {
  const { silk } = await wavToSilk(sineWav(24_000, 0.2));
  await assert.rejects(silkToWav(sineWav(24_000, 0.1)), {
    name: "TypeError",
    message: 'Not SILK audio: it starts with 52 49 46 46 e4 12 00 00 57 41 (expected "#!SILK_V3")',
  });
  const [lastOffset, lastSize] = frames(silk).at(-1)!;
  assert.equal(frames(silk).length, 10);
  await assert.rejects(silkToWav(silk.subarray(0, lastOffset + 2 + lastSize - 5)), {
    name: "TypeError",
    message: `SILK frame 10 runs past the end: declared ${lastSize} bytes, ${lastSize - 5} present`,
  });
  await assert.rejects(silkToWav(silk.subarray(0, lastOffset + 1)), {
    name: "TypeError",
    message: "SILK frame 10 is cut off in its 2-byte length",
  });
  const huge = silk.slice();
  new DataView(huge.buffer).setInt16(10, 4000, true);
  await assert.rejects(silkToWav(huge), {
    name: "TypeError",
    message: "SILK frame 1 declares 4000 bytes: a frame has at most 1024",
  });
  await assert.rejects(silkToWav(silk.subarray(0, 10)), {
    name: "TypeError",
    message: "SILK audio has no frames after its header",
  });
});

Deno.test("garbage inside well-formed frames decodes to a WAV of noise, not a crash", async () => {
  const { silk } = await wavToSilk(sineWav(24_000, 0.5));
  const garbled = silk.slice();
  let seed = 7;
  for (const [offset, size] of frames(silk)) {
    for (let i = 0; i < size; i++) garbled[offset + 2 + i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
  }
  const wav = decodeWav(await silkToWav(garbled));
  assert.deepEqual([wav.sampleRate, wav.channels], [24_000, 1]);
  assert.ok(wav.pcm.length > 0);
});

Deno.test("empty audio and non-WAV input to wavToSilk are TypeErrors", async () => {
  await assert.rejects(wavToSilk(encodeWav(new Uint8Array(), 24_000)), {
    name: "TypeError",
    message: "The WAV has no audio: its data chunk holds no samples",
  });
  await assert.rejects(wavToSilk(new Uint8Array([2, ...MAGIC])), { name: "TypeError", message: /^Not a WAV file/ });
});

Deno.test("concurrent conversions do not share state", async () => {
  const [a, b] = await Promise.all([wavToSilk(sineWav(24_000, 0.3)), wavToSilk(sineWav(48_000, 0.6, 440, 2))]);
  const [wavA, wavB] = await Promise.all([silkToWav(a.silk, 16_000), silkToWav(b.silk, 16_000)]);
  assert.deepEqual([a.durationMs, b.durationMs], [300, 600]);
  assert.ok(Math.abs(durationMs(decodeWav(wavA)) - 300) <= 60);
  assert.ok(Math.abs(durationMs(decodeWav(wavB)) - 600) <= 60);
});
