/**
 * The people endpoints (issue 39.2): `GET /api/people` — the members of the household whose profile the caller may
 * open (the owner: everyone; a household member: themself; a guest: 403) — and `GET /api/people/{id}/profile` — one
 * member's facts by kind with their sources and what superseded them, for that member and the owner only (another
 * member's page is 403 naming the rule). A fact is corrected or forgotten through the memory endpoints
 * (`POST /api/memory/facts/{id}/correct`, `DELETE /api/memory/facts/{id}`), with their rule: the owner.
 *
 * @module
 */

import type { Hono } from "hono";
import { profileRefusal, type Profiles } from "../memory/profile/profiles.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { viewerOf } from "./memory_routes.ts";
import { requireTrust } from "./require_trust.ts";

/** A person id of the path: 1 to 64 characters (a token's name, a QQ number); 400 naming the value otherwise. */
function personId(raw: string | undefined): string {
  const id = raw ?? "";
  if (id.trim() === "" || [...id].length > 64 || /[\p{Cc}]/u.test(id)) {
    throw new ApiError(
      400,
      "bad_request",
      `A person id is 1 to 64 characters without control characters, got ${JSON.stringify(id.slice(0, 80))}`,
    );
  }
  return id;
}

/**
 * Mounts the people endpoints (behind the API's auth).
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { MemoryService } from "../memory/memory_service.ts";
 * import { Profiles } from "../memory/profile/profiles.ts";
 *
 * declare const options: ApiOptions;
 * declare const memory: MemoryService;
 * const profiles = new Profiles(memory.profileSource(), () => [{ id: "owner", trust: "owner" }]);
 * const app = createApi({ ...options, routes: [peopleRoutes(profiles)] });
 * // GET /api/people with alice's token → {"people": [{"id": "alice", "trust": "household", …, "facts": 4}]}
 * ```
 */
export function peopleRoutes(profiles: Profiles): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/people", async (c) => {
      const identity = c.get("identity");
      requireTrust(identity, "household", "Reading a profile");
      return c.json({ people: await profiles.visibleMembers(viewerOf(identity)) });
    });
    app.get("/api/people/:id/profile", async (c) => {
      const identity = c.get("identity");
      requireTrust(identity, "household", "Reading a profile");
      const person = personId(c.req.param("id"));
      const viewer = viewerOf(identity);
      const refusal = profileRefusal(viewer, person);
      if (refusal) throw new ApiError(403, "forbidden", refusal);
      const profile = await profiles.profile(person, viewer);
      if (!profile) {
        throw new ApiError(404, "not_found", `No household member ${JSON.stringify(person)} (see GET /api/people)`);
      }
      return c.json(profile);
    });
  };
}
