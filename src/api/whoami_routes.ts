/**
 * `GET /api/whoami`: who the bearer token says the caller is, `{"name", "trust"}` — what the console shows and which
 * pages it offers. A wrong token never gets here (the API's auth answers 401 or 403).
 *
 * @module
 */

import type { Hono } from "hono";
import type { Trust } from "../identity/trust.ts";
import type { ApiVariables } from "./auth.ts";

/** The body of `GET /api/whoami`. */
export interface WhoamiBody {
  name: string;
  trust: Trust;
}

/**
 * Mounts `GET /api/whoami` (behind the API's auth); it needs nothing but the request's identity.
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 *
 * declare const options: ApiOptions;
 * const app = createApi({ ...options, routes: [whoamiRoutes()] });
 * // GET /api/whoami with the owner's token → {"name": "owner", "trust": "owner"}
 * ```
 */
export function whoamiRoutes(): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/whoami", (c) => {
      const { name, trust } = c.get("identity");
      const body: WhoamiBody = { name, trust };
      return c.json(body);
    });
  };
}
