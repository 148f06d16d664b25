/**
 * The microphone (`devices.microphone`, source `mic`): speech in the room as messages to the butler. A capture
 * program (`arecord` by default) streams raw PCM for as long as homed runs — kept running, and started again with
 * backoff when it exits or is missing, by {@link WatchedCommand}, so an unplugged microphone costs this device only.
 * The {@link VoiceActivityDetector} cuts the stream into utterances; each one goes, as a WAV file, to the injected
 * speech-to-text function, and its transcript becomes a message from `mic` with the configured trust (a microphone
 * in the living room hears the household, not the owner alone).
 *
 * Wake words: when `wake_words` are set, only a transcript that starts with one is a message, the word itself
 * removed, so background talk costs no LLM turn (it still costs transcription: the words are only known after it).
 * The device has no output of its own; its replies go to the speaker (the route table's default for `mic`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { encodeWav } from "../../audio/wav.ts";
import type { Clock } from "../../clock.ts";
import type { Trust } from "../../identity/trust.ts";
import type { Device, DeviceContext, DeviceTool } from "../../io/device.ts";
import type { OutputEvent } from "../../io/event.ts";
import { WatchedCommand, type WatchedCommandStatus } from "../../process/watched_command.ts";
import { type Utterance, VoiceActivityDetector } from "./vad.ts";

/** The `devices.microphone` settings, durations in milliseconds. */
export interface MicrophoneSettings {
  /** The capture program and its arguments: it prints s16le mono PCM at `sampleRate` until stopped. */
  command: string[];
  sampleRate: number;
  /** The trust of what the microphone hears. */
  trust: Trust;
  /** A transcript must start with one of these to be a message; empty: every transcript is one. */
  wakeWords: string[];
  /** Voice activity: a frame whose RMS is at least this (1–32767) is speech. */
  threshold: number;
  minSpeechMs: number;
  endSilenceMs: number;
  maxUtteranceMs: number;
}

/** Options of {@link MicrophoneDevice}. */
export interface MicrophoneOptions {
  settings: MicrophoneSettings;
  /**
   * Speech to text: one utterance as a WAV file in, its transcript out. `signal` aborts when the device stops (a
   * function that ignores it is not waited for).
   */
  hear: (wav: Uint8Array, signal: AbortSignal) => Promise<string>;
  clock: Clock;
  logger: Logger;
  /** In [0, 1): jitter for the capture program's restart backoff. */
  random?: () => number;
  /** Utterances that may wait while one is transcribed (4); beyond that the oldest is dropped. */
  queueLimit?: number;
}

/** The text of a message that was only the wake word: someone called the butler and said nothing else (yet). */
export const CALLED_TEXT = "(called)";

const SETTING = "devices.microphone";
/** Whitespace and punctuation around a wake word ("管家，", "Homed, "). */
const LEADING_NOISE = /^[\s\p{P}]+/u;
const WORD_CHAR = /[\p{L}\p{N}]/u;
/** Scripts written without spaces: a wake word may run straight into the next word ("管家开灯"). */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * What follows a wake word in `transcript`, or `undefined` when it starts with none. Compared case-insensitively
 * after leading whitespace and punctuation; the word and the punctuation and spaces after it are removed. A word
 * in a spaced script must end at a word boundary ("homed" is not heard in "homedepot"); a Chinese one need not.
 *
 * @example
 * ```ts
 * matchWakeWord("管家，开灯", ["管家", "homed"]); // "开灯"
 * matchWakeWord("Homed, what time is it?", ["管家", "homed"]); // "what time is it?"
 * matchWakeWord("管家。", ["管家"]); // ""
 * matchWakeWord("今天天气不错", ["管家"]); // undefined
 * ```
 */
export function matchWakeWord(transcript: string, wakeWords: readonly string[]): string | undefined {
  const text = transcript.replace(LEADING_NOISE, "");
  // The longest first, so "homed butler" wins over "homed" and its remainder does not start with "butler".
  const words = [...wakeWords].map((word) => word.trim()).filter(Boolean).sort((a, b) => b.length - a.length);
  for (const word of words) {
    if (text.slice(0, word.length).toLowerCase() !== word.toLowerCase()) continue;
    const last = word.at(-1) ?? "";
    const next = text.charAt(word.length);
    const joined = WORD_CHAR.test(last) && WORD_CHAR.test(next) && !UNSPACED.test(last) && !UNSPACED.test(next);
    if (joined) continue;
    return text.slice(word.length).replace(LEADING_NOISE, "").trimEnd();
  }
  return undefined;
}

