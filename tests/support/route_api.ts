/**
 * The HTTP API with a few routes mounted, as the route tests (`src/api/*_routes_test.ts`) build it: three people's
 * tokens (the owner, alice of the household and gus a guest), the loopback request guard, and a `call` that sends a
 * token and JSON's Content-Type.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { Hono } from "hono";
import { type ApiOptions, createApi } from "../../src/api/app.ts";
import type { ApiVariables, TokenOptions } from "../../src/api/auth.ts";
import { HttpDevice } from "../../src/api/http_device.ts";
import type { Trust } from "../../src/identity/trust.ts";

/** The owner's token (`daemon.api_token`). */
export const OWNER = "owner-token-0123456789";
/** alice's token, trust household. */
export const ALICE = "alice-token-0123456789";
/** gus's token, trust guest. */
export const GUS = "gus-token-0123456789";

/** Options of {@link routeApi}. */
export interface RouteApiOptions {
  /** The API's body limit; 4096 bytes unless given. */
  maxBodyBytes?: number;
  /** More people, with their tokens and trust, besides alice and gus. */
  people?: Record<string, { token: string; trust: Trust }>;
  /** The tokens instead of {@link OWNER}, alice's, gus's and `people` (`{ ownerToken: "", people: {} }`: none). */
  tokens?: TokenOptions;
}

/** The app of {@link routeApi} and a way to call it. */
export interface RouteApi {
  app: Hono<{ Variables: ApiVariables }>;
  /**
   * A request with `token` as its bearer and JSON's Content-Type (the request guard wants every non-GET request typed
   * as JSON, a body or not); a string body is sent as it is, anything else as JSON.
   */
  call(method: string, path: string, token: string, body?: unknown): Promise<Response>;
}

/**
 * The API with `routes` mounted behind its auth and body limit, loopback on port 80, with empty status and channels.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { whoamiRoutes } from "../../src/api/whoami_routes.ts";
 *
 * const { call } = routeApi([whoamiRoutes()], { people: { bob: { token: "bob-token-0123456789", trust: "household" } } });
 * const response = await call("GET", "/api/whoami", "bob-token-0123456789");
 * assert.deepEqual(await response.json(), { name: "bob", trust: "household" });
 * ```
 */
export function routeApi(routes: NonNullable<ApiOptions["routes"]>, options: RouteApiOptions = {}): RouteApi {
  const app = createApi({
    device: new HttpDevice(),
    tokens: options.tokens ?? {
      ownerToken: OWNER,
      people: {
        alice: { token: ALICE, trust: "household" },
        gus: { token: GUS, trust: "guest" },
        ...options.people,
      },
    },
    guard: { port: () => 80, publicHosts: [], allowedOrigins: [] },
    maxBodyBytes: options.maxBodyBytes ?? 4096,
    logger: getLogger(["test"]),
    status: () => ({}),
    channels: () => ({}),
    routes,
  });
  const call = async (method: string, path: string, token: string, body?: unknown) =>
    await app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
  return { app, call };
}
