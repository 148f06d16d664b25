/**
 * `GET /api/schedules`: the active reminders and schedules with their next run, creator and channel — all of them for
 * the owner, one's own for everyone else. `DELETE /api/schedules/<id>`: cancels one, for its creator or the owner
 * (the rule of the `schedule_cancel` tool, applied by the timer itself).
 *
 * @module
 */

import type { Hono } from "hono";
import { ScheduleCancelRefused, scheduleView, type TimerDevice } from "../timer/timer.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { requireTrust } from "./require_trust.ts";

/** Longest schedule id taken from a path (the timer's are far shorter). */
const MAX_ID_CHARS = 100;

/**
 * Mounts the schedule endpoints (behind the API's auth). The timer is all it needs: `list` and `cancel`.
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { TimerDevice } from "../timer/timer.ts";
 *
 * declare const options: ApiOptions;
 * declare const timer: TimerDevice;
 * const app = createApi({ ...options, routes: [scheduleRoutes(timer)] });
 * ```
 */
export function scheduleRoutes(
  timer: Pick<TimerDevice, "list" | "cancel">,
): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/schedules", (c) => {
      const identity = c.get("identity");
      const schedules = timer.list({ name: identity.name, owner: identity.trust === "owner" });
      return c.json({ schedules: schedules.map(scheduleView) });
    });
    app.delete("/api/schedules/:id", (c) => {
      const identity = c.get("identity");
      // As schedule_cancel: household members and the owner; a guest never made one.
      requireTrust(identity, "household", "Cancelling a schedule");
      const id = c.req.param("id");
      if (id.length > MAX_ID_CHARS) {
        throw new ApiError(
          400,
          "bad_request",
          `Schedule id ${
            JSON.stringify(`${id.slice(0, 40)}…`)
          } has ${id.length} characters; allowed: at most ${MAX_ID_CHARS}`,
        );
      }
      try {
        timer.cancel(id, { name: identity.name, owner: identity.trust === "owner" });
      } catch (error) {
        if (!(error instanceof ScheduleCancelRefused)) throw error;
        if (error.reason === "not_found") {
          throw new ApiError(404, "not_found", `No active schedule ${JSON.stringify(id)}`);
        }
        throw new ApiError(
          403,
          "forbidden",
          `Schedule ${JSON.stringify(id)} belongs to ${JSON.stringify(error.schedule?.creator)}; only they or the ` +
            `owner may cancel it (this request came from ${JSON.stringify(identity.name)}, trust ${identity.trust})`,
        );
      }
      return c.json({ cancelled: id });
    });
  };
}
