/**
 * `GET /api/schedules`: the active reminders and schedules with their next run, creator and channel — all of them for
 * the owner, one's own for everyone else.
 *
 * @module
 */

import type { Hono } from "hono";
import { scheduleView, type TimerDevice } from "../devices/timer/timer.ts";
import type { ApiVariables } from "./auth.ts";

/**
 * Mounts the schedule endpoint (behind the API's auth).
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { TimerDevice } from "../devices/timer/timer.ts";
 *
 * declare const options: ApiOptions;
 * declare const timer: TimerDevice;
 * const app = createApi({ ...options, routes: [scheduleRoutes(timer)] });
 * ```
 */
export function scheduleRoutes(timer: TimerDevice): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/schedules", (c) => {
      const identity = c.get("identity");
      const schedules = timer.list({ name: identity.name, owner: identity.trust === "owner" });
      return c.json({ schedules: schedules.map(scheduleView) });
    });
  };
}
