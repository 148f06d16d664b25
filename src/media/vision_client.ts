/**
 * The client of the vision model (`vision.*`): an image and an instruction go out as one OpenAI-compatible chat
 * completion with an image part, a description comes back. The image travels as a `data:` URL of its bytes — a
 * remote API cannot fetch a LAN or QQ URL, and homed has already fetched and checked the bytes anyway.
 *
 * @module
 */

import { encodeBase64 } from "../text/base64.ts";
import type { Clock } from "../clock.ts";
import { ModelEndpoint } from "./model_call.ts";

/** Options of {@link VisionClient} (the `vision` config section). */
export interface VisionClientOptions {
  /** OpenAI-compatible API root, e.g. `http://127.0.0.1:11434/v1` (`vision.base_url`). */
  baseUrl: string;
  model: string;
  /** Empty or absent: no `Authorization` header. */
  apiKey?: string | undefined;
  /** Deadline of the whole call (`vision.timeout`). */
  timeoutMs: number;
  clock: Clock;
  /** Longest description, in tokens (`vision.max_tokens`; default 400). */
  maxTokens?: number;
  /** Largest answer accepted, in bytes (default 1 MiB: a description is text). */
  maxReplyBytes?: number;
}

/** An image to describe: its bytes and their MIME type (`image/png`…). */
export interface VisionImage {
  bytes: Uint8Array;
  mime: string;
}

/** Asks the vision model what an image shows. */
export class VisionClient {
  #endpoint: ModelEndpoint;
  #model: string;
  #maxTokens: number;
  #maxReplyBytes: number;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const vision = new VisionClient({
   *   baseUrl: "http://127.0.0.1:11434/v1",
   *   model: "qwen2.5vl:7b",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   * });
   * ```
   */
  constructor(options: VisionClientOptions) {
    this.#endpoint = new ModelEndpoint({
      kind: "vision model",
      setting: "vision",
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs,
      clock: options.clock,
    });
    this.#model = options.model;
    this.#maxTokens = options.maxTokens ?? 400;
    this.#maxReplyBytes = options.maxReplyBytes ?? 1024 * 1024;
  }

  /** The server's `host[:port]`, as the error messages name it. */
  get host(): string {
    return this.#endpoint.host;
  }

  /**
   * The model's description of `image` following `instruction`, trimmed; throws a `MediaModelError` when the call
   * fails or the answer has no text.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const vision = new VisionClient({
   *   baseUrl: "http://127.0.0.1:11434/v1",
   *   model: "qwen2.5vl:7b",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   * });
   * const png = await Deno.readFile("photo.png");
   * const description = await vision.describe({ bytes: png, mime: "image/png" }, "Describe this photo briefly.");
   * ```
   */
  async describe(image: VisionImage, instruction: string, signal?: AbortSignal): Promise<string> {
    const body = {
      model: this.#model,
      stream: false,
      messages: [{
        role: "user",
        content: [
          { type: "text", text: instruction },
          { type: "image_url", image_url: { url: `data:${image.mime};base64,${encodeBase64(image.bytes)}` } },
        ],
      }],
      max_tokens: this.#maxTokens,
    };
    const reply = await this.#endpoint.post({
      path: "/chat/completions",
      body: JSON.stringify(body),
      contentType: "application/json",
      maxReplyBytes: this.#maxReplyBytes,
      signal,
    });
    const answer = this.#endpoint.json(reply) as { choices?: Array<{ message?: { content?: unknown } }> } | null;
    const choices = answer && typeof answer === "object" ? answer.choices : undefined;
    const content = Array.isArray(choices) ? choices[0]?.message?.content : undefined;
    if (typeof content !== "string") throw this.#endpoint.badReply("its answer has no message text");
    const description = content.trim();
    if (description === "") throw this.#endpoint.badReply("its description is empty");
    return description;
  }
}
