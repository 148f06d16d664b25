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
  const k = intParam(c, "k", { min: 1, max: 50, fallback: 5 });
  return { query, k };
}

/**
 * A whole-number query parameter within bounds, or its default when absent; anything else (digits only) is a 400
 * naming the parameter, the bounds and the value.
 *
 * @example
 * ```ts
 * import type { Context } from "hono";
 *
 * declare const c: Context;
 * const limit = intParam(c, "limit", { min: 1, max: 200, fallback: 50 }); // ?limit=0 → 400 '… from 1 to 200, got "0"'
 * ```
 */
export function intParam(
  c: { req: { query(name: string): string | undefined } },
  name: string,
  bounds: { min: number; max: number; fallback: number },
): number {
  const raw = c.req.query(name);
  if (raw === undefined) return bounds.fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < bounds.min || value > bounds.max) {
    throw new ApiError(
      400,
      "bad_request",
      `Query parameter "${name}" must be a whole number from ${bounds.min} to ${bounds.max}, got ${
        JSON.stringify(raw.length > 40 ? `${raw.slice(0, 39)}…` : raw)
      }`,
    );
  }
  return value;
}
