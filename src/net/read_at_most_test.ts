import assert from "node:assert/strict";
import { readAtMost } from "./read_at_most.ts";

/** A body of `chunks`, counting how many were pulled. */
function body(chunks: string[]): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === chunks.length) return controller.close();
      controller.enqueue(encoder.encode(chunks[pulled++]!));
    },
  });
  return { stream, pulled: () => pulled };
}

Deno.test("readAtMost: a body within the limit whole; one over it stops after the chunk that passed it", async () => {
  const within = body(["ab", "cd", "ef"]);
  assert.equal(new TextDecoder().decode(await readAtMost(within.stream, 6)), "abcdef");
  const over = body(["ab", "cd", "ef", "gh", "ij"]);
  const bytes = await readAtMost(over.stream, 3);
  assert.equal(new TextDecoder().decode(bytes), "abcd", "what came until it was over");
  assert.equal(over.pulled(), 2, "the rest was not read");
  assert.equal((await readAtMost(null, 10)).length, 0, "no body");
});
