/**
 * Newline-delimited JSON streams (Ollama's `/api/chat` with `stream: true`): the body split into its lines as they
 * arrive, for a Lua adapter's `stream_event`.
 *
 * @module
 */

/** Longest line homed buffers: a server that never sends a newline must not grow the buffer without bound. */
const MAX_LINE = 8 * 1024 * 1024;

/**
 * The non-empty lines of `body`, trimmed, as they arrive; a line longer than 8 MiB ends the stream with a
 * `RangeError`. The body is cancelled when the reader stops early.
 *
 * @example
 * ```ts
 * const body = new Response('{"message":{"content":"Hi"}}\n{"done":true}\n').body!;
 * for await (const line of readLines(body)) JSON.parse(line);
 * ```
 */
export async function* readLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer = done ? `${buffer}\n` : buffer + value;
      for (let end = buffer.indexOf("\n"); end !== -1; end = buffer.indexOf("\n")) {
        const line = buffer.slice(0, end).trim();
        buffer = buffer.slice(end + 1);
        if (line) yield line;
      }
      if (done) return;
      if (buffer.length > MAX_LINE) throw new RangeError("A line of the stream exceeds 8 MiB");
    }
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
