/**
 * Seeing and hearing, as one Service (`media`): what a message's attachments add to its words, and the butler's
 * voice. An image is fetched within its limit, sniffed, and described by the vision model (or, with
 * `vision.direct`, handed to the main model for that turn); a voice note is decoded (QQ's SILK → WAV) and transcribed.
 * What joins the message is text — `[image: …]`, `[voice note, transcribed: "…"]`, or a note saying why not — so a
 * text-only main model reasons about it and the history and memory keep words, never base64.
 *
 * Who may cost what: only the channels' own attachments are fetched (never a URL from the text), a guest's within
 * `media.guest_max_bytes`; a stranger never reaches here (channels ignore them). Every call has a deadline; a failure
 * becomes a note in the turn ("could not read the image: …"), never a stuck turn. What the butler sends by URL
 * (`output_send`) is fetched here under the same rules (`fetchOutgoing`), so a channel only ever sends bytes homed holds.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Trust } from "../identity/trust.ts";
import type { InputRef } from "../io/event.ts";
import type { MessageAttachment } from "../io/message_payload.ts";
import type { Service } from "../service/service.ts";
import { type AddressPolicy, checkMediaUrl } from "./address_policy.ts";
import { fetchBounded } from "./bounded_fetch.ts";
import type { MediaCache, MediaRef } from "./media_cache.ts";
import { kindProblem, outgoingError, outgoingLimit, outgoingRefusal, type OutgoingType } from "./outgoing.ts";
import { extensionFor, sniffMedia } from "../fs/media_type.ts";
import { isSilk, silkToWav, wavToSilk } from "../audio/silk.ts";

/** An image or a clip: its bytes and what sniffing found they are. */
export interface MediaBytes {
  bytes: Uint8Array;
  mime: string;
}

/** The vision model, as the service uses it (`vision_client.ts`). */
export interface Describer {
  describe(image: MediaBytes, instruction: string, signal?: AbortSignal): Promise<string>;
}

/** The speech-to-text server (`stt_client.ts`). */
export interface Transcriber {
  transcribe(audio: MediaBytes & { filename: string }, signal?: AbortSignal): Promise<string>;
}

/** The text-to-speech server (`tts_client.ts`). */
export interface Speaker {
  speak(text: string, signal?: AbortSignal): Promise<MediaBytes>;
}

/** The `media.*`, `vision.direct` and `speech.reply_with_voice` settings the service uses. */
export interface MediaSettings {
  maxImageBytes: number;
  maxAudioBytes: number;
  guestMaxBytes: number;
  fetchTimeoutMs: number;
  /** `vision.direct` and a main model that takes image parts: images go to it instead of being described. */
  direct: boolean;
  replyWithVoice: "never" | "when_spoken_to" | "always";
}

/** Options of {@link MediaService}. */
export interface MediaServiceOptions {
  settings: MediaSettings;
  cache: MediaCache;
  clock: Clock;
  logger: Logger;
  /** The SSRF rules but the implementation's own address, which each attachment brings (`via`). */
  policy: Omit<AddressPolicy, "trustedHosts">;
  vision?: Describer;
  stt?: Transcriber;
  tts?: Speaker;
  /** Injected for tests; the global `fetch` otherwise. */
  fetch?: typeof fetch;
  /** Asks the channel an input came from for an attachment's URL when it gave none (QQ: `get_image`, `get_record`). */
  locate?: (input: InputRef, attachment: MessageAttachment) => Promise<string | Uint8Array | undefined>;
}

/** What a message's attachments add to it. */
export interface Perception {
  /** One line per attachment, to join the message's text. */
  notes: string[];
  /** With `vision.direct`: the images for the main model, this turn only. */
  images: MediaBytes[];
  /** A voice note was transcribed: the sender spoke. */
  spoken: boolean;
}

/** Instruction for the vision model: what the main model needs to answer about the picture. */
const DESCRIBE = "Describe this image for an assistant who cannot see it and must answer questions about it: " +
  "what it shows, any text in it (verbatim, in its language), numbers, and anything unusual. Be concise and factual.";

/** At most this many attachments of one message are read: a burst of 50 pictures is not 50 model calls. */
const MAX_PER_MESSAGE = 4;

interface CallCounts {
  calls: number;
  failures: number;
  bytes: number;
  ms: number;
}

const counts = (): CallCounts => ({ calls: 0, failures: 0, bytes: 0, ms: 0 });

