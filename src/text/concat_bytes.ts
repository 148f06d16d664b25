/**
 * The bytes of `chunks` one after another, in one array: what a bounded reader gathered from a stream. A single chunk
 * is returned as it is (no copy).
 *
 * @example
 * ```ts
 * concatBytes([new Uint8Array([1, 2]), new Uint8Array([3])]); // Uint8Array [1, 2, 3]
 * concatBytes([]); // Uint8Array []
 * ```
 *
 * @module
 */

/** `chunks` joined; the one chunk itself when there is one. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  let size = 0;
  for (const chunk of chunks) size += chunk.length;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}
