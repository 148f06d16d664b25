/**
 * `GET /api/knowledge` and `GET /api/knowledge/search?q=`.
 *
 * @module
 */

import type { Hono } from "hono";
import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
import type { ApiVariables } from "./auth.ts";
import { searchParams } from "./search_params.ts";

/**
 * Mounts the knowledge endpoints (behind the API's auth).
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
 *
 * declare const options: ApiOptions;
 * declare const knowledge: KnowledgeBase;
 * const app = createApi({ ...options, routes: [knowledgeRoutes(knowledge)] });
 * ```
 */
export function knowledgeRoutes(knowledge: KnowledgeBase): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/knowledge", (c) => c.json({ ...knowledge.counts(), topics: knowledge.list() }));
    app.get("/api/knowledge/search", (c) => {
      const { query, k } = searchParams(c);
      return c.json({ query, hits: knowledge.search(query, k) });
    });
  };
}
