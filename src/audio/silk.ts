/**
 * QQ voice notes (SILK v3) to WAV and back: speech-to-text servers take WAV, and the butler's spoken replies (WAV
 * from a text-to-speech server) go back to QQ as SILK.
 *
 * The codec is npm:silk-wasm, Tencent's SILK SDK compiled to WebAssembly. Its C decoder trusts the frame lengths in
 * the file (it copies that many bytes, past the end of the input if told so, and primes itself with two frames
 * unchecked), so a stream is walked and checked here before the decoder sees it. silk-wasm reads its `silk.wasm`
 * (see `silk_wasm_path.ts`) on every call, and a read that fails rejects a promise nobody awaits, which ends the
 * process: so the first use checks, once, that the file can be read, and fails with a plain error if not.
 *
 * @module
 */

import { decodeWav, encodeWav } from "./wav.ts";
import { silkWasmPath } from "./silk_wasm_path.ts";

/** The sample rates (Hz) the SILK SDK's encoder takes and its decoder gives. */
export const SILK_SAMPLE_RATES: readonly number[] = [8000, 12000, 16000, 24000, 32000, 44100, 48000];

/** What {@link wavToSilk} gives: a QQ voice note and how long it plays. */
export interface SilkAudio {
  /** `0x02` then `#!SILK_V3` then the frames, as Tencent writes them. */
  silk: Uint8Array;
  /** Whole 20 ms frames, in milliseconds. */
  durationMs: number;
}

const MAGIC = [...new TextEncoder().encode("#!SILK_V3")];
/** The SDK's limit for one packet (`MAX_ARITHM_BYTES`); the decoder's buffers hold three of them. */
const MAX_FRAME_BYTES = 1024;
/** The decoder reads this many frames before it checks for the end (`MAX_LBRR_DELAY`). */
const PRIMED_FRAMES = 2;

type Codec = typeof import("silk-wasm");
let codec: Promise<Codec> | undefined;

/**
 * Whether `bytes` is a SILK v3 stream: `#!SILK_V3`, after the one `0x02` byte Tencent puts first or without it.
 *
 * @example
 * ```ts
 * isSilk(new TextEncoder().encode("\x02#!SILK_V3")); // true
 * isSilk(new TextEncoder().encode("RIFF")); // false
 * ```
 */
export function isSilk(bytes: Uint8Array): boolean {
  return magicAt(bytes, bytes[0] === 0x02 ? 1 : 0);
}

/**
 * Decodes a SILK voice note to a mono 16-bit WAV at `sampleRate`.
 *
 * @param sampleRate One of {@link SILK_SAMPLE_RATES}; 16000 suits most speech-to-text servers.
 * @throws {TypeError} When `bytes` is not SILK, is cut off or corrupt, or holds no frames.
 * @throws {RangeError} For a sample rate the decoder does not give.
 *
 * @example
 * ```ts
 * const voice = await Deno.readFile("/tmp/voice.silk");
 * const wav = await silkToWav(voice, 16_000);
 * ```
 */
export async function silkToWav(bytes: Uint8Array, sampleRate = 24000): Promise<Uint8Array> {
  if (!SILK_SAMPLE_RATES.includes(sampleRate)) {
    throw new RangeError(`A SILK decoder gives ${SILK_SAMPLE_RATES.join(", ")} Hz, not ${sampleRate}`);
  }
  const stream = checkedStream(bytes);
  const { decode } = await loadCodec();
  let pcm: Uint8Array;
  try {
    ({ data: pcm } = await decode(stream, sampleRate));
  } catch (error) {
    throw new TypeError(`Corrupt SILK audio: the decoder failed (${describe(error)})`, { cause: error });
  }
  if (pcm.length === 0) throw new TypeError("Corrupt SILK audio: it decodes to no samples");
  return encodeWav(pcm, sampleRate);
}

/**
 * Encodes a WAV (16-bit PCM, any rate, any number of channels) as a QQ voice note. Channels are mixed down to mono;
 * a rate the encoder does not take is resampled (linearly) to the next one up in {@link SILK_SAMPLE_RATES}, or to
 * 48 kHz above that.
 *
 * @throws {TypeError} When `wav` is not a WAV file {@link decodeWav} reads, or holds no samples.
 *
 * @example
 * ```ts
 * const reply = await Deno.readFile("/tmp/reply.wav");
 * const { silk, durationMs } = await wavToSilk(reply);
 * ```
 */
