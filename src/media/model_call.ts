/**
 * The one HTTP exchange the seeing, hearing and speaking models share: a POST under a deadline for the whole call
 * (headers and body — a hung or trickling server must not hang homed), the caller's `AbortSignal`, the key as
 * `Authorization: Bearer` only when one is set, a reply body read within a byte limit, and every failure as one
 * {@link MediaModelError} whose message names the server's `host[:port]` (never the URL, which may carry a key),
 * the setting to look at, and what went wrong.
 *
 * Unlike an LLM call (`src/provider/call_runner.ts`) there is no retry and no idle timeout: a description, a
 * transcript or a spoken answer is one short exchange that either fits its deadline or is given up.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import { errorDetail } from "../provider/call_errors.ts";
import { oneLine } from "../text/untrusted.ts";

/** What kind of failure it was. */
export type MediaModelErrorCode = "timeout" | "http" | "network" | "bad_reply" | "too_big";

/** A call to a vision, speech-to-text or text-to-speech server that failed, with a message fit to show the owner. */
export class MediaModelError extends Error {
  readonly code: MediaModelErrorCode;
  /** HTTP status, when the server answered with an error status. */
  readonly status: number | undefined;

  /**
   * @example
   * ```ts
   * const error = new MediaModelError("http", "The vision model at 127.0.0.1:4101 failed (HTTP 500: oops)", {
   *   status: 500,
   * });
   * error.code; // "http"
   * ```
   */
  constructor(code: MediaModelErrorCode, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "MediaModelError";
    this.code = code;
    this.status = options.status;
  }
}

/** Options of {@link ModelEndpoint}. */
export interface ModelEndpointOptions {
  /** What the server is, as the messages say it: `"vision model"`, `"speech-to-text server"`. */
  kind: string;
  /** The config section of the server (`"vision"`, `"speech.stt"`): messages name `<setting>.timeout` and so on. */
  setting: string;
  /** The API root, e.g. `http://127.0.0.1:8080/v1`; paths are appended to it. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; empty or absent sends no such header (a local server needs none). */
  apiKey?: string | undefined;
  /** Deadline of the whole call, headers and body, in milliseconds. */
  timeoutMs: number;
  clock: Clock;
}

/** One POST to a {@link ModelEndpoint}. */
export interface ModelRequest {
  /** Appended to the base URL, e.g. `/chat/completions`. */
  path: string;
  /** A JSON text, or a form (which sets its own multipart `content-type`). */
  body: string | FormData;
  /** `content-type` of a text body. */
  contentType?: string;
  /** Largest reply body accepted, in bytes; a longer one is given up as `too_big` without reading the rest. */
  maxReplyBytes: number;
  /** The caller's cancellation; when it aborts, the call rejects with its reason (not a {@link MediaModelError}). */
  signal?: AbortSignal | undefined;
}

/** A 2xx answer, read whole. */
export interface ModelReply {
  bytes: Uint8Array;
  /** The `content-type` header, lower case (`""` when the server sent none). */
  contentType: string;
}

/** Most of an error body quoted in a message is in its first few kilobytes. */
const ERROR_BODY_BYTES = 16_384;

/** `60000` → `60s`, `200` → `200ms`: the way durations are written in the config. */
function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * Reads `body` until it ends or passes `limit` bytes; `more` says it was cut off there (the rest is cancelled unread).
 */
async function readUpTo(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<{ bytes: Uint8Array; more: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), more: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let more = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.length;
      if (total > limit) {
        more = true;
        break;
      }
    }
  } finally {
    // Stops the download of whatever is left (and frees the connection) whether the read ended, overflowed or broke.
    await reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(Math.min(total, limit));
  let at = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - at);
    bytes.set(part, at);
    at += part.length;
    if (at === bytes.length) break;
  }
  return { bytes, more };
}

/**
 * One model server: POSTs under the deadline, with the key when set, and words every failure as a
 * {@link MediaModelError} naming the server.
 */
