import assert from "node:assert/strict";
import { within } from "../../tests/support/wait.ts";
import { serveHttp } from "./http_listener.ts";
import { acceptFor } from "./ws_client.ts";
import type { WsPeer } from "./ws_peer.ts";
import { handshakeProblem, upgradeWebSocket } from "./ws_server.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A listener whose every request becomes a WebSocket with these limits; `onSocket` gets each server socket. */
async function wsServer(onSocket: (socket: WsPeer) => void, options: { max?: number; idleMs?: number } = {}) {
  const refused: number[] = [];
  const listener = await serveHttp({
    hostname: "127.0.0.1",
    port: 0,
    handler: (request) => {
      try {
        const { socket, response } = upgradeWebSocket(request, {
          maxMessageBytes: options.max ?? 1_048_576,
          idleTimeoutMs: options.idleMs ?? 0,
          onTooBig: (bytes) => (refused.push(bytes), `Frame of ${bytes} bytes is over the limit (${options.max})`),
        });
        onSocket(socket);
        return response;
      } catch (error) {
        return new Response((error as Error).message, { status: 400 });
      }
    },
  });
  return { url: `ws://127.0.0.1:${listener.port}/ws`, port: listener.port, refused, listener };
}

/** A client frame: masked, with `fin`, `opcode` and `payload` (or only its header declaring `declared` bytes). */
function clientFrame(fin: boolean, opcode: number, payload: Uint8Array, declared?: number): Uint8Array {
  const length = declared ?? payload.length;
  const extra = length < 126 ? 0 : length < 65_536 ? 2 : 8;
  const frame = new Uint8Array(2 + extra + 4 + (declared === undefined ? payload.length : 0));
  frame[0] = (fin ? 0x80 : 0) | opcode;
  const view = new DataView(frame.buffer);
  if (extra === 0) frame[1] = 0x80 | length;
  else if (extra === 2) (frame[1] = 0x80 | 126, view.setUint16(2, length));
  else (frame[1] = 0x80 | 127, view.setBigUint64(2, BigInt(length)));
  const mask = [7, 13, 42, 99];
  frame.set(mask, 2 + extra);
  if (declared === undefined) {
    for (let i = 0; i < payload.length; i++) frame[2 + extra + 4 + i] = payload[i]! ^ mask[i & 3]!;
  }
  return frame;
}

/** A raw client: handshake by hand, then frames as given; reads everything until the server ends the connection. */
async function rawClient(port: number, headers = "") {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const key = "dGhlIHNhbXBsZSBub25jZQ==";
  await conn.write(encoder.encode(
    `GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\n${headers || "Sec-WebSocket-Version: 13\r\n"}\r\n`,
  ));
  const received: number[] = [];
  const ended = (async () => {
    const buffer = new Uint8Array(65_536);
    for (;;) {
      const read = await conn.read(buffer).catch(() => null);
      if (read === null) return;
      received.push(...buffer.subarray(0, read));
    }
  })();
  return {
    key,
    send: async (bytes: Uint8Array) => {
      for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
    },
    /** Everything the server sent, once it has closed the connection (at most `ms`). */
    async all(ms = 5_000): Promise<Uint8Array> {
      await within(ended, ms, "the server to end the connection");
      conn.close();
      return new Uint8Array(received);
    },
    received,
    close: () => conn.close(),
  };
}

/** Splits what a server sent into its handshake answer and its (unmasked) frames. */
function parseServer(bytes: Uint8Array): { head: string; frames: { opcode: number; payload: Uint8Array }[] } {
  const text = new TextDecoder("latin1").decode(bytes);
  const end = text.indexOf("\r\n\r\n");
  const frames: { opcode: number; payload: Uint8Array }[] = [];
  let at = end + 4;
  while (at + 2 <= bytes.length) {
    const opcode = bytes[at]! & 0x0f;
    let length = bytes[at + 1]! & 0x7f;
    let start = at + 2;
    if (length === 126) (length = (bytes[at + 2]! << 8) | bytes[at + 3]!, start += 2);
    frames.push({ opcode, payload: bytes.slice(start, start + length) });
    at = start + length;
  }
  return { head: text.slice(0, end), frames };
}

function closeOf(payload: Uint8Array): string {
  return `${(payload[0]! << 8) | payload[1]!} ${decoder.decode(payload.subarray(2))}`;
}

