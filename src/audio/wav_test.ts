import assert from "node:assert/strict";
import { decodeWav, durationMs, encodeWav } from "./wav.ts";

/** A RIFF/WAVE file of the given chunks, each `[id, body]`, padded to even length as the format requires. */
function riff(chunks: [string, Uint8Array][]): Uint8Array {
  const parts: number[] = [..."WAVE"].map((c) => c.charCodeAt(0));
  for (const [id, body] of chunks) {
    const size = new Uint8Array(4);
    new DataView(size.buffer).setUint32(0, body.length, true);
    parts.push(...[...id].map((c) => c.charCodeAt(0)), ...size, ...body, ...(body.length % 2 ? [0] : []));
  }
  const out = new Uint8Array(8 + parts.length);
  out.set([..."RIFF"].map((c) => c.charCodeAt(0)));
  new DataView(out.buffer).setUint32(4, parts.length, true);
  out.set(parts, 8);
  return out;
}

/** A `fmt ` body: format code, channels, rate, bits; a `subformat` appends cbSize, valid bits, mask and its GUID. */
function fmt(code: number, channels: number, rate: number, bits: number, subformat?: number): Uint8Array {
  const body = new Uint8Array(subformat === undefined ? 16 : 40);
  const view = new DataView(body.buffer);
  view.setUint16(0, code, true);
  view.setUint16(2, channels, true);
  view.setUint32(4, rate, true);
  view.setUint32(8, (rate * channels * bits) / 8, true);
  view.setUint16(12, (channels * bits) / 8, true);
  view.setUint16(14, bits, true);
  if (subformat !== undefined) {
    view.setUint16(16, 22, true);
    view.setUint16(18, bits, true);
    view.setUint32(20, channels === 2 ? 3 : 4, true);
    view.setUint16(24, subformat, true);
    body.set([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71], 26);
  }
  return body;
}

const samples = new Uint8Array([0x01, 0x00, 0xff, 0x7f, 0x00, 0x80, 0xfe, 0xff]);

Deno.test("encodeWav writes the canonical 44-byte PCM header that decodeWav reads back", () => {
  const wav = encodeWav(samples, 22_050, 2);
  const view = new DataView(wav.buffer);
  assert.equal(new TextDecoder().decode(wav.subarray(0, 16)), "RIFF\x2c\x00\x00\x00WAVEfmt ");
  assert.deepEqual(
    [view.getUint32(16, true), view.getUint16(20, true), view.getUint16(22, true), view.getUint32(24, true)],
    [16, 1, 2, 22_050],
  );
  assert.deepEqual([view.getUint32(28, true), view.getUint16(32, true), view.getUint16(34, true)], [88_200, 4, 16]);
  assert.equal(new TextDecoder().decode(wav.subarray(36, 40)), "data");
  assert.equal(view.getUint32(40, true), 8);
  assert.equal(wav.length, 52);
  assert.deepEqual(decodeWav(wav), { sampleRate: 22_050, channels: 2, bitsPerSample: 16, pcm: samples });
});

Deno.test("encodeWav refuses a bad rate, channel count or a partial frame", () => {
  assert.throws(() => encodeWav(samples, 0), { name: "RangeError", message: /sample rate .* not 0/ });
  assert.throws(() => encodeWav(samples, 8000.5), { name: "RangeError", message: /not 8000\.5/ });
  assert.throws(() => encodeWav(samples, 8000, 0), { name: "RangeError", message: /not 0$/ });
  assert.throws(() => encodeWav(samples.subarray(0, 6), 8000, 2), {
    name: "RangeError",
    message: "WAV samples must be whole frames of 4 bytes (16-bit, 2 channel(s)): 6 bytes is not",
  });
});

