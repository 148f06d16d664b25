import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import type { Hono } from "hono";
import { systemClock } from "../clock.ts";
import type { TurnResult } from "../io/device.ts";
import { IOManager } from "../io/io_manager.ts";
import { RouteTable } from "../io/route_table.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { createApi } from "./app.ts";
import type { ApiVariables } from "./auth.ts";
import { HttpDevice } from "./http_device.ts";
import { readSse } from "../net/sse.ts";

const TOKEN = "0123456789abcdef-token";

/** An app whose "agent" answers every message by echoing it, so the HTTP layer is tested alone. */
async function setup(
  token = "",
  maxBodyBytes = 2048,
): Promise<{ app: Hono<{ Variables: ApiVariables }>; io: IOManager; device: HttpDevice }> {
  const io = new IOManager({
    clock: systemClock,
    routes: new RouteTable({}, {}, undefined),
    tools: new ToolRegistry(),
    logger: getLogger(["test"]),
  });
  const device = new HttpDevice();
  await io.replaceDevices([device]);
  (async () => {
    for (let event = await io.next(); event; event = await io.next()) {
      const text = String(event.payload.text);
      const result: TurnResult = text === "fail"
        ? { eventId: event.id, reply: "", channel: "http", rounds: 0, error: { code: "server", message: "LLM down" } }
        : {
          eventId: event.id,
          reply: `echo: ${text} (${event.sender}, ${event.trust}${
            event.payload.display ? `, "${event.payload.display}"` : ""
          })`,
          channel: "http",
          rounds: 1,
        };
      io.report(event.source, { type: "delta", eventId: event.id, text: "echo" });
      io.report(event.source, { type: "done", eventId: event.id, result });
    }
  })();
  const app = createApi({
    device,
    tokens: {
      ownerToken: token,
      people: token
        ? { alice: { token: `${token}-alice`, trust: "household" }, guest: { token: `${token}-guest`, trust: "guest" } }
        : {},
    },
    guard: { port: () => 80, publicHosts: [], allowedOrigins: [] },
    maxBodyBytes,
    logger: getLogger(["test"]),
    status: () => ({ ok: true }),
    channels: () => ({ channels: io.channels() }),
  });
  return { app, io, device };
}

const post = (
  app: Hono<{ Variables: ApiVariables }>,
  path: string,
  body: string,
  headers: Record<string, string> = {},
) => app.request(path, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });

Deno.test("chat answers with reply, channel and rounds", async () => {
  const { app, io } = await setup();
  const response = await post(app, "/api/chat", JSON.stringify({ text: "hi", user: "alice" }));
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { reply: 'echo: hi (owner, owner, "alice")', channel: "http", rounds: 1 });
  const failed = await post(app, "/api/chat", JSON.stringify({ text: "fail" }));
  assert.equal(failed.status, 502);
  assert.deepEqual(await failed.json(), { error: { code: "server", message: "LLM down" } });
  await io.close();
});

Deno.test("bad bodies get a 4xx JSON error naming the field and the value", async () => {
  const { app, io } = await setup();
  const cases: Array<[string, number, string, RegExp]> = [
    ["{", 400, "bad_json", /^The body is not valid JSON: /],
    ["[1,2]", 400, "bad_request", /^The body must be a JSON object, got \[1,2\]$/],
    ["{}", 400, "bad_request", /^Field "text" is missing$/],
    ['{"text": 5}', 400, "bad_request", /^Field "text" must be a non-empty string, got 5$/],
    ['{"text": "  "}', 400, "bad_request", /^Field "text" must be a non-empty string, got " {2}"$/],
    ['{"text": "hi", "txt": 1}', 400, "bad_request", /^Unknown field "txt"; allowed fields: text, user, attachments$/],
    ['{"text": "hi", "user": "a b"}', 400, "bad_request", /^Field "user" must be 1 to 64 letters.*, got "a b"$/],
    [
      JSON.stringify({ text: "x".repeat(3000) }),
      413,
      "too_large",
      /^The body is larger than daemon\.max_body_bytes \(2048 bytes\)$/,
    ],
  ];
  for (const [body, status, code, message] of cases) {
    for (const path of ["/api/chat", "/api/chat/stream"]) {
      const response = await post(app, path, body);
      assert.equal(response.status, status, `${path} ${body.slice(0, 30)}`);
      const json = await response.json();
      assert.equal(json.error.code, code);
      assert.match(json.error.message, message);
    }
  }
  const missing = await app.request("/api/nothing");
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), { error: { code: "not_found", message: 'No endpoint GET "/api/nothing"' } });
  await io.close();
});

