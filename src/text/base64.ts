/**
 * Base64 of bytes of any size — an image, a voice note — through Node's native encoder: the browser way,
 * `btoa(String.fromCharCode(...bytes))`, overflows the call stack at a few hundred kilobytes and copies the bytes into
 * a string first. Decoding refuses what is not base64 instead of guessing, so a caller can name the field.
 *
 * @module
 */

import { Buffer } from "node:buffer";

/**
 * Base64 (standard alphabet, padded) of `bytes`.
 *
 * @example
 * ```ts
 * encodeBase64(new TextEncoder().encode("hi")); // "aGk="
 * ```
 */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/**
 * The bytes of standard base64 (padding optional, no white space); `undefined` when `text` is not base64.
 *
 * @example
 * ```ts
 * decodeBase64("aGk="); // Uint8Array [104, 105]
 * decodeBase64("not base64!"); // undefined
 * ```
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) return undefined;
  const buffer = Buffer.from(text, "base64");
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