export async function wavToSilk(wav: Uint8Array): Promise<SilkAudio> {
  const audio = decodeWav(wav);
  if (audio.pcm.length === 0) throw new TypeError("The WAV has no audio: its data chunk holds no samples");
  const rate = SILK_SAMPLE_RATES.find((supported) => supported >= audio.sampleRate) ?? 48000;
  let pcm = audio.channels === 1 ? audio.pcm : downmix(audio.pcm, audio.channels);
  if (rate !== audio.sampleRate) pcm = resample(pcm, audio.sampleRate, rate);
  const { encode } = await loadCodec();
  try {
    const { data, duration } = await encode(pcm, rate);
    return { silk: data, durationMs: duration };
  } catch (error) {
    throw new Error(`SILK encoding failed (${describe(error)})`, { cause: error });
  }
}

/** silk-wasm, loaded once, after checking that its `silk.wasm` can be read (see the module doc for why). */
function loadCodec(): Promise<Codec> {
  if (codec) return codec;
  const loading = (async () => {
    const path = silkWasmPath();
    try {
      (await Deno.open(path)).close();
    } catch (error) {
      throw new Error(`The SILK codec cannot read its WebAssembly file ${path} (${describe(error)})`, { cause: error });
    }
    return await import("silk-wasm");
  })();
  codec = loading;
  // A failed load is retried on the next call: the file may be readable by then.
  loading.catch(() => {
    if (codec === loading) codec = undefined;
  });
  return loading;
}

/**
 * `bytes` as the decoder needs it: with the `0x02` it insists on, up to a `-1` length (the end mark of the reference
 * encoder, which the decoder must not see while it primes) and with at least {@link PRIMED_FRAMES} frames (empty
 * ones, which it conceals, added), every length checked against the end of the input.
 */
function checkedStream(bytes: Uint8Array): Uint8Array {
  const start = bytes[0] === 0x02 ? 1 : 0;
  if (!magicAt(bytes, start)) {
    const head = [...bytes.subarray(0, 10)].map((byte) => byte.toString(16).padStart(2, "0")).join(" ");
    throw new TypeError(`Not SILK audio: it starts with ${head || "nothing"} (expected "#!SILK_V3")`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const first = start + MAGIC.length;
  let offset = first;
  let frames = 0;
  while (offset < bytes.length) {
    if (offset + 2 > bytes.length) throw new TypeError(`SILK frame ${frames + 1} is cut off in its 2-byte length`);
    const size = view.getInt16(offset, true);
    if (size < 0) break;
    if (size > MAX_FRAME_BYTES) {
      throw new TypeError(`SILK frame ${frames + 1} declares ${size} bytes: a frame has at most ${MAX_FRAME_BYTES}`);
    }
    const present = bytes.length - offset - 2;
    if (size > present) {
      throw new TypeError(`SILK frame ${frames + 1} runs past the end: declared ${size} bytes, ${present} present`);
    }
    offset += 2 + size;
    frames++;
  }
  if (frames === 0) throw new TypeError("SILK audio has no frames after its header");
  const padding = 2 * Math.max(0, PRIMED_FRAMES - frames);
  const stream = new Uint8Array(1 + offset - start + padding);
  stream[0] = 0x02;
  stream.set(bytes.subarray(start, offset), 1);
  return stream;
}

function magicAt(bytes: Uint8Array, at: number): boolean {
  return bytes.length >= at + MAGIC.length && MAGIC.every((byte, i) => bytes[at + i] === byte);
}

/** Interleaved s16le frames of `channels` channels as mono: their mean, rounded. */
function downmix(pcm: Uint8Array, channels: number): Uint8Array {
  const input = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const frames = pcm.length / (2 * channels);
  const out = new Uint8Array(2 * frames);
  const output = new DataView(out.buffer);
  for (let frame = 0; frame < frames; frame++) {
    let sum = 0;
    for (let channel = 0; channel < channels; channel++) sum += input.getInt16(2 * (frame * channels + channel), true);
    output.setInt16(2 * frame, Math.round(sum / channels), true);
  }
  return out;
}

/** Mono s16le from `from` Hz to `to` Hz by linear interpolation (speech has little above either Nyquist). */
function resample(pcm: Uint8Array, from: number, to: number): Uint8Array {
  const input = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const last = pcm.length / 2 - 1;
  const length = Math.max(1, Math.round(((last + 1) * to) / from));
  const out = new Uint8Array(2 * length);
  const output = new DataView(out.buffer);
  for (let i = 0; i < length; i++) {
    const position = (i * from) / to;
    const left = Math.min(Math.floor(position), last);
    const right = Math.min(left + 1, last);
    const fraction = position - left;
    const a = input.getInt16(2 * left, true);
    const b = input.getInt16(2 * right, true);
    output.setInt16(2 * i, Math.round(a + (b - a) * fraction), true);
  }
  return out;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
