// One Server-Sent Events reader for both streams (/api/chat/stream, /api/events): fetch can send the Authorization
// header, an EventSource cannot.

/**
 * Reads the SSE stream of a fetch `response`, calling `onEvent({ event, data })` for each event ("message" when it
 * names none). Lines end with CRLF, LF or CR; a blank line ends an event; `:` lines are comments. Resolves when the
 * stream ends; rejects when reading fails (an abort, a lost connection).
 */
export async function readSse(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let name = "";
  let data = [];
  const line = (text) => {
    if (text === "") {
      if (data.length > 0) onEvent({ event: name || "message", data: data.join("\n") });
      name = "";
      data = [];
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (let end = /\r\n|\r|\n/.exec(buffer); end; end = /\r\n|\r|\n/.exec(buffer)) {
        // A CR at the end of a chunk may be the first half of a CRLF: wait for the next chunk.
        if (end[0] === "\r" && end.index === buffer.length - 1) break;
        line(buffer.slice(0, end.index));
        buffer = buffer.slice(end.index + end[0].length);
      }
    }
  } finally {
    reader.releaseLock();
  }
}
