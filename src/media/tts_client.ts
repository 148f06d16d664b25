/**
 * The client of the text-to-speech server (`speech.tts.*`): text goes out as OpenAI's `POST /audio/speech`
 * (Kokoro-FastAPI, openedai-speech and LocalAI take the same), WAV audio comes back. WAV because homed converts the
 * audio for QQ itself and WAV needs no decoder; the reply is read within a byte limit since audio is large.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import { errorDetail } from "../provider/call_errors.ts";
import { oneLine } from "../text/untrusted.ts";
import { ModelEndpoint } from "./model_call.ts";

/** Options of {@link TtsClient} (the `speech.tts` config section). */
export interface TtsClientOptions {
  /** OpenAI-compatible API root, e.g. `http://127.0.0.1:8880/v1` (`speech.tts.base_url`). */
  baseUrl: string;
  model: string;
  voice: string;
  /** Empty or absent: no `Authorization` header. */
  apiKey?: string | undefined;
  /** Deadline of the whole call (`speech.tts.timeout`). */
  timeoutMs: number;
  clock: Clock;
  /** Largest audio accepted, in bytes; a longer answer is given up unread (`too_big`). */
  maxReplyBytes: number;
}

/** Spoken audio: its bytes and MIME type (`audio/wav`). */
export interface SpokenAudio {
  bytes: Uint8Array;
  mime: string;
}

/** Turns text into speech. */
export class TtsClient {
  #endpoint: ModelEndpoint;
  #model: string;
  #voice: string;
  #maxReplyBytes: number;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const tts = new TtsClient({
   *   baseUrl: "http://127.0.0.1:8880/v1",
   *   model: "kokoro",
   *   voice: "zf_xiaobei",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   *   maxReplyBytes: 10 * 1024 * 1024,
   * });
   * ```
   */
  constructor(options: TtsClientOptions) {
    this.#endpoint = new ModelEndpoint({
      kind: "text-to-speech server",
      setting: "speech.tts",
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs,
      clock: options.clock,
    });
    this.#model = options.model;
    this.#voice = options.voice;
    this.#maxReplyBytes = options.maxReplyBytes;
  }

  /** The server's `host[:port]`, as the error messages name it. */
  get host(): string {
    return this.#endpoint.host;
  }

  /**
   * `text` spoken in the configured voice, as WAV. Throws a `MediaModelError` when the call fails, the audio is larger
   * than `maxReplyBytes`, or the answer is not audio (a JSON or text body with a 200 is an error in disguise).
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const tts = new TtsClient({
   *   baseUrl: "http://127.0.0.1:8880/v1",
   *   model: "kokoro",
   *   voice: "af_heart",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   *   maxReplyBytes: 10 * 1024 * 1024,
   * });
   * const { bytes, mime } = await tts.speak("The washing machine is done.");
   * await Deno.writeFile("/tmp/done.wav", bytes); // mime: "audio/wav"
   * ```
   */
  async speak(text: string, signal?: AbortSignal): Promise<SpokenAudio> {
    const reply = await this.#endpoint.post({
      path: "/audio/speech",
      body: JSON.stringify({ model: this.#model, input: text, voice: this.#voice, response_format: "wav" }),
      contentType: "application/json",
      maxReplyBytes: this.#maxReplyBytes,
      signal,
    });
    const type = reply.contentType.split(";")[0]!.trim();
    if (type.endsWith("json") || type.startsWith("text/")) {
      let said: string | undefined;
      try {
        said = errorDetail(JSON.parse(new TextDecoder().decode(reply.bytes)));
      } catch { /* not JSON: no detail to quote */ }
      throw this.#endpoint.badReply(
        `it sent ${type} instead of audio${said === undefined ? "" : ` (${oneLine(said).slice(0, 300)})`}`,
      );
    }
    if (reply.bytes.length === 0) throw this.#endpoint.badReply("it sent no audio");
    // We asked for WAV; a server that labels it generically (or not at all) still sent WAV.
    const mime = type === "" || type === "application/octet-stream" ? "audio/wav" : type;
    return { bytes: reply.bytes, mime };
  }
}
