/**
 * A Server-Sent Events reader for `fetch` responses (the OpenAI-compatible provider's stream, `homed chat`, tests).
 *
 * @module
 */

/** One SSE event. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Yields the events of an SSE body as they arrive; an event longer than `maxEventChars` (8 MiB) ends the stream with
 * a `RangeError`.
 *
 * @example
 * ```ts
 * const response = await fetch("http://127.0.0.1:8080/api/chat/stream", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ text: "hi" }),
 * });
 * for await (const event of readSse(response.body!)) console.log(event.event, event.data); // start, deltas, done
 * ```
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  options: { maxEventChars?: number } = {},
): AsyncGenerator<SseEvent> {
  const limit = options.maxEventChars ?? 8 * 1024 * 1024;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      // A "\r\n" split across two reads is joined before lines are cut; the last block needs no blank line after it.
      buffer = done ? `${buffer}\n\n` : buffer + value;
      buffer = buffer.replaceAll("\r\n", "\n");
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const event = parseBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event) yield event;
      }
      if (done) break;
      // A peer that never ends its event must not grow this buffer without bound.
      if (buffer.length > limit) throw new RangeError(`An event of the stream exceeds ${limit} characters`);
    }
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function parseBlock(block: string): SseEvent | undefined {
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return data.length ? { event, data: data.join("\n") } : undefined;
}
