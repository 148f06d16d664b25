import assert from "node:assert/strict";
import { Hono } from "hono";
import { ApiError } from "./api_error.ts";
import { hostAllowed, requestGuard } from "./request_guard.ts";

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