Deno.test("with a token: /healthz stays open, /api/* needs it", async () => {
  const { app, io } = await setup(TOKEN);
  assert.equal((await app.request("/healthz")).status, 200);
  assert.equal((await app.request("/api/status")).status, 401);
  assert.equal((await app.request("/api/status", { headers: { authorization: "Basic abc" } })).status, 403);
  assert.equal((await app.request("/api/status", { headers: { authorization: `Bearer ${TOKEN}x` } })).status, 403);
  const ok = await app.request("/api/channels", { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(ok.status, 200);
  assert.deepEqual((await ok.json()).channels.map((c: { name: string }) => c.name), ["http"]);
  // Each token is a person: the identity and trust level come from it, the `user` field only names them.
  const as = async (token: string) =>
    (await (await post(app, "/api/chat", JSON.stringify({ text: "hi", user: "mom" }), {
      authorization: `Bearer ${token}`,
    })).json()).reply;
  assert.equal(await as(TOKEN), 'echo: hi (owner, owner, "mom")');
  assert.equal(await as(`${TOKEN}-alice`), 'echo: hi (alice, household, "mom")');
  assert.equal(await as(`${TOKEN}-guest`), 'echo: hi (guest, guest, "mom")');
  const unknown = await post(app, "/api/chat", JSON.stringify({ text: "hi" }), {
    authorization: "Bearer nobody-0000000000",
  });
  assert.equal(unknown.status, 403);
  assert.equal(
    (await unknown.json()).error.message,
    "The bearer token is not one of homed's tokens (daemon.api_token, daemon.api_tokens)",
  );
  await io.close();
});

Deno.test("stream sends start, deltas and done as SSE; shutdown ends waiting requests with 503", async () => {
  const { app, io, device } = await setup();
  const response = await post(app, "/api/chat/stream", JSON.stringify({ text: "s" }));
  const body = await response.text();
  assert.match(
    body,
    /^event: start\ndata: \{"id":"[^"]+"\}\n\nevent: delta\ndata: \{"text":"echo"\}\n\nevent: done\ndata: \{"reply":"echo: s \(owner, owner\)","channel":"http","rounds":1\}\n\n$/,
  );
  await io.close();
  assert.throws(
    () => device.submit({ text: "late", identity: { name: "owner", trust: "owner" } }),
    /The http device is not running/,
  );
  const late = await post(app, "/api/chat", JSON.stringify({ text: "late" }));
  assert.equal(late.status, 503);
  assert.deepEqual(await late.json(), {
    error: { code: "shutting_down", message: "homed is shutting down; try again shortly" },
  });
});

Deno.test("/api/events: kept messages first, then each new one as it is sent; guests are refused", async () => {
  const { app, io, device } = await setup(TOKEN);
  try {
    // Sent while nobody listens: kept, the latest 100 of them.
    for (let i = 0; i < 102; i++) await io.send({ target: "http", type: "message", payload: { text: `kept ${i}` } });
    assert.deepEqual(device.status().kept_messages, 100);
    const guest = await app.request("/api/events", { headers: { authorization: `Bearer ${TOKEN}-guest` } });
    assert.equal(guest.status, 403);
    assert.equal((await guest.json()).error.message, "Guests do not receive the household's messages");

    const response = await app.request("/api/events", { headers: { authorization: `Bearer ${TOKEN}-alice` } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const reader = readSse(response.body!);
    const next = async () => (await reader.next()).value!;
    assert.deepEqual(await next(), { event: "ready", data: '{"kept":100}' });
    assert.equal(JSON.parse((await next()).data).text, "kept 2", "the two oldest were dropped");
    for (let i = 3; i < 102; i++) assert.equal(JSON.parse((await next()).data).text, `kept ${i}`);
    assert.equal(device.status().kept_messages, 0, "handed over once");
    await io.send({
      target: "http",
      type: "message",
      payload: { text: "Time for tea" },
      replyTo: { id: "e9", source: "timer", sender: "owner" },
    });
    assert.deepEqual(JSON.parse((await next()).data), {
      channel: "http",
      type: "message",
      text: "Time for tea",
      reply_to: "e9",
    });
    assert.equal(device.status().event_clients, 1);
    // More clients than a household needs are turned away.
    const others = [];
    for (let i = 1; i < 32; i++) {
      others.push(await app.request("/api/events", { headers: { authorization: `Bearer ${TOKEN}` } }));
    }
    const refused = await app.request("/api/events", { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(refused.status, 503);
    assert.match((await refused.json()).error.message, /^32 clients already listen on \/api\/events/);
    for (const other of others) await other.body!.cancel();
    await reader.return(undefined);
  } finally {
    await io.close();
  }
});

Deno.test("/api/events lets go of a client that stops reading once 1 MiB waits for it", async () => {
  const { app, io, device } = await setup(TOKEN);
  try {
    const response = await app.request("/api/events", { headers: { authorization: `Bearer ${TOKEN}` } });
    const reader = readSse(response.body!);
    assert.deepEqual((await reader.next()).value, { event: "ready", data: '{"kept":0}' });
    assert.equal(device.status().event_clients, 1);
    // The client reads nothing more; messages of 1 KiB wait, 3 MiB in all (a real socket: http_device_test.ts).
    const text = "x".repeat(1_024);
    for (let i = 0; i < 3_000; i++) await io.send({ target: "http", type: "message", payload: { text } });
    assert.equal(device.status().event_clients, 0, "let go");
    assert.ok(Number(device.status().kept_messages) > 0, "later messages are kept for the next client");
    await reader.return(undefined);
  } finally {
    await io.close();
  }
});