export class ModelEndpoint {
  /** The server's `host[:port]`, named in every message. */
  readonly host: string;
  #options: ModelEndpointOptions;
  #root: string;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const endpoint = new ModelEndpoint({
   *   kind: "vision model",
   *   setting: "vision",
   *   baseUrl: "http://127.0.0.1:8080/v1",
   *   apiKey: "",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   * });
   * endpoint.host; // "127.0.0.1:8080"
   * ```
   */
  constructor(options: ModelEndpointOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch (cause) {
      // Not the value itself: a base URL may carry a key.
      throw new TypeError(`The ${options.kind}'s ${options.setting}.base_url is not a URL`, { cause });
    }
    this.host = url.host;
    this.#root = options.baseUrl.replace(/\/+$/, "");
    this.#options = options;
  }

  /** `The vision model at 127.0.0.1:8080`: the start of every message. */
  get subject(): string {
    return `The ${this.#options.kind} at ${this.host}`;
  }

  /**
   * An unusable answer; `detail` says what is wrong with it.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const endpoint = new ModelEndpoint({
   *   kind: "speech-to-text server",
   *   setting: "speech.stt",
   *   baseUrl: "http://127.0.0.1:8080/v1",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   * });
   * endpoint.badReply("its answer has no text").message;
   * // "The speech-to-text server at 127.0.0.1:8080 answered without a usable result: its answer has no text"
   * ```
   */
  badReply(detail: string): MediaModelError {
    return new MediaModelError("bad_reply", `${this.subject} answered without a usable result: ${detail}`);
  }

  /**
   * Sends `request` and reads the whole 2xx answer within the deadline and the byte limit.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const endpoint = new ModelEndpoint({
   *   kind: "text-to-speech server",
   *   setting: "speech.tts",
   *   baseUrl: "http://127.0.0.1:8880/v1",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   * });
   * const reply = await endpoint.post({
   *   path: "/audio/speech",
   *   body: JSON.stringify({ model: "kokoro", input: "Hello", voice: "af_heart", response_format: "wav" }),
   *   contentType: "application/json",
   *   maxReplyBytes: 10 * 1024 * 1024,
   * });
   * reply.contentType; // "audio/wav"
   * ```
   */
  async post(request: ModelRequest): Promise<ModelReply> {
    const { clock, timeoutMs, apiKey } = this.#options;
    const deadline = new AbortController();
    let late = false;
    // One timer for the whole call: aborting it stops the fetch or the body read, wherever the call is.
    const cancel = clock.after(timeoutMs, () => {
      late = true;
      deadline.abort(new Error("timeout"));
    });
    const signal = request.signal ? AbortSignal.any([request.signal, deadline.signal]) : deadline.signal;
    const headers: Record<string, string> = {};
    if (request.contentType !== undefined) headers["content-type"] = request.contentType;
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    try {
      const response = await fetch(`${this.#root}${request.path}`, {
        method: "POST",
        headers,
        body: request.body,
        signal,
      });
      if (!response.ok) {
        const { bytes } = await readUpTo(response.body, ERROR_BODY_BYTES);
        throw this.#httpError(response.status, new TextDecoder().decode(bytes));
      }
      const declared = Number(response.headers.get("content-length") ?? NaN);
      if (declared > request.maxReplyBytes) {
        await response.body?.cancel().catch(() => {});
        throw this.#tooBig(request.maxReplyBytes);
      }
      const { bytes, more } = await readUpTo(response.body, request.maxReplyBytes);
      if (more) throw this.#tooBig(request.maxReplyBytes);
      return { bytes, contentType: (response.headers.get("content-type") ?? "").toLowerCase() };
    } catch (error) {
      if (error instanceof MediaModelError) throw error;
      if (request.signal?.aborted) throw request.signal.reason;
      if (late) {
        throw new MediaModelError(
          "timeout",
          `${this.subject} did not answer within ${duration(timeoutMs)} (${this.#options.setting}.timeout)`,
          { cause: error },
        );
      }
      // fetch rejects with a TypeError when the server cannot be reached or the connection breaks.
      // Deno names the request's URL in its messages; it may carry a key, so only the host stays.
      const plain = (value: unknown) =>
        String(value).replace(/ for url \([^)]*\)/g, "").replaceAll(this.#root, this.host);
      const message = plain((error as Error)?.message ?? error);
      const cause = (error as Error)?.cause instanceof Error
        ? `: ${plain(((error as Error).cause as Error).message)}`
        : "";
      throw new MediaModelError(
        "network",
        `${this.subject} could not be reached (${message}${cause}); check ${this.#options.setting}.base_url`,
        { cause: error },
      );
    } finally {
      cancel();
    }
  }

  /**
   * The reply's body as JSON, or a `bad_reply` error when it is not JSON.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const endpoint = new ModelEndpoint({
   *   kind: "vision model",
   *   setting: "vision",
   *   baseUrl: "http://127.0.0.1:8080/v1",
   *   timeoutMs: 60_000,
   *   clock: systemClock,
   * });
   * endpoint.json({ bytes: new TextEncoder().encode('{"text":"hi"}'), contentType: "application/json" });
   * // { text: "hi" }
   * ```
   */
  json(reply: ModelReply): unknown {
    try {
      return JSON.parse(new TextDecoder().decode(reply.bytes));
    } catch (cause) {
      throw new MediaModelError("bad_reply", `${this.subject} answered with something that is not JSON`, { cause });
    }
  }

  #tooBig(limit: number): MediaModelError {
    return new MediaModelError("too_big", `${this.subject} answered with more than ${limit} bytes, the most accepted`);
  }

  #httpError(status: number, text: string): MediaModelError {
    let said: string | undefined;
    try {
      said = errorDetail(JSON.parse(text));
    } catch { /* not JSON: the text itself */ }
    // The server's words go into a log line and a chat message: one line, no control characters.
    said = oneLine(said ?? text).slice(0, 300) || "no detail";
    const setting = this.#options.setting;
    const what = status === 401 || status === 403
      ? `refused the API key (HTTP ${status}: ${said}); check ${setting}.api_key`
      : status === 404
      ? `does not know the request (HTTP 404: ${said}); check ${setting}.base_url and ${setting}.model`
      : status >= 500
      ? `failed (HTTP ${status}: ${said})`
      : `rejected the request (HTTP ${status}: ${said})`;
    return new MediaModelError("http", `${this.subject} ${what}`, { status });
  }
}
