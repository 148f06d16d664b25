/**
 * `GET /api/knowledge` and `GET /api/knowledge/search?q=`.
 *
 * @module
 */

import type { Hono } from "hono";
import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";

/**
 * Mounts the knowledge endpoints (behind the API's auth).
 *
 * @example
 * ```ts
 * createApi({ …, routes: [knowledgeRoutes(knowledge)] });
 * ```
 */
export function knowledgeRoutes(knowledge: KnowledgeBase): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/knowledge", (c) => c.json({ ...knowledge.counts(), topics: knowledge.list() }));
    app.get("/api/knowledge/search", (c) => {
      const query = c.req.query("q");
      if (query === undefined || query.trim() === "") {
        throw new ApiError(400, "bad_request", 'Query parameter "q" is missing or empty');
      }
      if (query.length > 500) {
        throw new ApiError(
          400,
          "bad_request",
          `Query parameter "q" has ${query.length} characters; allowed: at most 500`,
        );
      }
      const rawK = c.req.query("k") ?? "5";
      const k = Number(rawK);
      if (!Number.isInteger(k) || k < 1 || k > 50) {
        throw new ApiError(
          400,
          "bad_request",
          `Query parameter "k" must be a whole number from 1 to 50, got ${JSON.stringify(rawK)}`,
        );
      }
      return c.json({ query, hits: knowledge.search(query, k) });
    });
  };
}
