/**
 * An MQTT payload as a device event carries it: bytes are whatever a device sent — JSON, `ON`, a number, a JPEG
 * snapshot — and an event is text for the model and the event log. Valid UTF-8 stays text, cut at a byte limit on a
 * character boundary and marked; a short binary payload becomes base64 (a few bytes of a sensor frame are worth
 * seeing); a long one only says what it was, since kilobytes of base64 tell the model nothing and cost memory in every
 * coalesced event row.
 *
 * @module
 */

import { encodeBase64 } from "../../text/base64.ts";

/** A payload as text. */
export interface PayloadText {
  /** The text, its cut marker, the base64, or a note such as `(binary, 48213 bytes)`. */
  text: string;
  /** `utf-8` (text as sent), `base64` (short binary) or `binary` (long binary: only the note). */
  encoding: "utf-8" | "base64" | "binary";
  /** The payload's length in bytes. */
  bytes: number;
  /** Whether the text was cut at the limit. */
  cut: boolean;
}

/** Longest binary payload given as base64, in bytes. */
export const BASE64_MAX_BYTES = 256;

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * `bytes` as text for an event: UTF-8 cut at `maxBytes` (on a character boundary, marked with the length in all), a
 * binary payload as base64 up to {@link BASE64_MAX_BYTES} bytes, a note beyond.
 *
 * @example
 * ```ts
 * payloadText(new TextEncoder().encode('{"state":"ON"}'), 4_096).text; // '{"state":"ON"}'
 * payloadText(new Uint8Array([0xff, 0x00]), 4_096); // { text: "/wA=", encoding: "base64", bytes: 2, cut: false }
 * ```
 */
export function payloadText(bytes: Uint8Array, maxBytes: number): PayloadText {
  let text: string;
  try {
    text = strict.decode(bytes);
  } catch {
    return bytes.length <= BASE64_MAX_BYTES
      ? { text: encodeBase64(bytes), encoding: "base64", bytes: bytes.length, cut: false }
      : { text: `(binary, ${bytes.length} bytes)`, encoding: "binary", bytes: bytes.length, cut: false };
  }
  if (bytes.length <= maxBytes) return { text, encoding: "utf-8", bytes: bytes.length, cut: false };
  // Back up to the start of the character the limit falls in (continuation bytes are 10xxxxxx).
  let end = maxBytes;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return {
    text: `${strict.decode(bytes.subarray(0, end))} […cut: ${bytes.length} bytes in all]`,
    encoding: "utf-8",
    bytes: bytes.length,
    cut: true,
  };
}
