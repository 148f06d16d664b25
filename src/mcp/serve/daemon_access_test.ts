import assert from "node:assert/strict";
import type { Clock } from "../../clock.ts";
import { ButlerApiError, httpButlerAccess } from "./daemon_access.ts";

/** What the fake daemon saw of one request. */
interface Seen {
  method: string;
  path: string;
  authorization: string | null;
  contentType: string | null;
  body: string;
}

/** A small fake of homed's API on 127.0.0.1: records each request and answers with `answer`'s response. */
function fakeDaemon(answer: (request: Request, url: URL) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const url = new URL(request.url);
    seen.push({
      method: request.method,
      path: `${url.pathname}${url.search}`,
      authorization: request.headers.get("authorization"),
      contentType: request.headers.get("content-type"),
      body: await request.text(),
    });
    return answer(request, url);
  });
  return {
    seen,
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The API's answers, as `src/api/` shapes them. */
function homedApi(_request: Request, url: URL): Response {
  switch (url.pathname) {
    case "/api/chat":
      return Response.json({ reply: "The back door is locked.", channel: "http", rounds: 2 });
    case "/api/memory/documents":
      return Response.json({ query: url.searchParams.get("q"), documents: [{ id: 1, summary: "umbrella in hall" }] });
    case "/api/knowledge/search":
      return Response.json({ query: url.searchParams.get("q"), hits: [{ topic: "router", score: 0.3 }] });
    case "/api/schedules":
      return Response.json({ schedules: [{ id: "s1", text: "bins out" }] });
    default:
      return Response.json({ error: { code: "not_found", message: "No endpoint" } }, { status: 404 });
  }
}

/** A clock whose timers fire only when the test says, recording each delay asked for. */
function manualClock(): { clock: Pick<Clock, "after">; delays: number[]; fire(): void } {
  const pending = new Set<() => void>();
  const delays: number[] = [];
  return {
    clock: {
      after(ms, callback) {
        delays.push(ms);
        pending.add(callback);
        return () => pending.delete(callback);
      },
    },
    delays,
    fire() {
      for (const callback of [...pending]) callback();
    },
  };
}

Deno.test("chat posts the text as JSON with the bearer token and returns the reply and channel", async () => {
  await using daemon = fakeDaemon(homedApi);
  const access = httpButlerAccess({ baseUrl: `${daemon.baseUrl}/`, token: "tok-alice", timeoutMs: 5_000 });
  assert.deepEqual(await access.chat("Is the back door locked?"), {
    reply: "The back door is locked.",
    channel: "http",
  });
  assert.deepEqual(daemon.seen, [{
    method: "POST",
    path: "/api/chat",
    authorization: "Bearer tok-alice",
    contentType: "application/json",
    body: '{"text":"Is the back door locked?"}',
  }]);
});

Deno.test("the lookups ask their endpoints with q and k and return the listed items", async () => {
  await using daemon = fakeDaemon(homedApi);
  const access = httpButlerAccess({ baseUrl: daemon.baseUrl, token: "tok-alice", timeoutMs: 5_000 });
  assert.deepEqual(await access.recall("umbrella & coat", 3), [{ id: 1, summary: "umbrella in hall" }]);
  assert.deepEqual(await access.searchKnowledge("router"), [{ topic: "router", score: 0.3 }]);
  assert.deepEqual(await access.schedules(), [{ id: "s1", text: "bins out" }]);
  assert.deepEqual(daemon.seen.map(({ method, path, authorization, body }) => [method, path, authorization, body]), [
    ["GET", "/api/memory/documents?q=umbrella+%26+coat&k=3", "Bearer tok-alice", ""],
    ["GET", "/api/knowledge/search?q=router", "Bearer tok-alice", ""],
    ["GET", "/api/schedules", "Bearer tok-alice", ""],
  ]);
});

Deno.test("without a token no Authorization header is sent (a tokenless daemon on loopback)", async () => {
  await using daemon = fakeDaemon(homedApi);
  await httpButlerAccess({ baseUrl: daemon.baseUrl, token: "", timeoutMs: 5_000 }).schedules();
  assert.equal(daemon.seen[0]?.authorization, null);
});

Deno.test("a refusal of the daemon is a ButlerApiError with the API's status, code and message", async () => {
  const message = 'Inspecting memory needs trust household or owner; this request came from "visitor" (trust guest)';
  await using daemon = fakeDaemon(() => Response.json({ error: { code: "forbidden", message } }, { status: 403 }));
  const access = httpButlerAccess({ baseUrl: daemon.baseUrl, token: "tok-visitor", timeoutMs: 5_000 });
  await assert.rejects(access.recall("umbrella"), (error: unknown) => {
    assert.ok(error instanceof ButlerApiError);
    assert.deepEqual([error.status, error.code, error.message], [403, "forbidden", message]);
    return true;
  });
});

Deno.test("a 401 without a token says to set HOMED_API_TOKEN", async () => {
  const message = "This endpoint needs an Authorization: Bearer <api_token> header";
  await using daemon = fakeDaemon(() => Response.json({ error: { code: "unauthorized", message } }, { status: 401 }));
  await assert.rejects(httpButlerAccess({ baseUrl: daemon.baseUrl, token: "", timeoutMs: 5_000 }).chat("hi"), {
    name: "ButlerApiError",
    message: `${message} (set HOMED_API_TOKEN to one of homed's API tokens)`,
  });
});

Deno.test("an error status without the API's body names the call and the status", async () => {
  await using daemon = fakeDaemon(() => new Response("Bad Gateway", { status: 502 }));
  await assert.rejects(httpButlerAccess({ baseUrl: daemon.baseUrl, token: "t", timeoutMs: 5_000 }).schedules(), {
    name: "ButlerApiError",
    message: "homed answered GET /api/schedules with HTTP 502: Bad Gateway",
  });
});

Deno.test("a 2xx answer that is not the API's JSON is an error naming the call", async () => {
  await using daemon = fakeDaemon((_request, url) =>
    url.pathname === "/api/chat" ? Response.json({ text: "hi" }) : new Response("<html>", { status: 200 })
  );
  const access = httpButlerAccess({ baseUrl: daemon.baseUrl, token: "t", timeoutMs: 5_000 });
  await assert.rejects(access.searchKnowledge("router", 2), {
    message: "homed's answer to GET /api/knowledge/search is not JSON: <html>",
  });
  await assert.rejects(access.chat("hi"), { message: /answer to POST \/api\/chat has no "reply" field/ });
});

Deno.test("a daemon that never answers is given up at the deadline, the chat deadline for chat", async () => {
  let arrived = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  await using daemon = fakeDaemon(async () => {
    arrived.resolve();
    // Held until the test is done (the client gave up long before); then the server can shut down.
    await release.promise;
    return new Response("too late");
  });
  try {
    const time = manualClock();
    const access = httpButlerAccess({
      baseUrl: daemon.baseUrl,
      token: "t",
      timeoutMs: 50,
      chatTimeoutMs: 90_000,
      clock: time.clock,
    });
    const lookup = access.schedules();
    await arrived.promise;
    time.fire();
    await assert.rejects(lookup, {
      message: `homed at ${daemon.baseUrl} did not answer GET /api/schedules within 50 ms`,
    });

    arrived = Promise.withResolvers<void>();
    const chat = access.chat("hello?");
    await arrived.promise;
    time.fire();
    await assert.rejects(chat, { message: `homed at ${daemon.baseUrl} did not answer POST /api/chat within 90000 ms` });
    assert.deepEqual(time.delays, [50, 90_000]);
  } finally {
    release.resolve();
  }
});

Deno.test("the deadline covers the body too: headers sent, then silence, is given up as well", async () => {
  await using daemon = fakeDaemon(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(new TextEncoder().encode('{"schedules": [')),
      }),
      { headers: { "content-type": "application/json" } },
    )
  );
  const headersIn = Promise.withResolvers<void>();
  const time = manualClock();
  const access = httpButlerAccess({
    baseUrl: daemon.baseUrl,
    token: "t",
    timeoutMs: 2_000,
    clock: time.clock,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      headersIn.resolve();
      return response;
    },
  });
  const lookup = access.schedules();
  await headersIn.promise;
  time.fire();
  await assert.rejects(lookup, {
    message: `homed at ${daemon.baseUrl} did not answer GET /api/schedules within 2000 ms`,
  });
});

