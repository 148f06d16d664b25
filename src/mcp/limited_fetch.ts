/**
 * An HTTP MCP server's answers, bounded: a `fetch` whose response bodies may not carry one message larger than homed's
 * limit, and error pages read (a little of them) and closed here. An HTTP server cannot make homed hold a gigabyte, nor
 * leave a body open that the SDK drops unread.
 *
 * @module
 */

/**
 * A `fetch` whose response bodies may not carry a message larger than `maxBytes`: it counts the bytes since the last
 * blank line (the end of a server-sent event; a JSON body has none, so it counts the whole body) and errors the body
 * past the limit — an HTTP server cannot make homed hold a gigabyte.
 *
 * @example
 * ```ts
 * const bounded = limitedFetch(16 * 1024 * 1024, 'MCP server "everything"');
 * const response = await bounded("http://127.0.0.1:3001/mcp", { method: "POST" });
 * ```
 */
export function limitedFetch(
  maxBytes: number,
  label: string,
): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body) return response;
    if (!response.ok) {
      // An error page, read here (bounded) so its body is never left open: the SSE client drops it unread.
      const text = await readCapped(response.body, 65_536);
      const nullBody = [101, 103, 204, 205, 304].includes(response.status);
      return new Response(nullBody ? null : text, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    let since = 0;
    let previous = 0;
    const limiter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        for (let i = 0; i < chunk.length; i++) {
          const byte = chunk[i]!;
          since++;
          if (byte === 0x0a && previous === 0x0a) since = 0;
          if (byte !== 0x0d) previous = byte;
        }
        if (since > maxBytes) {
          controller.error(
            new Error(`${label} sent an HTTP message of more than ${maxBytes} bytes, over homed's limit`),
          );
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(limiter), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The start of a body as text, at most `max` bytes; the rest is cancelled. */
async function readCapped(body: ReadableStream<Uint8Array>, max: number): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.length;
      text += decoder.decode(value, { stream: true });
      if (size >= max) break;
    }
  } catch {
    // A broken error page is still an error page.
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text;
}
