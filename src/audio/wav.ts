/**
 * WAV files of 16-bit PCM, written and read: the format speech-to-text servers take and text-to-speech servers give,
 * between which QQ's SILK voice notes are converted (`silk.ts`).
 *
 * Reading walks the RIFF chunks rather than assuming the 44-byte canonical header, since TTS servers put `LIST`
 * (metadata), `fact` or padding chunks before the samples and some write `WAVE_FORMAT_EXTENSIBLE`. Anything it cannot
 * read exactly is refused with a `TypeError` saying what is wrong, never guessed at.
 *
 * @module
 */

/** A WAV file's audio: interleaved little-endian samples and how to play them. */
export interface Wav {
  /** Frames per second (a frame is one sample of every channel). */
  sampleRate: number;
  channels: number;
  /** Always 16: {@link decodeWav} refuses other depths. */
  bitsPerSample: number;
  /** The samples, s16le, channels interleaved; its own buffer, starting at offset 0. */
  pcm: Uint8Array;
}

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
/** The GUID tail `-0000-0010-8000-00aa00389b71` that every `KSDATAFORMAT_SUBTYPE_*` of a WAVE format code shares. */
const SUBFORMAT_TAIL = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71];
/** Names for the format codes one meets instead of PCM, so a refusal says what the file is. */
const FORMAT_NAMES: Record<number, string> = {
  0x0002: "Microsoft ADPCM",
  0x0003: "IEEE float",
  0x0006: "A-law",
  0x0007: "µ-law",
  0x0011: "IMA ADPCM",
  0x0055: "MP3",
};
/** The data size streaming writers put before they know the length: "up to the end of the file". */
const UNKNOWN_SIZE = 0xffffffff;

/**
 * A WAV file (RIFF, `WAVE_FORMAT_PCM`, 16-bit) holding `pcm`: the canonical 44-byte header, then the samples.
 *
 * @param pcm Samples as s16le, channels interleaved: a whole number of frames.
 * @param sampleRate Frames per second, a positive integer.
 * @param channels How many channels `pcm` interleaves.
 * @throws {RangeError} For a sample rate or channel count out of range, or `pcm` not a whole number of frames.
 *
 * @example
 * ```ts
 * const silence = new Uint8Array(2 * 16_000); // 1 s of 16 kHz mono
 * const wav = encodeWav(silence, 16_000);
 * wav.length; // 32_044
 * ```
 */