Deno.test("a daemon that is not running is an error saying it cannot be reached", async () => {
  // A port that was just free: nothing listens there now.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  const access = httpButlerAccess({ baseUrl: `http://127.0.0.1:${port}`, token: "t", timeoutMs: 5_000 });
  await assert.rejects(access.chat("hi"), {
    message: new RegExp(`^Cannot reach homed at http://127\\.0\\.0\\.1:${port} \\(.+\\); is it running\\?$`),
  });
});

/** `/api/chat/stream` as `src/api/app.ts` writes it: start, the deltas, then done (or error) — `events` in order. */
function chatStream(events: Array<[string, unknown]>): Response {
  const text = events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

Deno.test("chat with onText streams from /api/chat/stream: each delta as it comes, then the reply and channel", async () => {
  await using daemon = fakeDaemon((_request, url) =>
    url.pathname === "/api/chat/stream"
      ? chatStream([
        ["start", { id: "e1" }],
        ["delta", { text: "The back door " }],
        ["tool", { name: "lock_status", ok: true }],
        ["delta", { text: "is locked." }],
        ["done", { reply: "The back door is locked.", channel: "http", rounds: 2 }],
      ])
      : homedApi(_request, url)
  );
  const access = httpButlerAccess({ baseUrl: daemon.baseUrl, token: "tok-alice", timeoutMs: 5_000 });
  const deltas: string[] = [];
  assert.deepEqual(await access.chat("Is the back door locked?", { onText: (delta) => deltas.push(delta) }), {
    reply: "The back door is locked.",
    channel: "http",
  });
  assert.deepEqual(deltas, ["The back door ", "is locked."]);
  assert.deepEqual(daemon.seen.map(({ method, path, authorization, body }) => [method, path, authorization, body]), [
    ["POST", "/api/chat/stream", "Bearer tok-alice", '{"text":"Is the back door locked?"}'],
  ]);
});

Deno.test("a streamed chat's error event, or a stream that ends before done, is an error saying so", async () => {
  let events: Array<[string, unknown]> = [];
  await using daemon = fakeDaemon(() => chatStream(events));
  const access = httpButlerAccess({ baseUrl: daemon.baseUrl, token: "t", timeoutMs: 5_000 });
  events = [["start", { id: "e1" }], ["error", { code: "turn_timeout", message: "The turn took longer than 90 s" }]];
  await assert.rejects(access.chat("hi", { onText: () => {} }), { message: "The turn took longer than 90 s" });
  events = [["start", { id: "e2" }], ["delta", { text: "Hel" }]];
  await assert.rejects(access.chat("hi", { onText: () => {} }), {
    message: "homed's stream for POST /api/chat/stream ended before the turn did",
  });
});

Deno.test("a streamed chat stops when its signal aborts, saying it was stopped", async () => {
  const release = Promise.withResolvers<void>();
  await using daemon = fakeDaemon(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(new TextEncoder().encode('event: start\ndata: {"id":"e1"}\n\n')),
        cancel: () => release.resolve(),
      }),
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  const access = httpButlerAccess({ baseUrl: daemon.baseUrl, token: "t", timeoutMs: 5_000 });
  const stop = new AbortController();
  const chat = access.chat("hi", { onText: () => {}, signal: stop.signal });
  await new Promise((resolve) => setTimeout(resolve, 20));
  stop.abort();
  await assert.rejects(chat, { message: `The wait for homed's answer to POST /api/chat/stream was stopped` });
  await release.promise;
});
