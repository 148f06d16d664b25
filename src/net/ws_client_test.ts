import assert from "node:assert/strict";
import { acceptFor, WsClient } from "./ws_client.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Resolves with the client's `close` event. */
function closeOf(client: WsClient): Promise<CloseEvent> {
  return new Promise((resolve) => client.addEventListener("close", (event) => resolve(event as CloseEvent)));
}

/** Opens `client`, or rejects when it closes first. */
function opened(client: WsClient): Promise<void> {
  return new Promise((resolve, reject) => {
    client.addEventListener("open", () => resolve());
    client.addEventListener("close", () => reject(new Error("closed before it opened")));
  });
}

/** Deno's own WebSocket server on loopback; `onSocket` gets each server-side socket once it is open. */
function denoServer(onSocket: (socket: WebSocket) => void, idleTimeout = 30) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const { socket, response } = Deno.upgradeWebSocket(request, { idleTimeout });
    socket.addEventListener("open", () => onSocket(socket));
    return response;
  });
  return { url: `ws://127.0.0.1:${server.addr.port}/path?x=1`, shutdown: () => server.shutdown() };
}

Deno.test("talks to Deno's WebSocket server: text both ways, long and binary messages, its close code and reason", async () => {
  const seen: string[] = [];
  let headers = "";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    headers = `${request.headers.get("authorization")} ${new URL(request.url).pathname}${new URL(request.url).search}`;
    const { socket, response } = Deno.upgradeWebSocket(request);
    socket.addEventListener("message", (event) => {
      seen.push(String(event.data));
      if (event.data === "long") socket.send("汉".repeat(70_000)); // 210,000 bytes: a 64-bit length
      else if (event.data === "medium") socket.send("m".repeat(300)); // a 16-bit length
      else if (event.data === "binary") socket.send(new Uint8Array([1, 2, 3]));
      else if (event.data === "bye") socket.close(4000, "bye now");
      else socket.send(`echo: ${event.data}`);
    });
    return response;
  });
  const client = new WsClient(`ws://127.0.0.1:${server.addr.port}/onebot?a=b`, {
    headers: { authorization: "Bearer secret-token-123" },
    maxMessageBytes: 1_048_576,
  });
  const messages: unknown[] = [];
  client.addEventListener("message", (event) => messages.push(event.data));
  const closed = closeOf(client);
  await opened(client);
  assert.equal(client.readyState, WsClient.OPEN);
  for (const text of ["你好", "medium", "long", "binary"]) client.send(text);
  while (messages.length < 4) await new Promise((resolve) => setTimeout(resolve, 10));
  client.send("bye");
  const event = await closed;
  await server.shutdown();
  assert.equal(headers, "Bearer secret-token-123 /onebot?a=b");
  assert.deepEqual(seen, ["你好", "medium", "long", "binary", "bye"]);
  assert.equal(messages[0], "echo: 你好");
  assert.equal(messages[1], "m".repeat(300));
  assert.equal(messages[2], "汉".repeat(70_000));
  assert.deepEqual(new Uint8Array(messages[3] as ArrayBuffer), new Uint8Array([1, 2, 3]));
  assert.deepEqual([event.code, event.reason, event.wasClean], [4000, "bye now", true]);
  assert.equal(client.readyState, WsClient.CLOSED);
});