export function encodeWav(pcm: Uint8Array, sampleRate: number, channels = 1): Uint8Array {
  if (!Number.isInteger(sampleRate) || sampleRate < 1 || sampleRate > 0xffffffff) {
    throw new RangeError(`A WAV sample rate is a positive whole number of hertz, not ${sampleRate}`);
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 0xffff) {
    throw new RangeError(`A WAV has 1 to 65535 channels, not ${channels}`);
  }
  const blockAlign = 2 * channels;
  if (pcm.length % blockAlign !== 0) {
    throw new RangeError(
      `WAV samples must be whole frames of ${blockAlign} bytes (16-bit, ${channels} channel(s)): ${pcm.length} bytes is not`,
    );
  }
  if (pcm.length > UNKNOWN_SIZE - 36) {
    throw new RangeError(`A WAV holds at most ${UNKNOWN_SIZE - 36} bytes of samples, not ${pcm.length}`);
  }
  const out = new Uint8Array(44 + pcm.length);
  const view = new DataView(out.buffer);
  writeTag(out, 0, "RIFF");
  view.setUint32(4, 36 + pcm.length, true);
  writeTag(out, 8, "WAVE");
  writeTag(out, 12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, WAVE_FORMAT_PCM, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  // The byte rate may exceed 32 bits for absurd rates; it is informative only, so it saturates.
  view.setUint32(28, Math.min(sampleRate * blockAlign, 0xffffffff), true);
  view.setUint16(32, blockAlign, true);
  view.setUint16(34, 16, true);
  writeTag(out, 36, "data");
  view.setUint32(40, pcm.length, true);
  out.set(pcm, 44);
  return out;
}

/**
 * The audio of a WAV file: its `fmt ` chunk and the samples of its `data` chunk, other chunks (`LIST`, `fact`, …)
 * skipped. A data size of `0xFFFFFFFF` (what streaming writers put) means "to the end of the file"; a trailing partial
 * frame is dropped.
 *
 * @throws {TypeError} When `bytes` is not a RIFF/WAVE file, is cut off, has no `fmt ` before `data`, or holds anything
 *   but 16-bit integer PCM (the message names the format or depth found).
 *
 * @example
 * ```ts
 * const wav = decodeWav(encodeWav(new Uint8Array(4_800), 24_000));
 * wav.sampleRate; // 24000
 * wav.pcm.length; // 4800
 * ```
 */
export function decodeWav(bytes: Uint8Array): Wav {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || readTag(bytes, 0) !== "RIFF" || readTag(bytes, 8) !== "WAVE") {
    throw new TypeError(`Not a WAV file: it starts with ${hexStart(bytes)} (expected "RIFF", 4 bytes, "WAVE")`);
  }
  // The RIFF size is not trusted: writers that stream leave it 0 or 0xFFFFFFFF. The chunks themselves are walked.
  let format: { sampleRate: number; channels: number } | undefined;
  let offset = 12;
  while (true) {
    if (offset + 8 > bytes.length) {
      throw new TypeError(
        offset >= bytes.length
          ? "A WAV file needs a data chunk: none before the end"
          : `WAV chunk header at byte ${offset} is cut off: ${bytes.length - offset} of 8 bytes present`,
      );
    }
    const id = readTag(bytes, offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    const present = bytes.length - body;
    if (id === "data") {
      if (format === undefined) throw new TypeError("A WAV file needs a fmt chunk before data");
      if (size !== UNKNOWN_SIZE && size > present) {
        throw new TypeError(`WAV data chunk runs past the end: declared ${size} bytes, ${present} present`);
      }
      const frame = 2 * format.channels;
      const length = Math.min(size, present);
      return { ...format, bitsPerSample: 16, pcm: bytes.slice(body, body + length - (length % frame)) };
    }
    if (size > present) {
      throw new TypeError(`WAV ${quoted(id)} chunk runs past the end: declared ${size} bytes, ${present} present`);
    }
    if (id === "fmt ") format = readFormat(view, body, size);
    // Chunks are word-aligned: an odd-sized one is followed by a pad byte.
    offset = body + size + (size % 2);
  }
}

/**
 * How long `wav` plays, in milliseconds (not rounded).
 *
 * @example
 * ```ts
 * durationMs({ sampleRate: 16_000, channels: 1, bitsPerSample: 16, pcm: new Uint8Array(16_000) }); // 500
 * ```
 */
export function durationMs(wav: Wav): number {
  return (wav.pcm.length / (wav.channels * (wav.bitsPerSample / 8)) / wav.sampleRate) * 1000;
}

function readFormat(view: DataView, at: number, size: number): { sampleRate: number; channels: number } {
  if (size < 16) throw new TypeError(`WAV fmt chunk is ${size} bytes: at least 16 are needed`);
  let code = view.getUint16(at, true);
  const channels = view.getUint16(at + 2, true);
  const sampleRate = view.getUint32(at + 4, true);
  const bits = view.getUint16(at + 14, true);
  if (code === WAVE_FORMAT_EXTENSIBLE) {
    // cbSize (2), valid bits (2), channel mask (4), then the sub-format GUID (16): 40 bytes in all.
    if (size < 40) throw new TypeError(`WAV fmt chunk of WAVE_FORMAT_EXTENSIBLE is ${size} bytes: 40 are needed`);
    const guid = new Uint8Array(view.buffer, view.byteOffset + at + 24, 16);
    if (SUBFORMAT_TAIL.some((byte, i) => guid[i + 2] !== byte)) {
      throw new TypeError("WAV sub-format is not a WAVE format code: only PCM is supported");
    }
    code = view.getUint16(at + 24, true);
  }
  if (code !== WAVE_FORMAT_PCM) {
    const name = FORMAT_NAMES[code];
    const hex = `0x${code.toString(16).padStart(4, "0")}`;
    throw new TypeError(`WAV format ${name ? `${hex} (${name})` : hex} is not supported: only PCM`);
  }
  if (bits !== 16) throw new TypeError(`WAV with ${bits}-bit samples is not supported: only 16-bit PCM`);
  if (channels === 0) throw new TypeError("WAV fmt chunk declares 0 channels");
  if (sampleRate === 0) throw new TypeError("WAV fmt chunk declares a sample rate of 0 Hz");
  return { sampleRate, channels };
}

function writeTag(out: Uint8Array, at: number, tag: string): void {
  for (let i = 0; i < 4; i++) out[at + i] = tag.charCodeAt(i);
}

function readTag(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(...bytes.subarray(at, at + 4));
}

/** A chunk id for a message: printable as it is, as hex otherwise (it comes from an arbitrary file). */
function quoted(id: string): string {
  return /^[\x20-\x7e]{4}$/.test(id) ? `"${id}"` : hexStart(new Uint8Array([...id].map((c) => c.charCodeAt(0))));
}

function hexStart(bytes: Uint8Array): string {
  if (bytes.length === 0) return "nothing (0 bytes)";
  return [...bytes.subarray(0, 4)].map((byte) => byte.toString(16).padStart(2, "0")).join(" ");
}