Deno.test("ws server: Deno's WebSocket client talks to it — text both ways, long and binary messages, close codes", async () => {
  const seen: unknown[] = [];
  let serverClose = "";
  const server = await wsServer((socket) => {
    socket.addEventListener("message", (event) => {
      seen.push(event.data);
      if (event.data === "long") socket.send("汉".repeat(70_000));
      else if (event.data === "bye") socket.close(4000, "bye now");
      else if (typeof event.data === "string") socket.send(`echo: ${event.data}`);
    });
    socket.addEventListener("close", (event) => serverClose = `${(event as CloseEvent).code}`);
  });
  const client = new WebSocket(server.url);
  const messages: unknown[] = [];
  client.addEventListener("message", (event) => messages.push(event.data));
  const closed = new Promise<CloseEvent>((resolve) => client.addEventListener("close", resolve));
  await new Promise((resolve) => client.addEventListener("open", resolve));
  client.send("你好");
  client.send("m".repeat(300));
  client.send("long");
  client.send(new Uint8Array([1, 2, 3]));
  while (messages.length < 3 || seen.length < 4) await new Promise((resolve) => setTimeout(resolve, 10));
  client.send("bye");
  const event = await closed;
  while (serverClose === "") await new Promise((resolve) => setTimeout(resolve, 10));
  await server.listener.shutdown();
  assert.deepEqual(messages, ["echo: 你好", `echo: ${"m".repeat(300)}`, "汉".repeat(70_000)]);
  assert.deepEqual(new Uint8Array(seen[3] as ArrayBuffer), new Uint8Array([1, 2, 3]));
  assert.deepEqual([event.code, event.reason, event.wasClean], [4000, "bye now", true]);
  assert.equal(serverClose, "4000");
});

Deno.test("ws server: a frame header declaring 50 MB is refused with 1009 before any of its payload is sent", async () => {
  const server = await wsServer(() => {}, { max: 65_536 });
  const client = await rawClient(server.port);
  // Only the header: if the server waited for the payload, it would never answer.
  await client.send(clientFrame(true, 1, new Uint8Array(), 52_428_800));
  const { head, frames } = parseServer(await client.all());
  await server.listener.shutdown();
  assert.match(head, /^HTTP\/1\.1 101 Switching Protocols/);
  assert.match(head, new RegExp(`Sec-WebSocket-Accept: ${(await acceptFor(client.key)).replace(/[+/]/g, "\\$&")}`));
  assert.deepEqual(server.refused, [52_428_800]);
  assert.equal(frames.length, 1);
  assert.equal(frames[0]!.opcode, 8);
  assert.equal(closeOf(frames[0]!.payload), "1009 Frame of 52428800 bytes is over the limit (65536)");
});

Deno.test("ws server: masked fragments make one message; an unmasked frame closes with 1002", async () => {
  const messages: unknown[] = [];
  const server = await wsServer((socket) => socket.addEventListener("message", (event) => messages.push(event.data)));
  const client = await rawClient(server.port);
  await client.send(clientFrame(false, 1, encoder.encode("hel")));
  await client.send(clientFrame(true, 0, encoder.encode("lo 世界")));
  while (messages.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
  await client.send(new Uint8Array([0x81, 0x02, 0x68, 0x69])); // "hi", unmasked
  const { frames } = parseServer(await client.all());
  await server.listener.shutdown();
  assert.deepEqual(messages, ["hello 世界"]);
  assert.equal(closeOf(frames.at(-1)!.payload), "1002 A frame from a client must be masked");
});

Deno.test("ws server: a quiet client is pinged at half the idle time and dropped when it does not answer", async () => {
  let closed: CloseEvent | undefined;
  const server = await wsServer((socket) => {
    socket.addEventListener("close", (event) => closed = event as CloseEvent);
  }, { idleMs: 300 });
  const client = await rawClient(server.port);
  const { frames } = parseServer(await client.all());
  await server.listener.shutdown();
  assert.equal(frames[0]?.opcode, 9, "a ping came first");
  assert.equal(closed?.code, 1006);
  assert.equal(closed?.reason, "No answer to a ping");
  // Deno's client answers pings: it stays open across several idle periods.
  const answering = await wsServer(() => {}, { idleMs: 300 });
  const socket = new WebSocket(answering.url);
  await new Promise((resolve) => socket.addEventListener("open", resolve));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal(socket.readyState, WebSocket.OPEN);
  const gone = new Promise((resolve) => socket.addEventListener("close", resolve));
  socket.close();
  await gone;
  await answering.listener.shutdown();
});

Deno.test("ws server: a handshake it cannot take is named and answered by the route; without the listener it is refused", async () => {
  const server = await wsServer(() => {});
  const client = await rawClient(server.port, "Sec-WebSocket-Version: 8\r\n");
  const answer = decoder.decode(await client.all());
  await server.listener.shutdown();
  assert.match(answer, /^HTTP\/1\.1 400 /);
  assert.match(answer, /Sec-WebSocket-Version must be 13, got "8"$/);
  assert.equal(
    handshakeProblem(new Request("http://h/ws", { method: "POST" })),
    "A WebSocket handshake is a GET, got POST",
  );
  const headers = { upgrade: "websocket", connection: "Upgrade", "sec-websocket-version": "13" };
  assert.equal(
    handshakeProblem(new Request("http://h/ws", { headers: { ...headers, "sec-websocket-key": "short" } })),
    'Sec-WebSocket-Key must be 16 bytes in base64, got "short"',
  );
  const valid = new Request("http://h/ws", {
    headers: { ...headers, "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" },
  });
  assert.throws(() => upgradeWebSocket(valid, { maxMessageBytes: 10 }), {
    name: "TypeError",
    message: "This request has no connection to upgrade: it did not come through serveHttp",
  });
});
