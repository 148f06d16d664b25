/**
 * The client of the speech-to-text server (`speech.stt.*`): a voice message goes out as OpenAI's
 * `POST /audio/transcriptions` form (whisper.cpp's server, speaches and LocalAI take the same), its transcript comes
 * back. The file's name carries the format — servers pick the decoder by its extension.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import { ModelEndpoint } from "./model_call.ts";

/** Options of {@link SttClient} (the `speech.stt` config section). */
export interface SttClientOptions {
  /** OpenAI-compatible API root, e.g. `http://127.0.0.1:8000/v1` (`speech.stt.base_url`). */
  baseUrl: string;
  model: string;
  /** Empty or absent: no `Authorization` header. */
  apiKey?: string | undefined;
  /** Deadline of the whole call (`speech.stt.timeout`). */
  timeoutMs: number;
  clock: Clock;
  /** ISO-639-1 code (`zh`); empty or absent lets the server detect the language. */
  language?: string | undefined;
  /** Largest answer accepted, in bytes (default 1 MiB: a transcript is text). */
  maxReplyBytes?: number;
}

/** Audio to transcribe: its bytes, MIME type, and a file name whose extension names the format (`voice.wav`). */
export interface SttAudio {
  bytes: Uint8Array;
  mime: string;
  filename: string;
}

/** Turns speech into text. */
export class SttClient {
  #endpoint: ModelEndpoint;
  #model: string;
  #language: string;
  #maxReplyBytes: number;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const stt = new SttClient({
   *   baseUrl: "http://127.0.0.1:8000/v1",
   *   model: "Systran/faster-whisper-small",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   *   language: "zh",
   * });
   * ```
   */
  constructor(options: SttClientOptions) {
    this.#endpoint = new ModelEndpoint({
      kind: "speech-to-text server",
      setting: "speech.stt",
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs,
      clock: options.clock,
    });
    this.#model = options.model;
    this.#language = options.language ?? "";
    this.#maxReplyBytes = options.maxReplyBytes ?? 1024 * 1024;
  }

  /** The server's `host[:port]`, as the error messages name it. */
  get host(): string {
    return this.#endpoint.host;
  }

  /**
   * The transcript of `audio`, trimmed — `""` when the server heard no speech. Throws a `MediaModelError` when the
   * call fails or the answer has no `text`.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const stt = new SttClient({
   *   baseUrl: "http://127.0.0.1:8000/v1",
   *   model: "whisper-1",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   * });
   * const wav = await Deno.readFile("voice.wav");
   * const text = await stt.transcribe({ bytes: wav, mime: "audio/wav", filename: "voice.wav" });
   * ```
   */
  async transcribe(audio: SttAudio, signal?: AbortSignal): Promise<string> {
    const form = new FormData();
    // A copy on its own ArrayBuffer: a Blob takes no view of a shared or resizable buffer.
    form.append("file", new Blob([new Uint8Array(audio.bytes)], { type: audio.mime }), audio.filename);
    form.append("model", this.#model);
    form.append("response_format", "json");
    if (this.#language !== "") form.append("language", this.#language);
    const reply = await this.#endpoint.post({
      path: "/audio/transcriptions",
      body: form,
      maxReplyBytes: this.#maxReplyBytes,
      signal,
    });
    const answer = this.#endpoint.json(reply) as { text?: unknown } | null;
    const text = answer && typeof answer === "object" ? answer.text : undefined;
    if (typeof text !== "string") throw this.#endpoint.badReply("its answer has no text");
    return text.trim();
  }
}
