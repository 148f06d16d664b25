/**
 * The turn inspector (owner only): `GET /api/turns` lists the recent turns, `GET /api/turns/<id>` shows one with
 * every request homed sent — system and reference sections with their tokens, the history, the messages, the tools
 * offered — and what came back, with latency, cost and why the prefix cache missed.
 *
 * @module
 */

import type { Hono } from "hono";
import type { TurnTraces } from "../agent/core/turn_traces.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { requireTrust } from "./require_trust.ts";

/**
 * Mounts the turn inspector's endpoints.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { TurnTraces } from "../agent/core/turn_traces.ts";
 * import { type ApiOptions, createApi } from "./app.ts";
 *
 * declare const options: ApiOptions;
 * const app = createApi({ ...options, routes: [turnRoutes(new TurnTraces({ clock: systemClock }))] });
 * ```
 */
export function turnRoutes(traces: TurnTraces): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/turns", (c) => {
      requireTrust(c.get("identity"), "owner", "The turn inspector");
      return c.json({ turns: traces.list() });
    });
    app.get("/api/turns/:id", (c) => {
      requireTrust(c.get("identity"), "owner", "The turn inspector");
      const id = c.req.param("id");
      const turn = traces.get(id);
      if (!turn) {
        throw new ApiError(
          404,
          "not_found",
          `No recent turn ${JSON.stringify(id.slice(0, 80))}; the inspector keeps the last turns since homed started`,
        );
      }
      return c.json(turn);
    });
  };
}
