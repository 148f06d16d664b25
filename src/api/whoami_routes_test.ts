import assert from "node:assert/strict";
import { ALICE, GUS, OWNER, routeApi } from "../../tests/support/route_api.ts";
import { whoamiRoutes } from "./whoami_routes.ts";

const { app } = routeApi([whoamiRoutes()]);

const whoami = (token?: string) =>
  app.request("/api/whoami", token ? { headers: { authorization: `Bearer ${token}` } } : {});

Deno.test("whoami names the token's person and trust; no token or a wrong one never gets there", async () => {
  for (
    const [token, body] of [
      [OWNER, { name: "owner", trust: "owner" }],
      [ALICE, { name: "alice", trust: "household" }],
      [GUS, { name: "gus", trust: "guest" }],
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
  const { app: open } = routeApi([whoamiRoutes()], { tokens: { ownerToken: "", people: {} } });
  assert.deepEqual(await (await open.request("/api/whoami")).json(), { name: "owner", trust: "owner" });
});