/** The `media` service. */
export class MediaService implements Service {
  readonly name = "media";
  #options: MediaServiceOptions;
  #counts = { fetch: { ...counts(), refused: 0 }, vision: counts(), stt: counts(), tts: counts() };

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../clock.ts";
   * import { MediaCache } from "./media_cache.ts";
   *
   * const media = new MediaService({
   *   settings: {
   *     maxImageBytes: 10_485_760,
   *     maxAudioBytes: 10_485_760,
   *     guestMaxBytes: 2_097_152,
   *     fetchTimeoutMs: 20_000,
   *     direct: false,
   *     replyWithVoice: "when_spoken_to",
   *   },
   *   cache: await MediaCache.open({ dir: "./data/media", maxBytes: 268_435_456, clock: systemClock }),
   *   clock: systemClock,
   *   logger: getLogger(["homed", "media"]),
   *   policy: {
   *     allowHosts: [],
   *     ownListen: { host: "127.0.0.1", port: 8080 },
   *     resolve: async (host) => [...await Deno.resolveDns(host, "A")],
   *   },
   * });
   * ```
   */
  constructor(options: MediaServiceOptions) {
    this.#options = options;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  /** Calls, failures, bytes and time per kind of work; the cache's files and bytes. */
  status(): Record<string, unknown> {
    const { vision, stt, tts } = this.#options;
    return {
      vision: { configured: vision !== undefined, direct: this.#options.settings.direct, ...this.#counts.vision },
      stt: { configured: stt !== undefined, ...this.#counts.stt },
      tts: { configured: tts !== undefined, ...this.#counts.tts },
      fetch: { ...this.#counts.fetch },
      cache: this.#options.cache.status(),
    };
  }

  /** Whether a reply to a message so perceived is spoken (`speech.reply_with_voice`, and a TTS server set up). */
  wantsVoice(perception: Perception | undefined): boolean {
    if (!this.#options.tts) return false;
    const rule = this.#options.settings.replyWithVoice;
    return rule === "always" || (rule === "when_spoken_to" && perception?.spoken === true);
  }

  /**
   * Reads the attachments of one message from a sender of `trust`; never throws (a failure is a note). `signal`
   * is the turn's: shutdown stops a fetch or a model call.
   */
  async perceive(
    input: InputRef & { trust: Trust },
    attachments: readonly MessageAttachment[],
    signal?: AbortSignal,
  ): Promise<Perception> {
    const perception: Perception = { notes: [], images: [], spoken: false };
    for (const attachment of attachments.slice(0, MAX_PER_MESSAGE)) {
      perception.notes.push(await this.#perceiveOne(input, attachment, perception, signal));
    }
    if (attachments.length > MAX_PER_MESSAGE) {
      perception.notes.push(`[${attachments.length - MAX_PER_MESSAGE} more attachments not read: at most 4 a message]`);
    }
    return perception;
  }

  async #perceiveOne(
    input: InputRef & { trust: Trust },
    attachment: MessageAttachment,
    perception: Perception,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const { vision, stt, settings } = this.#options;
    const named = attachment.name ? ` "${clean(attachment.name, 80)}"` : "";
    switch (attachment.kind) {
      case "image": {
        if (!vision && !settings.direct) {
          return "[image: an image arrived, but you cannot see images (no vision model is set up: vision) — say so]";
        }
        try {
          const image = await this.#bytes(input, attachment, "image", signal);
          if (settings.direct) {
            perception.images.push(image);
            return `[image${named}: shown to you with this message]`;
          }
          const description = await this.#timed(
            this.#counts.vision,
            image.bytes.length,
            () => vision!.describe(image, DESCRIBE, signal),
          );
          return `[image${named}: ${clean(description, 1_500)}]`;
        } catch (error) {
          return `[image${named}: could not read the image: ${clean(messageOf(error), 300)}]`;
        }
      }
      case "audio": {
        if (!stt) {
          return "[voice note: you cannot listen to voice notes (no speech-to-text server is set up: speech.stt) — say so]";
        }
        try {
          const clip = await this.#bytes(input, attachment, "audio", signal);
          const audio = isSilk(clip.bytes) ? { bytes: await silkToWav(clip.bytes), mime: "audio/wav" } : clip;
          const filename = `voice.${extensionFor(audio.mime)}`;
          const text = await this.#timed(
            this.#counts.stt,
            audio.bytes.length,
            () => stt.transcribe({ ...audio, filename }, signal),
          );
          perception.spoken = true;
          return text.trim() === ""
            ? "[voice note: nothing could be made out]"
            : `[voice note, transcribed: "${clean(text, 4_000)}"]`;
        } catch (error) {
          return `[voice note: could not listen to it: ${clean(messageOf(error), 300)}]`;
        }
      }
      case "video":
        return `[video${named}: videos are not watched]`;
      case "file":
        return `[file${named}${
          attachment.size === undefined ? "" : `, ${attachment.size} bytes`
        }: files are not opened]`;
    }
  }

  /** The bytes of an attachment: from the cache (an upload) or fetched within the sender's limit, then sniffed. */
  async #bytes(
    input: InputRef & { trust: Trust },
    attachment: MessageAttachment,
    want: "image" | "audio",
    signal: AbortSignal | undefined,
  ): Promise<MediaBytes> {
    const { cache, settings } = this.#options;
    const limit = want === "image" ? settings.maxImageBytes : settings.maxAudioBytes;
    const guest = input.trust === "guest" && settings.guestMaxBytes < limit;
    const maxBytes = guest ? settings.guestMaxBytes : limit;
    const limitName = guest
      ? "media.guest_max_bytes"
      : want === "image"
      ? "media.max_image_bytes"
      : "media.max_audio_bytes";
    let bytes: Uint8Array;
    if (attachment.media) {
      const held = await cache.read(attachment.media);
      if (!held) throw new Error(`the upload ${attachment.media} is no longer in the media cache`);
      bytes = held;
    } else {
      const found = attachment.url ?? await this.#options.locate?.(input, attachment);
      if (!found) throw new Error("the channel gave no address for it");
      bytes = typeof found === "string" ? await this.#fetch(found, attachment.via, maxBytes, limitName, signal) : found;
    }
    if (bytes.length > maxBytes) throw new Error(`it is larger than ${limitName} (${maxBytes} bytes)`);
    const sniffed = sniffMedia(bytes);
    if (sniffed.kind !== want) {
      throw new Error(`the file is not ${want === "image" ? "an image" : "audio"} (its bytes are ${sniffed.mime})`);
    }
    if (!attachment.media) await cache.put(bytes, sniffed.mime);
    return { bytes, mime: sniffed.mime };
  }

  async #fetch(
    raw: string,
    via: string | undefined,
    maxBytes: number,
    limitName: string,
    signal: AbortSignal | undefined,
  ): Promise<Uint8Array> {
    const { policy, clock, settings, logger } = this.#options;
    const rules: AddressPolicy = { ...policy, trustedHosts: via ? [via] : [] };
    const started = clock.monotonic();
    this.#counts.fetch.calls++;
    try {
      const url = await checkMediaUrl(raw, rules);
      const fetched = await fetchBounded(url, {
        maxBytes,
        limitName,
        timeoutMs: settings.fetchTimeoutMs,
        timeoutName: "media.fetch_timeout",
        clock,
        check: (next) => checkMediaUrl(next.href, rules),
        ...(signal ? { signal } : {}),
        ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
      });
      this.#counts.fetch.bytes += fetched.bytes.length;
      return fetched.bytes;
    } catch (error) {
      this.#counts.fetch.failures++;
      if ((error as { code?: unknown }).code === "refused" || (error as Error).name === "MediaRefused") {
        this.#counts.fetch.refused++;
      }
      logger.info("Media not fetched: {reason}", { reason: messageOf(error) });
      throw error;
    } finally {
      this.#counts.fetch.ms += Math.round(clock.monotonic() - started);
    }
  }

  /**
   * Media the butler sends by URL (`output_send`): fetched by homed under the rules inbound media obey — the address
   * policy with no implementation's address trusted (nothing vouches for a URL the model wrote), within the type's
   * limit, its bytes of the type's kind — and kept in the cache, so the channel sends bytes homed holds and never the
   * URL. Rejects with an error naming the URL and the rule (`url "…" was refused: …`) or the failure.
   *
   * @example
   * ```ts
   * declare const media: MediaService;
   * const ref = await media.fetchOutgoing("https://gchat.qpic.cn/gchatpic_new/0/0-0-ABC/0", "image");
   * ref.id; // "0f46…48543.png": what output_send hands the channel
   * await media.fetchOutgoing("file:///etc/homed/homed.yaml", "file").catch((error) => error.message);
   * // 'url "file:///etc/homed/homed.yaml" was refused: the scheme file: is not allowed (only http: and https:)'
   * ```
   */
  async fetchOutgoing(url: string, type: OutgoingType, signal?: AbortSignal): Promise<MediaRef> {
    const { maxBytes, limitName } = outgoingLimit(this.#options.settings, type);
    let bytes: Uint8Array;
    try {
      bytes = await this.#fetch(url, undefined, maxBytes, limitName, signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      throw outgoingError(url, error);
    }
    const sniffed = sniffMedia(bytes);
    const problem = kindProblem(type, sniffed.mime, sniffed.kind);
    if (problem) {
      this.#counts.fetch.refused++;
      throw outgoingRefusal(url, problem);
    }
    return await this.#options.cache.put(bytes, sniffed.mime);
  }

  /** The butler's reply as speech, kept in the media cache for the channel to send; its bytes come back too. */
  async speak(text: string, signal?: AbortSignal): Promise<MediaRef & { bytes: Uint8Array }> {
    const tts = this.#options.tts;
    if (!tts) throw new Error("No text-to-speech server is set up (speech.tts)");
    const audio = await this.#timed(this.#counts.tts, text.length, () => tts.speak(text, signal));
    const sniffed = sniffMedia(audio.bytes);
    if (sniffed.kind !== "audio") {
      throw new Error(`The text-to-speech server answered with ${sniffed.mime}, not audio`);
    }
    return { ...await this.#options.cache.put(audio.bytes, sniffed.mime), bytes: audio.bytes };
  }

  /**
   * A picture homed took itself (a camera snapshot): checked to be an image, kept in the cache, and described by the
   * vision model — the text says what it shows, or why it could not be seen. Never throws.
   */
  async look(bytes: Uint8Array, signal?: AbortSignal): Promise<{ text: string; media?: MediaRef }> {
    const sniffed = sniffMedia(bytes);
    if (sniffed.kind !== "image") return { text: `not a picture (its bytes are ${sniffed.mime})` };
    const media = await this.#options.cache.put(bytes, sniffed.mime);
    const vision = this.#options.vision;
    if (!vision) return { text: "a picture was taken, but no vision model is set up (vision) to see it", media };
    try {
      const image = { bytes, mime: sniffed.mime };
      const description = await this.#timed(
        this.#counts.vision,
        bytes.length,
        () => vision.describe(image, DESCRIBE, signal),
      );
      return { text: clean(description, 1_500), media };
    } catch (error) {
      return { text: `the picture could not be described: ${clean(messageOf(error), 300)}`, media };
    }
  }

  /** Speech homed heard itself (the microphone's utterance, a WAV) as text, by the speech-to-text server. */
  async hear(wav: Uint8Array, signal?: AbortSignal): Promise<string> {
    const stt = this.#options.stt;
    if (!stt) throw new Error("No speech-to-text server is set up (speech.stt)");
    const audio = { bytes: wav, mime: "audio/wav", filename: "utterance.wav" };
    return (await this.#timed(this.#counts.stt, wav.length, () => stt.transcribe(audio, signal))).trim();
  }

  /** Keeps bytes that came with a message (an upload) in the media cache; the attachment then names its id. */
  keep(bytes: Uint8Array, mime: string): Promise<MediaRef> {
    return this.#options.cache.put(bytes, mime);
  }

  /**
   * Audio for a QQ voice message: WAV (what the text-to-speech server is asked for) encoded as SILK; SILK, and other
   * audio (an MP3 `output_send` fetched), as it is — the implementation converts those (NapCat and Lagrange do).
   */
  async asSilk(audio: Uint8Array): Promise<Uint8Array> {
    return sniffMedia(audio).mime === "audio/wav" ? (await wavToSilk(audio)).silk : audio;
  }

  /** Reads media the butler holds (an upload, a spoken reply, a tool's picture) by its cache id. */
  read(id: string): Promise<Uint8Array | undefined> {
    return this.#options.cache.read(id);
  }

  async #timed<T>(into: CallCounts, bytes: number, call: () => Promise<T>): Promise<T> {
    const started = this.#options.clock.monotonic();
    into.calls++;
    into.bytes += bytes;
    try {
      return await call();
    } catch (error) {
      into.failures++;
      throw error;
    } finally {
      into.ms += Math.round(this.#options.clock.monotonic() - started);
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Model output and file names are untrusted: one line, square brackets turned round (so nothing in them reads as
 * homed's own `[via …]` tags or closes the note early), at most `max` characters.
 */
function clean(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").replace(/\[/g, "(").replace(/\]/g, ")").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
