import assert from "node:assert/strict";
import { within } from "../../tests/support/wait.ts";
import { type FetchHandler, type HttpListener, serveHttp } from "./http_listener.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function serving(handler: FetchHandler, onError?: (error: unknown) => void): Promise<HttpListener> {
  return await serveHttp({ hostname: "127.0.0.1", port: 0, handler, ...(onError ? { onError } : {}) });
}

/** Sends `head` on a raw connection and reads until the server closes it. */
async function rawExchange(port: number, head: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(encoder.encode(head));
    let text = "";
    const buffer = new Uint8Array(4_096);
    for (;;) {
      const read = await conn.read(buffer);
      if (read === null) return text;
      text += decoder.decode(buffer.subarray(0, read));
    }
  } finally {
    conn.close();
  }
}

Deno.test("serveHttp: method, path, query, headers and a streamed body reach the handler; status, headers, cookies come back", async () => {
  const listener = await serving(async (request) => {
    const url = new URL(request.url);
    const body = request.body ? await request.text() : "";
    const headers = new Headers({
      "x-seen": `${request.method} ${url.pathname}${url.search} ${request.headers.get("x-a")}`,
    });
    headers.append("set-cookie", "a=1");
    headers.append("set-cookie", "b=2");
    return new Response(`got ${body.length}: ${body.slice(0, 5)}`, { status: 201, headers });
  });
  try {
    const big = "汉".repeat(100_000);
    const response = await fetch(`http://127.0.0.1:${listener.port}/api/x?q=1`, {
      method: "POST",
      headers: { "x-a": "b" },
      body: big,
    });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("x-seen"), "POST /api/x?q=1 b");
    assert.deepEqual(response.headers.getSetCookie(), ["a=1", "b=2"]);
    assert.equal(await response.text(), `got 100000: ${"汉".repeat(5)}`);
    const head = await fetch(`http://127.0.0.1:${listener.port}/`, { method: "HEAD" });
    assert.equal(head.status, 201);
    assert.equal(await head.text(), "");
  } finally {
    await listener.shutdown();
  }
});

Deno.test("serveHttp: an event stream is read only as fast as the client takes it, and cancelled when it goes", async () => {
  let pulled = 0;
  const { promise: gone, resolve: cancelled } = Promise.withResolvers<void>();
  const chunk = new Uint8Array(65_536);
  const listener = await serving(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += chunk.length;
          controller.enqueue(chunk);
        },
        cancel: () => cancelled(),
      }),
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  try {
    await conn.write(encoder.encode("GET /endless HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    // The client reads nothing: the kernel's buffers fill, then the body is no longer pulled.
    let before = -1;
    while (pulled !== before) {
      before = pulled;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(pulled < 64 * 1_048_576, `pulled ${pulled} bytes for a client that read none`);
  } finally {
    conn.close();
  }
  await gone;
  await listener.shutdown();
});

Deno.test("serveHttp: a client that goes away aborts its request's signal", async () => {
  const { promise: abort, resolve: aborted } = Promise.withResolvers<void>();
  const { promise: handling, resolve: started } = Promise.withResolvers<void>();
  const listener = await serving((request) => {
    request.signal.addEventListener("abort", () => aborted());
    started();
    return new Promise<Response>((resolve) => abort.then(() => resolve(new Response("late"))));
  });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  await conn.write(encoder.encode("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  await handling;
  conn.close();
  await abort;
  await listener.shutdown();
});

Deno.test("serveHttp: a Host that is no host name is refused with 400 naming it; a handler that throws is a 500", async () => {
  const errors: unknown[] = [];
  const listener = await serving(() => {
    throw new Error("route broke");
  }, (error) => errors.push(error));
  try {
    const bad = await rawExchange(
      listener.port,
      "GET / HTTP/1.1\r\nHost: bad host\r\nConnection: close\r\n\r\n",
    );
    assert.match(bad, /^HTTP\/1\.1 400/);
    assert.match(bad, /The Host header is not a host name: "bad host"/);
    const broken = await fetch(`http://127.0.0.1:${listener.port}/`);
    assert.equal(broken.status, 500);
    assert.equal(await broken.text(), "Internal Server Error");
    assert.equal((errors[0] as Error).message, "route broke");
  } finally {
    await listener.shutdown();
  }
});

Deno.test("serveHttp: an upgrade request no route takes gets the route's answer, then the connection closes", async () => {
  const listener = await serving((request) =>
    Response.json({ error: `no WebSocket at ${new URL(request.url).pathname}` }, { status: 404 })
  );
  try {
    const answer = await rawExchange(
      listener.port,
      "GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
    );
    assert.match(answer, /^HTTP\/1\.1 404 /);
    assert.match(answer, /connection: close/i);
    assert.ok(answer.endsWith('{"error":"no WebSocket at /elsewhere"}'), answer);
  } finally {
    await listener.shutdown();
  }
});

Deno.test("serveHttp: shutdown lets a request in flight finish; a taken port is refused with EADDRINUSE", async () => {
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  const { promise: handling, resolve: started } = Promise.withResolvers<void>();
  const listener = await serving(async () => {
    started();
    await released;
    return new Response("finished");
  });
  await assert.rejects(
    serveHttp({ hostname: "127.0.0.1", port: listener.port, handler: () => new Response() }),
    (error: unknown) => (error as { code?: string }).code === "EADDRINUSE",
  );
  const answer = fetch(`http://127.0.0.1:${listener.port}/`);
  await handling;
  let stopped = false;
  const stopping = listener.shutdown().then(() => stopped = true);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(stopped, false, "shutdown waits for the request");
  release();
  assert.equal(await (await answer).text(), "finished");
  await stopping;
  await assert.rejects(fetch(`http://127.0.0.1:${listener.port}/`), TypeError);
});

Deno.test("serveHttp: shutdown closes a keep-alive connection that served two requests and now waits idle", async () => {
  const listener = await serving(() => Response.json({ ok: true }));
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  try {
    const buffer = new Uint8Array(4_096);
    for (let i = 0; i < 2; i++) {
      await conn.write(encoder.encode("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
      let text = "";
      while (!text.endsWith('{"ok":true}')) text += decoder.decode(buffer.subarray(0, (await conn.read(buffer))!));
      assert.match(text, /content-length: 11\r\n/i, "an answer that is no event stream goes whole, with its length");
    }
    await within(listener.shutdown(), 5_000, "shutdown, which must not wait for an idle connection");
    assert.equal(await conn.read(buffer), null, "the idle connection was closed");
  } finally {
    conn.close();
  }
});