Deno.test("homed's close reaches the server with its code (1001 too); the server's pings are answered", async () => {
  let closedWith: string | undefined;
  let sockets = 0;
  const server = denoServer((socket) => {
    sockets++;
    socket.addEventListener("close", (event) => closedWith = `${event.code} ${event.reason}`);
  }, 1);
  const client = new WsClient(server.url, { maxMessageBytes: 1_024 });
  const closed = closeOf(client);
  await opened(client);
  // Deno pings after 1 s idle and drops a client that does not answer within 1 s more.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.equal(client.readyState, WsClient.OPEN, "the pings were answered");
  client.close(1001, "homed stopping");
  assert.equal(client.readyState, WsClient.CLOSING);
  const event = await closed;
  while (closedWith === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  await server.shutdown();
  assert.equal(sockets, 1);
  assert.equal(closedWith, "1001 homed stopping");
  assert.equal(event.code, 1001);
});

Deno.test("a message of exactly maxMessageBytes is taken; one byte more is refused with 1009 and the reason", async () => {
  let serverSaw = "";
  const server = denoServer((socket) => {
    socket.addEventListener("close", (event) => serverSaw = `${event.code} ${event.reason}`);
    socket.send("a".repeat(1_000));
    socket.send("b".repeat(1_001));
  });
  const refused: number[] = [];
  const client = new WsClient(server.url, {
    maxMessageBytes: 1_000,
    onTooBig: (bytes) => (refused.push(bytes), `Frame of ${bytes} bytes is over the limit (1000)`),
  });
  const messages: string[] = [];
  client.addEventListener("message", (event) => messages.push(event.data));
  const event = await closeOf(client);
  while (serverSaw === "") await new Promise((resolve) => setTimeout(resolve, 10));
  await server.shutdown();
  assert.deepEqual(messages, ["a".repeat(1_000)]);
  assert.deepEqual(refused, [1_001]);
  assert.deepEqual([event.code, event.reason], [1009, "Frame of 1001 bytes is over the limit (1000)"]);
  assert.equal(serverSaw, "1009 Frame of 1001 bytes is over the limit (1000)");
});

/** A server frame (unmasked) with `fin`, `opcode` and `payload`. */
function serverFrame(fin: boolean, opcode: number, payload: Uint8Array): Uint8Array {
  const frame = new Uint8Array(2 + payload.length);
  frame[0] = (fin ? 0x80 : 0) | opcode;
  frame[1] = payload.length;
  frame.set(payload, 2);
  return frame;
}

/** A server that completes the handshake by hand, writes `frames`, then reads what the client sends until it closes. */
function rawServer(frames: Uint8Array[]) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const done = (async () => {
    const conn = await listener.accept();
    listener.close();
    const buffer = new Uint8Array(65_536);
    let head = "";
    while (!head.includes("\r\n\r\n")) head += decoder.decode(buffer.subarray(0, (await conn.read(buffer))!));
    const accept = await acceptFor(/sec-websocket-key: *(\S+)/i.exec(head)![1]!);
    const answer = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Accept: ${accept}\r\n\r\n`;
    for (const bytes of [encoder.encode(answer), ...frames]) {
      for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
    }
    let received = 0;
    for (let read = await conn.read(buffer).catch(() => null); read !== null; read = await conn.read(buffer)) {
      received += read;
    }
    conn.close();
    return received;
  })();
  return { url: `ws://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`, done };
}

Deno.test("fragments make one message; fragments over the limit together are refused at the header that passes it", async () => {
  const text = (value: string) => encoder.encode(value);
  const server = rawServer([
    serverFrame(false, 1, text("汉")),
    serverFrame(false, 0, text("字")),
    serverFrame(true, 0, text("!")),
    serverFrame(true, 9, text("ping")), // a ping between messages
    serverFrame(false, 1, text("x".repeat(60))),
    serverFrame(false, 0, text("y".repeat(60))),
  ]);
  const client = new WsClient(server.url, { maxMessageBytes: 100 });
  const messages: string[] = [];
  client.addEventListener("message", (event) => messages.push(event.data));
  const event = await closeOf(client);
  const received = await server.done;
  assert.deepEqual(messages, ["汉字!"]);
  assert.deepEqual([event.code, event.reason, event.wasClean], [1009, "Message of 120 bytes is over 100", false]);
  assert.ok(
    received >= 2 + 4 + 4 + 2 + 4 + 2 + "Message of 120 bytes is over 100".length,
    "a pong and the close frame",
  );
});

Deno.test("protocol errors close with 1002 or 1007; a refused dial is an error, then a close with 1006", async () => {
  for (
    const [frame, code, reason] of [
      [serverFrame(true, 1, new Uint8Array([0xff])), 1007, "A text message is not valid UTF-8"],
      [serverFrame(true, 0, encoder.encode("x")), 1002, "A continuation frame without a message"],
      [new Uint8Array([0x81, 0x81, 1, 2, 3, 4, 5]), 1002, "A frame from the server must not be masked"],
    ] as const
  ) {
    const server = rawServer([frame]);
    const event = await closeOf(new WsClient(server.url, { maxMessageBytes: 100 }));
    await server.done;
    assert.deepEqual([event.code, event.reason], [code, reason]);
  }
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const client = new WsClient(`ws://127.0.0.1:${port}/`, { maxMessageBytes: 100 });
  const events: string[] = [];
  client.addEventListener("error", () => events.push("error"));
  const event = await closeOf(client);
  assert.deepEqual([...events, event.code], ["error", 1006]);
  assert.throws(() => new WsClient("http://127.0.0.1/", { maxMessageBytes: 1 }), /starts with ws:\/\/ or wss:\/\//);
  assert.throws(
    () => new WsClient("ws://127.0.0.1/", { maxMessageBytes: 1, headers: { authorization: "a\r\nX-Evil: 1" } }),
    /^TypeError: The WebSocket header "authorization" is not a valid header name and value$/,
  );
});
