import assert from "node:assert/strict";
import { readSse, type SseEvent } from "./sse.ts";

function body(...parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>, maxEventChars?: number): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(stream, maxEventChars ? { maxEventChars } : {})) events.push(event);
  return events;
}

Deno.test("events split anywhere, CRLF split across reads, comments, multi-line data and a last block without a blank line", async () => {
  const events = await all(
    body('data: {"a"', ":1}\r", "\n\r\n: a comment\n\nevent: done\ndata: x\ndata: y\n\ndata: last"),
  );
  assert.deepEqual(events, [
    { event: "message", data: '{"a":1}' },
    { event: "done", data: "x\ny" },
    { event: "message", data: "last" },
  ]);
});

Deno.test("an event that never ends is refused at the limit, naming it", async () => {
  await assert.rejects(all(body("data: ", "x".repeat(100), "x".repeat(100)), 150), {
    name: "RangeError",
    message: "An event of the stream exceeds 150 characters",
  });
});
