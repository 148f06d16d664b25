/**
 * The `q` and `k` query parameters of the search endpoints, checked once.
 *
 * @module
 */

import type { Context } from "hono";
import { ApiError } from "./api_error.ts";

/**
 * Reads `q` (1 to 500 characters) and `k` (1 to 50, default 5); throws {@link ApiError} 400 naming the parameter and
 * the bad value.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 *
 * const app = new Hono();
 * app.get("/api/knowledge/search", (c) => {
 *   const { query, k } = searchParams(c); // ?q=tea&k=3 → { query: "tea", k: 3 }
 *   return c.json({ query, k });
 * });
 * ```
 */
export function searchParams(c: Context): { query: string; k: number } {
  const query = c.req.query("q");
  if (query === undefined || query.trim() === "") {
    throw new ApiError(400, "bad_request", 'Query parameter "q" is missing or empty');
  }
  if (query.length > 500) {
    throw new ApiError(400, "bad_request", `Query parameter "q" has ${query.length} characters; allowed: at most 500`);
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
  return { query, k };
}
