import assert from "node:assert/strict";
import { Hono } from "hono";
import { ApiError } from "./api_error.ts";
import { getLogger } from "@logtape/logtape";
import { HttpDevice } from "./http_device.ts";
import { createApi } from "./app.ts";
import { pluginRoutes } from "./plugin_routes.ts";
import { hostAllowed, requestGuard } from "./request_guard.ts";
import { requireTrust } from "./require_trust.ts";
import { scheduleRoutes } from "./schedule_routes.ts";

Deno.test("hosts: loopback names and IP addresses on homed's port, and listed names", () => {
  const publicHosts = ["home.example", "nas.lan:8443"];
  const allowed = ["localhost", "localhost:8080", "127.0.0.1:8080", "[::1]:8080", "192.168.1.5:8080", "home.example"];
  for (const host of allowed) assert.equal(hostAllowed(host, 8080, publicHosts), true, host);
  assert.equal(hostAllowed("home.example:443", 8080, publicHosts), true, "a listed name behind a proxy, any port");
  assert.equal(hostAllowed("nas.lan:8443", 8080, publicHosts), true);
  const refused = ["attacker.example", "attacker.example:8080", "localhost:9999", "192.168.1.5:22", "nas.lan:8080", ""];
  for (const host of refused) assert.equal(hostAllowed(host, 8080, publicHosts), false, host);
});

Deno.test("origins: homed's own page and listed origins pass, others are refused naming the key", async () => {
  const app = new Hono();
  app.onError((error, c) => c.json((error as ApiError).toJSON(), (error as ApiError).status));
  app.use(
    "*",
    requestGuard({ port: () => 8080, publicHosts: ["home.example"], allowedOrigins: ["https://dash.example"] }),
  );
  app.post("/api/x", (c) => c.json({ ok: true }));
  const post = (headers: Record<string, string>) =>
    app.request("http://home.example/api/x", {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", ...headers },
      body: "{}",
    });
  assert.equal((await post({})).status, 200, "no Origin: curl, homed chat");
  assert.equal((await post({ origin: "http://home.example" })).status, 200, "homed's own page");
  assert.equal((await post({ origin: "https://dash.example" })).status, 200, "listed in daemon.allowed_origins");
  const refused = await post({ origin: "null" });
  assert.equal(refused.status, 403);
  assert.match((await refused.json()).error.message, /web page at "null" .*daemon\.allowed_origins/);
  const form = await app.request("http://home.example/api/x", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "text=hi",
  });
  assert.equal(form.status, 415);
  assert.equal(
    (await form.json()).error.message,
    'The body must be sent as Content-Type: application/json, got "application/x-www-form-urlencoded"',
  );
});

/** The guard in front of stand-ins for every kind of route homed has: `/api/*`, the OpenAI door, `/mcp`, pages. */
function guarded(): Hono {
  const app = new Hono();
  app.onError((error, c) => c.json((error as ApiError).toJSON(), (error as ApiError).status));
  app.use("*", requestGuard({ port: () => 8080, publicHosts: [], allowedOrigins: ["https://dash.example"] }));
  app.post("/api/chat", (c) => c.json({ ok: true }));
  app.get("/v1/models", (c) => c.json({ ok: true }));
  app.post("/v1/chat/completions", (c) => c.json({ ok: true }));
  app.all("/mcp", (c) => c.json({ ok: true }));
  app.get("/", (c) => c.html("<p>console</p>"));
  app.get("/onebot/v11/ws", (c) => c.json({ ok: true }));
  app.post("/hook", (c) => c.json({ ok: true }));
  return app;
}

async function answer(response: Response): Promise<{ status: number; message: string }> {
  const body = await response.json();
  return { status: response.status, message: body.error?.message ?? "" };
}

