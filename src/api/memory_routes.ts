/**
 * `GET /api/memory/documents?q=&k=`: layer-2 documents matching a query, for the household to inspect (not counted as
 * an access). `GET /api/memory/graph?q=<entity>`: the facts about an entity, holding ones first, with their validity
 * and provenance. Both need trust `household` or `owner` (memory holds what the household said); a guest gets 403.
 *
 * @module
 */

import type { Context, Hono } from "hono";
import { permits } from "../identity/trust.ts";
import type { Identity } from "../identity/identity.ts";
import type { MemoryService } from "../memory/memory_service.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { searchParams } from "./search_params.ts";

/** Refuses a caller below trust `household`, naming the trust needed and the caller's. */
function requireHousehold(c: Context<{ Variables: ApiVariables }>): void {
  requireHouseholdIdentity(c.get("identity"));
}

/**
 * The memory's rule for any door to it (the API, MCP): trust `household` or `owner`; a guest gets 403 naming both.
 *
 * @example
 * ```ts
 * requireHouseholdIdentity({ name: "alice", trust: "household" }); // passes
 * ```
 */
export function requireHouseholdIdentity(identity: Identity): void {
  const { name, trust } = identity;
  if (permits("household", trust)) return;
  throw new ApiError(
    403,
    "forbidden",
    `Inspecting memory needs trust household or owner; this request came from ${JSON.stringify(name)} (trust ${trust})`,
  );
}

/**
 * Mounts the memory endpoints (behind the API's auth; household members and the owner only).
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { MemoryService } from "../memory/memory_service.ts";
 *
 * declare const options: ApiOptions;
 * declare const memory: MemoryService;
 * const app = createApi({ ...options, routes: [memoryRoutes(memory)] });
 * ```
 */
export function memoryRoutes(memory: MemoryService): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/memory/documents", async (c) => {
      requireHousehold(c);
      const { query, k } = searchParams(c);
      return c.json({ query, documents: await memory.inspectDocuments(query, k) });
    });
    app.get("/api/memory/graph", async (c) => {
      requireHousehold(c);
      const { query } = searchParams(c);
      return c.json({ entity: query, facts: await memory.inspectGraph(query) });
    });
  };
}
