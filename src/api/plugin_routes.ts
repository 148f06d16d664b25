/**
 * `GET /api/plugins`: every plugin found, eligible or not, with the reasons, its tools and commands, installers (shown,
 * never run) and errors; and what the last scan skipped. `POST /api/plugins/reload` (owner only): scan again and swap.
 *
 * @module
 */

import type { Hono } from "hono";
import type { PluginService } from "../plugin/plugin_service.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";

/**
 * Mounts the plugin endpoints (behind the API's auth).
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { PluginService } from "../plugin/plugin_service.ts";
 *
 * declare const options: ApiOptions;
 * declare const plugins: PluginService;
 * const app = createApi({ ...options, routes: [pluginRoutes(plugins)] });
 * ```
 */
export function pluginRoutes(plugins: PluginService): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/plugins", (c) => c.json({ plugins: plugins.list(), problems: plugins.problems() }));
    app.post("/api/plugins/reload", async (c) => {
      if (c.get("identity").trust !== "owner") {
        throw new ApiError(403, "forbidden", "Only the owner may reload plugins");
      }
      return c.json(await plugins.reload());
    });
  };
}
