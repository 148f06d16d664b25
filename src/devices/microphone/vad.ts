/**
 * Energy-based voice activity detection over a stream of signed 16-bit little-endian mono PCM: the microphone device
 * cuts the capture program's endless output into utterances with it, one speech-to-text call each.
 *
 * The stream is read in frames of {@link VAD_FRAME_MS} (20 ms); a frame whose RMS reaches `threshold` is speech.
 * Hysteresis in time rather than in level, so a door slam or a click costs nothing:
 *
 * - an utterance **starts** once `minSpeechMs` of speech frames have come with no silence longer than
 *   {@link ONSET_GAP_MS} between them, and within twice `minSpeechMs` (speech that dense); a shorter burst is
 *   dropped. It begins {@link VAD_PRE_ROLL_MS} before its first speech frame, so the first syllable's soft onset
 *   (a consonant under the threshold) is not clipped;
 * - it **ends** after `endSilenceMs` of silence, keeping {@link VAD_TAIL_MS} of it (the last syllable's decay) and
 *   no more — silence only costs transcription time;
 * - it is **cut** at `maxUtteranceMs`, and what follows is the next utterance straight away (no new onset needed, no
 *   sample lost or repeated); such a continuation with less than `minSpeechMs` of speech is dropped.
 *
 * Pure and deterministic: time comes from sample counts, never a clock, so the same bytes give the same utterances
 * however they are chunked (a chunk may end half-way through a sample). Memory is bounded: one utterance of at most
 * `maxUtteranceMs` (pre-roll included) plus the pre-roll ring and one frame.
 *
 * @module
 */

/** Frame length: short enough to find an utterance's edges closely, long enough for a stable RMS of voice. */
export const VAD_FRAME_MS = 20;
/** Audio kept before an utterance's first speech frame. */
export const VAD_PRE_ROLL_MS = 200;
/** Silence kept after an utterance's last speech frame. */
export const VAD_TAIL_MS = 200;
/** While an utterance is starting, a silence longer than this (a click's end, not a stop consonant) drops it. */
export const ONSET_GAP_MS = 100;

/** Options of {@link VoiceActivityDetector}: the `devices.microphone` settings, in milliseconds. */
export interface VadSettings {
  /** Samples per second of the stream (`devices.microphone.sample_rate`). */
  sampleRate: number;
  /** A frame whose RMS is at least this (1–32767) is speech (`threshold`). */
  threshold: number;
  /** Speech needed before an utterance starts (`min_speech`). */
  minSpeechMs: number;
  /** Silence that ends an utterance (`end_silence`). */
  endSilenceMs: number;
  /** Longest utterance, pre-roll included; a longer one is cut there (`max_utterance`). */
  maxUtteranceMs: number;
}

/** One utterance the detector found. */
export interface Utterance {
  /** Its samples, s16le mono: a whole number of frames, its own buffer. */
  pcm: Uint8Array;
  /** Where it starts in the stream, in milliseconds since the stream began (pre-roll included). */
  startMs: number;
  /** How long it plays, in milliseconds. */
  durationMs: number;
  /** Of which speech (frames at or over the threshold), in milliseconds. */
  speechMs: number;
  /** True when it was cut at `maxUtteranceMs` and the speech goes on in the next one. */
  cut: boolean;
}

type State = "silence" | "onset" | "speech";

/**
 * The detector: {@link VoiceActivityDetector.push} bytes as they come, take the finished utterances it returns;
 * {@link VoiceActivityDetector.end} when the stream stops.
 */
export class VoiceActivityDetector {
  readonly #rate: number;
  readonly #frameBytes: number;
  readonly #frameSamples: number;
  /** Mean square at or over which a frame is speech (compared squared: no square root per frame). */
  readonly #threshold2: number;
  readonly #minSpeechFrames: number;
  readonly #onsetSpanFrames: number;
  readonly #onsetGapFrames: number;
  readonly #endSilenceFrames: number;
  readonly #tailFrames: number;
  readonly #maxFrames: number;
  readonly #preRollFrames: number;

