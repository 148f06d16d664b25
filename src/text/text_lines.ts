/**
 * The lines of a byte stream as they arrive (`\n` or `\r\n`), the last one even without a line break.
 *
 * @example
 * ```ts
 * for await (const line of textLines(Deno.stdin.readable)) console.log(line);
 * ```
 */
export async function* textLines(input: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of input.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    for (let end = buffer.indexOf("\n"); end !== -1; end = buffer.indexOf("\n")) {
      yield buffer.slice(0, end).replace(/\r$/, "");
      buffer = buffer.slice(end + 1);
    }
  }
  if (buffer) yield buffer;
}