Deno.test("a LIST chunk and an odd-sized chunk before data are skipped, pad byte included", () => {
  const list = new TextEncoder().encode("INFOISFT\x05\x00\x00\x00Lavf\x00");
  const odd = new Uint8Array([1, 2, 3]);
  const wav = riff([["fmt ", fmt(1, 1, 16_000, 16)], ["LIST", list], ["junk", odd], ["data", samples]]);
  const audio = decodeWav(wav);
  assert.deepEqual([audio.sampleRate, audio.channels, audio.bitsPerSample], [16_000, 1, 16]);
  assert.deepEqual(audio.pcm, samples);
  assert.equal(audio.pcm.byteOffset, 0, "a copy, aligned for an Int16Array");
});

Deno.test("WAVE_FORMAT_EXTENSIBLE is read when its sub-format is PCM and refused, named, when it is float", () => {
  const pcm = decodeWav(riff([["fmt ", fmt(0xfffe, 2, 48_000, 16, 1)], ["data", samples]]));
  assert.deepEqual([pcm.sampleRate, pcm.channels, pcm.pcm.length], [48_000, 2, 8]);
  assert.throws(() => decodeWav(riff([["fmt ", fmt(0xfffe, 1, 48_000, 32, 3)], ["data", samples]])), {
    name: "TypeError",
    message: "WAV format 0x0003 (IEEE float) is not supported: only PCM",
  });
});

Deno.test("other depths and formats are refused by name", () => {
  assert.throws(() => decodeWav(riff([["fmt ", fmt(1, 1, 8000, 24)], ["data", new Uint8Array(6)]])), {
    name: "TypeError",
    message: "WAV with 24-bit samples is not supported: only 16-bit PCM",
  });
  assert.throws(() => decodeWav(riff([["fmt ", fmt(7, 1, 8000, 8)], ["data", new Uint8Array(6)]])), {
    name: "TypeError",
    message: "WAV format 0x0007 (µ-law) is not supported: only PCM",
  });
});

Deno.test("a truncated WAV names the declared and the present length", () => {
  const whole = encodeWav(new Uint8Array(1000), 8000);
  assert.throws(() => decodeWav(whole.subarray(0, 44 + 12)), {
    name: "TypeError",
    message: "WAV data chunk runs past the end: declared 1000 bytes, 12 present",
  });
  assert.throws(() => decodeWav(whole.subarray(0, 40)), {
    name: "TypeError",
    message: "WAV chunk header at byte 36 is cut off: 4 of 8 bytes present",
  });
  assert.throws(() => decodeWav(whole.subarray(0, 30)), {
    name: "TypeError",
    message: 'WAV "fmt " chunk runs past the end: declared 16 bytes, 10 present',
  });
});

Deno.test("data before fmt, no data at all, or not RIFF at all are each refused", () => {
  assert.throws(() => decodeWav(riff([["data", samples], ["fmt ", fmt(1, 1, 8000, 16)]])), {
    name: "TypeError",
    message: "A WAV file needs a fmt chunk before data",
  });
  assert.throws(() => decodeWav(riff([["fmt ", fmt(1, 1, 8000, 16)]])), {
    name: "TypeError",
    message: "A WAV file needs a data chunk: none before the end",
  });
  assert.throws(() => decodeWav(new TextEncoder().encode("OggS\x00\x02\x00\x00\x00\x00\x00\x00")), {
    name: "TypeError",
    message: 'Not a WAV file: it starts with 4f 67 67 53 (expected "RIFF", 4 bytes, "WAVE")',
  });
  assert.throws(() => decodeWav(new Uint8Array()), { name: "TypeError", message: /starts with nothing/ });
});

Deno.test("a streamed WAV's unknown data size (0xFFFFFFFF) reads to the end, dropping a partial frame", () => {
  const wav = encodeWav(samples, 8000);
  new DataView(wav.buffer).setUint32(40, 0xffffffff, true);
  const audio = decodeWav(new Uint8Array([...wav, 0x42]));
  assert.deepEqual(audio.pcm, samples);
});

Deno.test("durationMs counts frames, not bytes", () => {
  assert.equal(durationMs(decodeWav(encodeWav(new Uint8Array(4 * 44_100), 44_100, 2))), 1000);
  assert.equal(durationMs({ sampleRate: 16_000, channels: 1, bitsPerSample: 16, pcm: new Uint8Array(320) }), 10);
});
