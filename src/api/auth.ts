/**
 * Bearer-token check for `/api/*`: a missing token is 401, a wrong one 403.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { ApiError } from "./api_error.ts";

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/** Compares two strings in time that does not depend on where they differ. */
async function sameSecret(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([digest(a), digest(b)]);
  let difference = 0;
  for (let i = 0; i < x.length; i++) difference |= x[i]! ^ y[i]!;
  return difference === 0;
}

/**
 * Requires `Authorization: Bearer <token>`; passes everything when `token` is empty.
 *
 * @example
 * ```ts
 * app.use("/api/*", bearerAuth(config.daemon.api_token));
 * ```
 */
export function bearerAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (token === "") return await next();
    const header = c.req.header("authorization");
    if (!header) {
      c.header("WWW-Authenticate", 'Bearer realm="homed"');
      throw new ApiError(401, "unauthorized", "This endpoint needs an Authorization: Bearer <api_token> header");
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match || !(await sameSecret(match[1]!, token))) {
      throw new ApiError(403, "forbidden", "The bearer token is not daemon.api_token");
    }
    await next();
  };
}
