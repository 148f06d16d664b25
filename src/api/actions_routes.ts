/**
 * `GET /api/actions`: the policy gate's audit — every `act`, `speak` and `sensitive` tool call and every call not
 * simply allowed: when, who asked on which channel, the lowest trust the turn held, the rule and the decision, the
 * result. The owner sees all; anyone else their own calls only.
 *
 * @module
 */

import type { Hono } from "hono";
import type { Identity } from "../identity/identity.ts";
import type { ApiVariables } from "./auth.ts";

/**
 * Mounts the audit endpoint; `actions` gives the calls `identity` may see, newest first.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { ApiVariables } from "./auth.ts";
 *
 * const app = new Hono<{ Variables: ApiVariables }>();
 * actionsRoutes(() => [])(app);
 * ```
 */
export function actionsRoutes(
  actions: (identity: Identity) => readonly object[],
): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/actions", (c) => c.json({ actions: actions(c.get("identity")) }));
  };
}
