/**
 * Who is calling `/api/*`: a bearer token maps to a person and their trust level. A missing token is 401, an unknown
 * one 403. With no token configured at all (homed then listens on loopback only), every caller is the owner.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import type { Identity } from "../identity/identity.ts";
import type { Trust } from "../identity/trust.ts";
import { ApiError } from "./api_error.ts";
import { sameDigest, secretDigest } from "../identity/secret.ts";

/** Hono variables the API sets. */
export type ApiVariables = { identity: Identity };

/** The tokens: the owner's (`daemon.api_token`) and other people's (`daemon.api_tokens`). */
export interface TokenOptions {
  ownerToken: string;
  people: Readonly<Record<string, { token: string; trust: Trust }>>;
}

/**
 * The identity middleware: sets `identity` for the routes after it. A missing header is a 401; a token that is not
 * one of homed's is `refusal` (403 `forbidden` on the API; the OpenAI door answers 401 `invalid_api_key`, as OpenAI's
 * clients expect).
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { loadConfig } from "../config/load.ts";
 *
 * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const app = new Hono<{ Variables: ApiVariables }>();
 * app.use("/api/*", bearerAuth({ ownerToken: config.daemon.api_token, people: config.daemon.api_tokens }));
 * app.get("/api/whoami", (c) => c.json(c.get("identity"))); // { name: "owner", trust: "owner" }
 * ```
 */
export function bearerAuth(
  options: TokenOptions,
  refusal: { status: 401 | 403; code: string } = { status: 403, code: "forbidden" },
): MiddlewareHandler<{ Variables: ApiVariables }> {
  // Only the tokens' digests are kept, worked out once here.
  const holders: Array<{ digest: Uint8Array; identity: Identity }> = [];
  if (options.ownerToken !== "") {
    holders.push({ digest: secretDigest(options.ownerToken), identity: { name: "owner", trust: "owner" } });
  }
  for (const [name, person] of Object.entries(options.people)) {
    holders.push({ digest: secretDigest(person.token), identity: { name, trust: person.trust } });
  }
  return async (c, next) => {
    if (holders.length === 0) {
      c.set("identity", { name: "owner", trust: "owner" });
      return await next();
    }
    const header = c.req.header("authorization");
    if (!header) {
      c.header("WWW-Authenticate", 'Bearer realm="homed"');
      throw new ApiError(401, "unauthorized", "This endpoint needs an Authorization: Bearer <api_token> header");
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const given = secretDigest(match?.[1] ?? "");
    // Every token is compared, so the time taken does not tell which one (if any) came close.
    let found: Identity | undefined;
    for (const holder of holders) if (sameDigest(given, holder.digest) && match) found = holder.identity;
    if (!found) {
      throw new ApiError(
        refusal.status,
        refusal.code,
        "The bearer token is not one of homed's tokens (daemon.api_token, daemon.api_tokens)",
      );
    }
    c.set("identity", found);
    await next();
  };
}
