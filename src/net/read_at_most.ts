/**
 * A response body read to its end or until it passes a limit, whichever comes first: a peer that sends too much (a
 * CDN, a file server) is not read to the end, and the caller sees that it was over.
 *
 * @module
 */

import { concatBytes } from "../text/concat_bytes.ts";

/**
 * The body's bytes, stopping (and cancelling the rest) once more than `limit` have come: a result longer than `limit`
 * means the body was over it.
 *
 * @example
 * ```ts
 * const bytes = await readAtMost(new Response("abcdef").body, 4);
 * bytes.length > 4; // true: the body was over the limit (what came so far is returned)
 * ```
 */
export async function readAtMost(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  const reader = body?.getReader();
  if (!reader) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    chunks.push(value);
    if (size > limit) {
      await reader.cancel();
      break;
    }
  }
  return concatBytes(chunks);
}