/** What one start of the device holds: stopped together. */
interface Running {
  context: DeviceContext;
  capture: WatchedCommand;
  stopping: AbortController;
}

/** The `mic` device. */
export class MicrophoneDevice implements Device {
  readonly name = "mic";
  readonly type = "microphone";
  readonly description =
    "The microphone: speech in the room, transcribed, as messages from mic (no output of its own; replies are spoken)";
  readonly #options: MicrophoneOptions;
  readonly #vad: VoiceActivityDetector;
  readonly #queueLimit: number;
  readonly #queue: Utterance[] = [];
  #running: Running | undefined;
  /** The transcription loop (one utterance at a time, in order), for stop to wait on. */
  #draining: Promise<void> = Promise.resolve();
  /** Set and cleared synchronously around the loop, so an utterance that comes as it ends starts the next one. */
  #busy = false;
  #utterances = 0;
  #transcribed = 0;
  #messages = 0;
  #ignored = 0;
  #dropped = 0;
  #sttFailures = 0;
  #lastHeardAt: number | null = null;
  #lastError: string | null = null;

  /**
   * @throws {RangeError} For voice-activity settings that cannot work (the message names the setting).
   *
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const mic = new MicrophoneDevice({
   *   settings: {
   *     command: ["arecord", "-q", "-f", "S16_LE", "-r", "16000", "-c", "1", "-t", "raw"],
   *     sampleRate: 16_000,
   *     trust: "household",
   *     wakeWords: ["管家", "homed"],
   *     threshold: 600,
   *     minSpeechMs: 300,
   *     endSilenceMs: 800,
   *     maxUtteranceMs: 15_000,
   *   },
   *   hear: () => Promise.resolve("管家，开灯"),
   *   clock: systemClock,
   *   logger: getLogger(["homed", "mic"]),
   * });
   * mic.outputCapabilities(); // 0
   * ```
   */
  constructor(options: MicrophoneOptions) {
    this.#options = options;
    const { sampleRate, threshold, minSpeechMs, endSilenceMs, maxUtteranceMs } = options.settings;
    try {
      this.#vad = new VoiceActivityDetector({ sampleRate, threshold, minSpeechMs, endSilenceMs, maxUtteranceMs });
    } catch (error) {
      throw new RangeError(`${SETTING}: ${(error as Error).message}`);
    }
    this.#queueLimit = Math.max(1, options.queueLimit ?? 4);
  }

  tools(): readonly DeviceTool[] {
    return [];
  }

