/**
 * `GET /api/tracker/changes`: what changed in knowledge, plugins, the config and the persona since the last
 * `homed tracker commit` — how each part is read (overlay or manifest), when the last commit was, and the changes.
 * Owner only: the list names every file the household's butler holds. A symbolic link is a change of its own, with
 * its target as `link` (and `baselineLink`); the tracker never reads through it, so nothing behind it is listed. A file
 * with hard links outside the tracked parts is `hardlinked` (`hardLinks`, `hardLinksInside`), never read; `warnings`
 * names it, and every tracker manifest entry skipped as unsafe or malformed, with why.
 *
 * @module
 */

import type { Hono } from "hono";
import type { Tracker } from "../tracker/tracker.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";

/**
 * Mounts the tracker endpoint (behind the API's auth); the tracker is made on the first request, so its code is not
 * loaded at start.
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import { loadConfig } from "../config/load.ts";
 * import { trackerFor } from "../tracker/tracker_for.ts";
 *
 * declare const options: ApiOptions;
 * const loaded = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const app = createApi({ ...options, routes: [trackerRoutes(() => Promise.resolve(trackerFor(loaded, Date.now)))] });
 * ```
 */
export function trackerRoutes(tracker: () => Promise<Tracker>): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/tracker/changes", async (c) => {
      if (c.get("identity").trust !== "owner") {
        throw new ApiError(403, "forbidden", "Only the owner may list the tracked changes");
      }
      return c.json(await (await tracker()).status());
    });
  };
}
