/**
 * `GET /api/smart_home/actions`: the audit of the smart home — every service the butler called or asked the owner to
 * confirm (when, in which turn, who asked, what HA answered) and how each confirmation ended. Household and owner only:
 * it tells who did what at home.
 *
 * @module
 */

import type { Hono } from "hono";
import { permits } from "../identity/trust.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";

/**
 * Mounts the audit endpoint; `audit` gives its body.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { ApiVariables } from "./auth.ts";
 *
 * const app = new Hono<{ Variables: ApiVariables }>();
 * smartHomeRoutes(() => ({ actions: [], confirmations: [] }))(app);
 * ```
 */
export function smartHomeRoutes(audit: () => object): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/smart_home/actions", (c) => {
      const { name, trust } = c.get("identity");
      if (!permits("household", trust)) {
        throw new ApiError(
          403,
          "forbidden",
          `The smart home's audit needs trust household or owner; this request came from ${
            JSON.stringify(name)
          } (trust ${trust})`,
        );
      }
      return c.json(audit());
    });
  };
}
