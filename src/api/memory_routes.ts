/**
 * `GET /api/memory/documents?q=&k=`: layer-2 documents matching a query, for the owner to inspect (not counted as an
 * access). `GET /api/memory/graph?q=<entity>`: the facts about an entity, holding ones first, with their validity and
 * provenance.
 *
 * @module
 */

import type { Hono } from "hono";
import type { MemoryService } from "../memory/memory_service.ts";
import type { ApiVariables } from "./auth.ts";
import { searchParams } from "./search_params.ts";

/**
 * Mounts the memory endpoints (behind the API's auth).
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
      const { query, k } = searchParams(c);
      return c.json({ query, documents: await memory.inspectDocuments(query, k) });
    });
    app.get("/api/memory/graph", async (c) => {
      const { query } = searchParams(c);
      return c.json({ entity: query, facts: await memory.inspectGraph(query) });
    });
  };
}