Deno.test("the OpenAI door and /mcp: a foreign Origin is 403 on every method, a body that is not JSON 415", async () => {
  const app = guarded();
  const send = async (method: string, path: string, headers: Record<string, string>, body?: string) =>
    await answer(
      await app.request(`http://127.0.0.1:8080${path}`, { method, headers, ...(body === undefined ? {} : { body }) }),
    );
  const evil = { origin: "http://evil.example" };
  for (const [method, path] of [["POST", "/v1/chat/completions"], ["POST", "/mcp"], ["DELETE", "/mcp"]]) {
    const where = `${method} ${path}`;
    // What any web page may send without a preflight: text/plain or a form, with its own Origin.
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const crossSite = await send(method!, path!, { ...evil, "content-type": type }, "{}");
      assert.equal(crossSite.status, 403, `${where} ${type}`);
      assert.equal(
        crossSite.message,
        `Requests from the web page at "http://evil.example" may not use homed's API; if you trust it, add it to ` +
          `daemon.allowed_origins`,
      );
      const noOrigin = await send(method!, path!, { "content-type": type }, "{}");
      assert.equal(noOrigin.status, 415, `${where} ${type} without Origin`);
      assert.match(noOrigin.message, /^The body must be sent as Content-Type: application\/json, got "[a-z/-]+"/);
      assert.ok(noOrigin.message.includes(JSON.stringify(type.split(";")[0])), noOrigin.message);
    }
    const json = { "content-type": "application/json" };
    assert.equal((await send(method!, path!, { ...evil, ...json }, "{}")).status, 403, `${where} JSON, cross-site`);
    assert.equal((await send(method!, path!, json, "{}")).status, 200, `${where} JSON, no Origin (curl, SDKs)`);
    const own = { origin: "http://127.0.0.1:8080", ...json };
    assert.equal((await send(method!, path!, own, "{}")).status, 200, `${where} JSON from homed's own page`);
    const listed = { origin: "https://dash.example", ...json };
    assert.equal((await send(method!, path!, listed, "{}")).status, 200, `${where} from daemon.allowed_origins`);
  }
  // MCP: servers must check Origin on every incoming connection, a GET (an event stream) included.
  assert.equal((await send("GET", "/mcp", evil)).status, 403);
  assert.equal((await send("GET", "/v1/models", evil)).status, 403);
  assert.equal((await send("GET", "/mcp", {})).status, 200);
  assert.equal((await send("GET", "/v1/models", { origin: "http://127.0.0.1:8080" })).status, 200);
});

Deno.test("a path written with percent-escapes is guarded like the route it reaches", async () => {
  const app = guarded();
  // The router decodes %61 to "a": "/%61pi/chat" runs POST /api/chat, so the guard must read the same path.
  for (const path of ["/%61pi/chat", "/v1/chat/c%6Fmpletions", "/%6Dcp"]) {
    const response = await app.request(`http://127.0.0.1:8080${path}`, {
      method: "POST",
      headers: { "content-type": "text/plain", origin: "http://evil.example" },
      body: "{}",
    });
    assert.equal(response.status, 403, path);
    await response.body?.cancel();
  }
});

Deno.test("a request that may change state is guarded on any path; page GETs are not", async () => {
  const app = guarded();
  const hook = async (headers: Record<string, string>) =>
    await answer(await app.request("http://127.0.0.1:8080/hook", { method: "POST", headers, body: "{}" }));
  assert.equal((await hook({ "content-type": "text/plain", origin: "http://evil.example" })).status, 403);
  assert.equal((await hook({ "content-type": "application/x-www-form-urlencoded" })).status, 415);
  assert.equal((await hook({ "content-type": "application/json" })).status, 200);
  // A link to the console from another site, and OneBot's handshake (its endpoint refuses any Origin itself).
  const page = await app.request("http://127.0.0.1:8080/", { headers: { origin: "http://evil.example" } });
  assert.equal(page.status, 200);
  await page.body?.cancel();
  const onebot = await app.request("http://127.0.0.1:8080/onebot/v11/ws", { headers: { origin: "http://x.example" } });
  assert.equal(onebot.status, 200);
  await onebot.body?.cancel();
});

