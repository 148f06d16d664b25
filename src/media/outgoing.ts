/**
 * The rules of media homed sends by URL (`output_send`'s `url`), beside those of what it reads: which size limit an
 * output's type gets, which kind its bytes must be, and how a refusal or failure is told to the model — naming the URL
 * and the rule. The fetch itself is inbound media's (`MediaService.fetchOutgoing`: the address policy without any
 * trusted implementation address, `fetchBounded`, the cache).
 *
 * @module
 */

import type { MediaOutputType as OutgoingType } from "../io/output_tools.ts";
import { escapeControl } from "../text/untrusted.ts";
import { MediaRefused } from "./address_policy.ts";
import { MediaFetchError } from "./bounded_fetch.ts";

export type { OutgoingType };

/** The longest part of a URL an error quotes. */
const URL_SHOWN = 120;

/**
 * The size limit of an output's bytes and the setting it comes from: an image's and a voice clip's own; a file (any
 * type) the larger of the two, so nothing sent by URL is bigger than what homed would read.
 *
 * @example
 * ```ts
 * outgoingLimit({ maxImageBytes: 10_485_760, maxAudioBytes: 5_242_880 }, "file");
 * // { maxBytes: 10485760, limitName: "media.max_image_bytes" }
 * ```
 */
export function outgoingLimit(
  settings: { maxImageBytes: number; maxAudioBytes: number },
  type: OutgoingType,
): { maxBytes: number; limitName: string } {
  const image = { maxBytes: settings.maxImageBytes, limitName: "media.max_image_bytes" };
  const audio = { maxBytes: settings.maxAudioBytes, limitName: "media.max_audio_bytes" };
  if (type === "image") return image;
  if (type === "audio") return audio;
  return audio.maxBytes > image.maxBytes ? audio : image;
}

/**
 * Why bytes of `kind` (as sniffed) may not go out as `type`, or `undefined` when they may: an image must be an image,
 * a voice clip audio; a file may be anything.
 *
 * @example
 * ```ts
 * kindProblem("image", "application/pdf", "file"); // "its bytes are application/pdf, not an image"
 * kindProblem("file", "application/pdf", "file"); // undefined
 * ```
 */
export function kindProblem(type: OutgoingType, mime: string, kind: string): string | undefined {
  if (type === "file" || kind === type) return undefined;
  return `its bytes are ${mime}, not ${type === "image" ? "an image" : "audio"}`;
}

/**
 * The error the model gets when a URL for an output is not sent: `url "…" was refused: <the rule>` for the address
 * policy (the first URL or a redirect) and bytes of the wrong kind, `url "…" could not be fetched: <why>` otherwise.
 *
 * @example
 * ```ts
 * import { MediaRefused } from "./address_policy.ts";
 *
 * const refused = new MediaRefused("file:///etc/homed/homed.yaml", "the scheme file: is not allowed (only http: and https:)");
 * outgoingError("file:///etc/homed/homed.yaml", refused).message;
 * // 'url "file:///etc/homed/homed.yaml" was refused: the scheme file: is not allowed (only http: and https:)'
 * ```
 */
export function outgoingError(url: string, error: unknown): Error {
  const quoted = JSON.stringify(shown(url));
  if (error instanceof MediaRefused) return outgoingRefusal(url, error.reason);
  const message = lowerFirst(error instanceof Error ? error.message : String(error));
  const refused = error instanceof MediaFetchError && error.code === "refused";
  return new Error(`url ${quoted} ${refused ? "was refused" : "could not be fetched"}: ${message}`, { cause: error });
}

/**
 * The error for a URL homed will not send, for `reason` (the rule).
 *
 * @example
 * ```ts
 * outgoingRefusal("https://example.com/cat.png", "its bytes are text/html, not an image").message;
 * // 'url "https://example.com/cat.png" was refused: its bytes are text/html, not an image'
 * ```
 */
export function outgoingRefusal(url: string, reason: string): Error {
  return new Error(`url ${JSON.stringify(shown(url))} was refused: ${reason}`);
}

/** A URL as an error quotes it: control characters visible, credentials dropped, at most 120 characters. */
function shown(raw: string): string {
  let text = raw;
  try {
    const url = new URL(raw);
    url.username = "";
    url.password = "";
    text = url.href;
  } catch {
    // Not a URL: quoted as it came.
  }
  text = escapeControl(text);
  return text.length > URL_SHOWN ? `${text.slice(0, URL_SHOWN - 1)}…` : text;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