  /** Starts the capture program in the background: a missing or failing one is logged and retried, never thrown. */
  start(context: DeviceContext): Promise<void> {
    if (this.#running) return Promise.resolve();
    const { settings, clock, logger, random } = this.#options;
    this.#vad.end(); // a fresh stream
    const capture = new WatchedCommand({
      argv: settings.command,
      setting: `${SETTING}.command`,
      clock,
      logger,
      onOutput: (chunk) => this.#heard(this.#vad.push(chunk)),
      // What the program said before it ended is complete: an utterance it was in the middle of ends here.
      onEnd: () => this.#heard(this.#vad.end()),
      ...(random ? { random } : {}),
    });
    this.#running = { context, capture, stopping: new AbortController() };
    capture.start();
    return Promise.resolve();
  }

  /** Kills the capture program; utterances still waiting are let go, a transcription in flight is aborted. */
  async stop(): Promise<void> {
    const running = this.#running;
    if (!running) return;
    running.stopping.abort(new Error("The microphone is stopping"));
    await running.capture.stop();
    this.#queue.length = 0;
    await this.#draining;
    this.#running = undefined;
  }

  outputCapabilities(): number {
    return 0;
  }

  send(event: OutputEvent): Promise<void> {
    return Promise.reject(
      new Error(`The microphone takes no output (${event.type} to ${event.target}); replies to mic go to the speaker`),
    );
  }

  status(): Record<string, unknown> {
    const capture: WatchedCommandStatus | null = this.#running?.capture.status() ?? null;
    return {
      capture,
      utterances: this.#utterances,
      transcribed: this.#transcribed,
      messages: this.#messages,
      ignored_without_wake_word: this.#ignored,
      dropped: this.#dropped,
      stt_failures: this.#sttFailures,
      last_heard_at: this.#lastHeardAt === null ? null : new Date(this.#lastHeardAt).toISOString(),
      last_error: this.#lastError,
    };
  }

  /** Utterances the detector finished: queued for transcription, the oldest let go beyond the limit. */
  #heard(utterances: Utterance[]): void {
    const running = this.#running;
    if (!running || running.stopping.signal.aborted) return;
    for (const utterance of utterances) {
      this.#utterances++;
      this.#lastHeardAt = this.#options.clock.now();
      this.#queue.push(utterance);
      if (this.#queue.length > this.#queueLimit) {
        this.#queue.shift();
        this.#dropped++;
        this.#options.logger.warning(
          "The microphone heard more than speech to text keeps up with: an utterance was dropped ({waiting} wait)",
          { waiting: this.#queue.length },
        );
      }
    }
    if (this.#queue.length && !this.#busy) {
      this.#busy = true;
      this.#draining = this.#drain(running);
    }
  }

  /** Transcribes queued utterances until none is left; `#busy` is cleared in the same step the queue is found empty. */
  async #drain(running: Running): Promise<void> {
    const { signal } = running.stopping;
    try {
      for (let utterance = this.#queue.shift(); utterance && !signal.aborted; utterance = this.#queue.shift()) {
        let transcript: string;
        try {
          const wav = encodeWav(utterance.pcm, this.#options.settings.sampleRate);
          const heard: unknown = await untilAborted(
            Promise.resolve().then(() => this.#options.hear(wav, signal)),
            signal,
          );
          // The function is injected: a wrong value is its failure, not a crash of the loop.
          if (typeof heard !== "string") throw new TypeError(`it gave ${typeof heard} instead of text`);
          transcript = heard;
        } catch (error) {
          if (signal.aborted) return;
          this.#sttFailures++;
          this.#lastError = `Speech to text failed: ${(error as Error).message}`;
          this.#options.logger.warning("An utterance of {ms} ms could not be transcribed: {error}", {
            ms: Math.round(utterance.durationMs),
            error: (error as Error).message,
          });
          continue;
        }
        if (signal.aborted) return;
        this.#transcribed++;
        this.#deliver(running.context, transcript);
      }
    } finally {
      this.#busy = false;
    }
  }

  /** A transcript as a message from `mic`, when it is one (not empty; with the wake word when there are any). */
  #deliver(context: DeviceContext, transcript: string): void {
    const { settings, logger } = this.#options;
    let text = transcript.trim();
    if (!text.replace(LEADING_NOISE, "")) return; // nothing said (speech to text gives "" for noise)
    if (settings.wakeWords.length) {
      const rest = matchWakeWord(text, settings.wakeWords);
      if (rest === undefined) {
        this.#ignored++;
        // Not the words: what people say to each other is theirs, and stays out of the log.
        logger.debug("An utterance without a wake word was ignored ({chars} characters)", { chars: text.length });
        return;
      }
      text = rest || CALLED_TEXT;
    }
    try {
      context.emit({
        source: "mic",
        sender: "mic",
        trust: settings.trust,
        type: "message",
        payload: { text, spoken: true },
      });
      this.#messages++;
    } catch (error) {
      // Refused (homed is stopping, or too many inputs of mic wait): the words are lost, like a dropped utterance.
      this.#dropped++;
      this.#lastError = `A message could not be queued: ${(error as Error).message}`;
      logger.warning("What the microphone heard could not be queued: {error}", { error: (error as Error).message });
    }
  }
}

/** `work`, or the signal's reason once it aborts; `work`'s own late rejection is then ignored. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => {}); // settled after the race only when the work won
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}