/** The whole API (guard, tokens, trust) with an owner's route, a household route and the open chat route. */
function withTokens() {
  const reloads: string[] = [];
  const cancelled: string[] = [];
  const app = createApi({
    device: new HttpDevice(),
    tokens: {
      ownerToken: OWNER,
      people: { alice: { token: ALICE, trust: "household" }, gus: { token: GUS, trust: "guest" } },
    },
    guard: { port: () => 8080, publicHosts: [], allowedOrigins: [] },
    maxBodyBytes: 4096,
    logger: getLogger(["test"]),
    status: () => ({ ok: true }),
    channels: () => ({ channels: [] }),
    routes: [
      pluginRoutes({ list: () => [], problems: () => [], reload: () => Promise.resolve(reloads.push("x")) } as never),
      scheduleRoutes({ list: () => [], cancel: (id: string) => void cancelled.push(id) } as never),
      (api) =>
        api.post("/api/knowledge/reindex", (c) => {
          requireTrust(c.get("identity"), "owner", "Rebuilding the knowledge index");
          reloads.push("reindex");
          return c.json({ ok: true });
        }),
    ],
  });
  const send = async (method: string, path: string, token: string | undefined, type?: string) =>
    await answer(
      await app.request(`http://127.0.0.1:8080${path}`, {
        method,
        headers: {
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          ...(type === undefined ? {} : { "content-type": type }),
        },
        body: "text=hi",
      }),
    );
  return { send, reloads, cancelled };
}

const OWNER = "owner-token-0123456789";
const ALICE = "alice-token-0123456789";
const GUS = "guest-token-0123456789";

Deno.test("who before what: a guest's non-JSON POST to an owner's route is 403 naming the trust, not 415", async () => {
  const { send, reloads, cancelled } = withTokens();
  for (const type of [undefined, "text/plain", "application/x-www-form-urlencoded"]) {
    const reindex = await send("POST", "/api/knowledge/reindex", GUS, type);
    assert.deepEqual(reindex, {
      status: 403,
      message: 'Rebuilding the knowledge index needs trust owner; this request came from "gus" (trust guest)',
    }, `guest, ${type ?? "no Content-Type"}`);
    assert.equal(
      (await send("POST", "/api/knowledge/reindex", ALICE, type)).status,
      403,
      "household on an owner route",
    );
    const plugins = await send("POST", "/api/plugins/reload", GUS, type);
    assert.deepEqual(plugins, { status: 403, message: "Only the owner may reload plugins" });
    const schedule = await send("DELETE", "/api/schedules/s1", GUS, type);
    assert.equal(schedule.status, 403);
    assert.match(schedule.message, /^Cancelling a schedule needs trust household or owner; .*"gus" \(trust guest\)$/);
  }
  // Who passes: then what they sent is refused, naming the Content-Type given — and nothing ran.
  const json = /^The body must be sent as Content-Type: application\/json, got "text\/plain"$/;
  for (
    const [method, path, token] of [
      ["POST", "/api/knowledge/reindex", OWNER],
      ["POST", "/api/plugins/reload", OWNER],
      ["DELETE", "/api/schedules/s1", ALICE],
      ["POST", "/api/chat", GUS],
    ] as const
  ) {
    const refused = await send(method, path, token, "text/plain");
    assert.equal(refused.status, 415, `${method} ${path}`);
    assert.match(refused.message, json);
  }
  assert.deepEqual([reloads, cancelled], [[], []], "no refused request acted");
  // A wrong token is told so before anything about its body; no token at all is still refused before any token is
  // looked at (what a web page could send).
  const wrong = await send("POST", "/api/plugins/reload", "not-a-homed-token-000", "text/plain");
  assert.deepEqual(wrong, {
    status: 403,
    message: "The bearer token is not one of homed's tokens (daemon.api_token, daemon.api_tokens)",
  });
  const none = await send("POST", "/api/plugins/reload", undefined, "text/plain");
  assert.equal(none.status, 415);
  assert.match(none.message, json);
});
