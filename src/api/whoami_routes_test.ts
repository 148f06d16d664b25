import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { HttpDevice } from "../devices/http/http_device.ts";
import { createApi } from "./app.ts";
import { whoamiRoutes } from "./whoami_routes.ts";

const app = createApi({
  device: new HttpDevice(),
  tokens: {
    ownerToken: "owner-token-0123456789",
    people: {
      alice: { token: "alice-token-0123456789", trust: "household" },
      gus: { token: "gus-token-0123456789", trust: "guest" },
    },
  },
  guard: { port: () => 80, publicHosts: [], allowedOrigins: [] },
  maxBodyBytes: 4096,
  logger: getLogger(["test"]),
  status: () => ({}),
  channels: () => ({}),
  routes: [whoamiRoutes()],
});

const whoami = (token?: string) =>
  app.request("/api/whoami", token ? { headers: { authorization: `Bearer ${token}` } } : {});

Deno.test("whoami names the token's person and trust; no token or a wrong one never gets there", async () => {
  for (
    const [token, body] of [
      ["owner-token-0123456789", { name: "owner", trust: "owner" }],
      ["alice-token-0123456789", { name: "alice", trust: "household" }],
      ["gus-token-0123456789", { name: "gus", trust: "guest" }],
    ] as const
  ) {
    const response = await whoami(token);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), body);
  }
  const missing = await whoami();
  assert.equal(missing.status, 401);
  assert.equal((await missing.json()).error.code, "unauthorized");
  const wrong = await whoami("nobody-0123456789");
  assert.equal(wrong.status, 403);
  assert.equal((await wrong.json()).error.code, "forbidden");
});

Deno.test("with no token configured, every (loopback) caller is the owner", async () => {
  const open = createApi({
    device: new HttpDevice(),
    tokens: { ownerToken: "", people: {} },
    guard: { port: () => 80, publicHosts: [], allowedOrigins: [] },
    maxBodyBytes: 4096,
    logger: getLogger(["test"]),
    status: () => ({}),
    channels: () => ({}),
    routes: [whoamiRoutes()],
  });
  assert.deepEqual(await (await open.request("/api/whoami")).json(), { name: "owner", trust: "owner" });
});