  /** A frame split across chunks, completed by the next ones (it may hold half a sample). */
  readonly #partial: Uint8Array;
  #partialBytes = 0;
  /** The last frames of silence, oldest first from `#ringStart`: the pre-roll of the next utterance. */
  readonly #ring: Uint8Array;
  #ringStart = 0;
  #ringCount = 0;
  /** The utterance being built (onset or speech), grown by doubling up to `#maxFrames`. */
  #buffer: Uint8Array;
  #frames = 0;
  #state: State = "silence";
  /** Index of the next frame in the stream: the clock of the detector. */
  #position = 0;
  #startFrame = 0;
  /** Stream index of the onset's first speech frame. */
  #onsetFirst = 0;
  #speechFrames = 0;
  /** Frames in the utterance up to and including its last speech frame. */
  #lastSpeech = 0;
  #silenceRun = 0;

  /**
   * @throws {RangeError} For a setting out of range (the message names it and its value), or a `minSpeechMs` that
   *   leaves no room in `maxUtteranceMs` for the pre-roll and the onset.
   *
   * @example
   * ```ts
   * const vad = new VoiceActivityDetector({
   *   sampleRate: 16_000,
   *   threshold: 600,
   *   minSpeechMs: 300,
   *   endSilenceMs: 800,
   *   maxUtteranceMs: 15_000,
   * });
   * vad.push(new Uint8Array(32_000)); // [] — one second of silence
   * ```
   */
  constructor(settings: VadSettings) {
    const { sampleRate, threshold, minSpeechMs, endSilenceMs, maxUtteranceMs } = settings;
    if (!Number.isInteger(sampleRate) || sampleRate < 1_000 || sampleRate > 384_000) {
      throw new RangeError(`sampleRate must be a whole number of hertz from 1000 to 384000, not ${sampleRate}`);
    }
    if (!Number.isFinite(threshold) || threshold < 1 || threshold > 32_767) {
      throw new RangeError(`threshold must be an RMS from 1 to 32767, not ${threshold}`);
    }
    for (const [name, value] of Object.entries({ minSpeechMs, endSilenceMs, maxUtteranceMs })) {
      if (!Number.isFinite(value) || value <= 0) {
        throw new RangeError(`${name} must be a positive number of milliseconds, not ${value}`);
      }
    }
    this.#rate = sampleRate;
    this.#frameSamples = Math.max(1, Math.round((sampleRate * VAD_FRAME_MS) / 1000));
    this.#frameBytes = 2 * this.#frameSamples;
    const frames = (ms: number) => Math.max(1, Math.round((ms * sampleRate) / 1000 / this.#frameSamples));
    this.#threshold2 = threshold * threshold;
    this.#minSpeechFrames = frames(minSpeechMs);
    this.#onsetSpanFrames = 2 * this.#minSpeechFrames;
    this.#onsetGapFrames = frames(ONSET_GAP_MS);
    this.#endSilenceFrames = frames(endSilenceMs);
    this.#tailFrames = Math.min(frames(VAD_TAIL_MS), this.#endSilenceFrames);
    this.#preRollFrames = frames(VAD_PRE_ROLL_MS);
    this.#maxFrames = Math.floor((maxUtteranceMs * sampleRate) / 1000 / this.#frameSamples);
    // The onset is held in the utterance's buffer: it must fit, with the pre-roll and one frame of speech after it.
    if (this.#preRollFrames + this.#onsetSpanFrames >= this.#maxFrames) {
      throw new RangeError(
        `minSpeechMs (${minSpeechMs}) is too long for maxUtteranceMs (${maxUtteranceMs}): an utterance must hold ` +
          `the ${VAD_PRE_ROLL_MS} ms pre-roll and twice minSpeechMs, so maxUtteranceMs must be over ` +
          `${VAD_PRE_ROLL_MS + 2 * minSpeechMs}`,
      );
    }
    this.#partial = new Uint8Array(this.#frameBytes);
    this.#ring = new Uint8Array(this.#preRollFrames * this.#frameBytes);
    this.#buffer = new Uint8Array(Math.min(this.#maxFrames, 50 * 4) * this.#frameBytes);
  }

  /** Bytes of one frame (two per sample). */
  get frameBytes(): number {
    return this.#frameBytes;
  }

  /** True while an utterance has started and not yet ended (what {@link VoiceActivityDetector.end} would give). */
  get speaking(): boolean {
    return this.#state === "speech";
  }

  /**
   * Takes the next bytes of the stream, of any length (an odd count leaves half a sample for the next chunk), and
   * returns the utterances they finished, in order.
   *
   * @example
   * ```ts
   * const vad = new VoiceActivityDetector({
   *   sampleRate: 16_000,
   *   threshold: 600,
   *   minSpeechMs: 300,
   *   endSilenceMs: 800,
   *   maxUtteranceMs: 15_000,
   * });
   * declare const chunk: Uint8Array; // from `arecord -t raw`
   * for (const utterance of vad.push(chunk)) console.log(utterance.startMs, utterance.durationMs);
   * ```
   */
  push(chunk: Uint8Array): Utterance[] {
    const out: Utterance[] = [];
    const size = this.#frameBytes;
    let at = 0;
    if (this.#partialBytes > 0) {
      const take = Math.min(size - this.#partialBytes, chunk.length);
      this.#partial.set(chunk.subarray(0, take), this.#partialBytes);
      this.#partialBytes += take;
      at = take;
      if (this.#partialBytes < size) return out;
      this.#frame(this.#partial, 0, out);
      this.#partialBytes = 0;
    }
    // Whole frames are read in place, without a copy.
    for (; at + size <= chunk.length; at += size) this.#frame(chunk, at, out);
    if (at < chunk.length) {
      this.#partial.set(chunk.subarray(at), 0);
      this.#partialBytes = chunk.length - at;
    }
    return out;
  }

  /**
   * The stream stopped (the capture program exited): the utterance in progress, if it has speech enough, is
   * returned; a partial frame is discarded, and the detector starts afresh (the next stream's time starts at 0).
   *
   * @example
   * ```ts
   * const vad = new VoiceActivityDetector({
   *   sampleRate: 16_000,
   *   threshold: 600,
   *   minSpeechMs: 300,
   *   endSilenceMs: 800,
   *   maxUtteranceMs: 15_000,
   * });
   * vad.end(); // []
   * ```
   */
  end(): Utterance[] {
    const out: Utterance[] = [];
    if (this.#state === "speech") this.#finish(out, false);
    this.#state = "silence";
    this.#frames = 0;
    this.#partialBytes = 0;
    this.#ringCount = 0;
    this.#ringStart = 0;
    this.#position = 0;
    this.#silenceRun = 0;
    return out;
  }

  /** One frame at `bytes[at, at + frameBytes)`: classified, then through the state machine. */
  #frame(bytes: Uint8Array, at: number, out: Utterance[]): void {
    const speech = this.#isSpeech(bytes, at);
    switch (this.#state) {
      case "silence":
        if (!speech) {
          this.#toRing(bytes, at);
          break;
        }
        // Onset: the pre-roll, then this frame, in the utterance buffer; the ring is empty until it fails.
        this.#startFrame = this.#position - this.#ringCount;
        this.#onsetFirst = this.#position;
        this.#frames = 0;
        for (let i = 0; i < this.#ringCount; i++) {
          const frame = (this.#ringStart + i) % this.#preRollFrames;
          this.#append(this.#ring, frame * this.#frameBytes);
        }
        this.#ringCount = 0;
        this.#ringStart = 0;
        this.#append(bytes, at);
        this.#speechFrames = 1;
        this.#lastSpeech = this.#frames;
        this.#silenceRun = 0;
        this.#state = "onset";
        if (this.#speechFrames >= this.#minSpeechFrames) this.#state = "speech";
        break;
      case "onset":
        this.#append(bytes, at);
        if (speech) {
          this.#speechFrames++;
          this.#lastSpeech = this.#frames;
          this.#silenceRun = 0;
          if (this.#speechFrames >= this.#minSpeechFrames) {
            this.#state = "speech";
            break;
          }
        } else if (++this.#silenceRun > this.#onsetGapFrames) {
          this.#dropOnset();
          break;
        }
        // Speech too sparse to be voice (a rattle, a tap now and then) is no utterance either.
        if (this.#position + 1 - this.#onsetFirst >= this.#onsetSpanFrames) this.#dropOnset();
        break;
      case "speech":
        this.#append(bytes, at);
        if (speech) {
          this.#speechFrames++;
          this.#lastSpeech = this.#frames;
          this.#silenceRun = 0;
        } else if (++this.#silenceRun >= this.#endSilenceFrames) {
          const kept = this.#finish(out, false);
          this.#state = "silence";
          // The silence after the kept tail is the start of the next pre-roll (never a repeat of what went out).
          this.#ringFromBuffer(kept);
          this.#frames = 0;
          break;
        }
        if (this.#frames >= this.#maxFrames) this.#cutHere(out);
        break;
    }
    this.#position++;
  }

  #isSpeech(bytes: Uint8Array, at: number): boolean {
    let sum = 0;
    const end = at + this.#frameBytes;
    for (let i = at; i < end; i += 2) {
      const sample = ((bytes[i + 1]! << 24) >> 16) | bytes[i]!;
      sum += sample * sample;
    }
    return sum >= this.#threshold2 * this.#frameSamples;
  }

  #append(bytes: Uint8Array, at: number): void {
    const size = this.#frameBytes;
    const needed = (this.#frames + 1) * size;
    if (needed > this.#buffer.length) {
      const grown = new Uint8Array(Math.min(this.#maxFrames * size, Math.max(needed, 2 * this.#buffer.length)));
      grown.set(this.#buffer.subarray(0, this.#frames * size));
      this.#buffer = grown;
    }
    this.#buffer.set(bytes.subarray(at, at + size), this.#frames * size);
    this.#frames++;
  }

  #toRing(bytes: Uint8Array, at: number): void {
    const slot = (this.#ringStart + this.#ringCount) % this.#preRollFrames;
    this.#ring.set(bytes.subarray(at, at + this.#frameBytes), slot * this.#frameBytes);
    if (this.#ringCount < this.#preRollFrames) this.#ringCount++;
    else this.#ringStart = (this.#ringStart + 1) % this.#preRollFrames;
  }

  /**
   * The last frames of the utterance buffer, from frame `after` on, become the pre-roll (a dropped onset, or the
   * silence after an utterance's tail).
   */
  #ringFromBuffer(after: number): void {
    this.#ringCount = 0;
    this.#ringStart = 0;
    const from = Math.max(after, this.#frames - this.#preRollFrames);
    for (let frame = from; frame < this.#frames; frame++) this.#toRing(this.#buffer, frame * this.#frameBytes);
  }

  #dropOnset(): void {
    this.#ringFromBuffer(0);
    this.#frames = 0;
    this.#silenceRun = 0;
    this.#state = "silence";
  }

  /**
   * Hands out the utterance, its trailing silence trimmed to the tail, and returns how many frames it kept; drops a
   * continuation without speech enough.
   */
  #finish(out: Utterance[], cut: boolean): number {
    const keep = Math.min(this.#frames, this.#lastSpeech + this.#tailFrames);
    if (this.#speechFrames >= this.#minSpeechFrames && keep > 0) {
      const toMs = (frames: number) => (frames * this.#frameSamples * 1000) / this.#rate;
      out.push({
        pcm: this.#buffer.slice(0, keep * this.#frameBytes),
        startMs: toMs(this.#startFrame),
        durationMs: toMs(keep),
        speechMs: toMs(this.#speechFrames),
        cut,
      });
    }
    return keep;
  }

  /** At the longest length: out it goes, whole, and the next frame starts the continuation. */
  #cutHere(out: Utterance[]): void {
    this.#lastSpeech = this.#frames; // a cut keeps everything: the speech goes on in the next one
    this.#finish(out, true);
    this.#startFrame = this.#position + 1;
    this.#frames = 0;
    this.#speechFrames = 0;
    this.#lastSpeech = 0;
    // The silence run carries over: a cut in a pause still ends after endSilenceMs of it in all.
  }
}
