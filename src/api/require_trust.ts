/**
 * The API's trust rule for one endpoint: refuses a caller below the trust it needs with a 403 that names both.
 *
 * @module
 */

import type { Identity } from "../identity/identity.ts";
import { permits } from "../identity/trust.ts";
import { ApiError } from "./api_error.ts";

/**
 * Throws a 403 unless `identity` has at least trust `needed`; `what` says what the endpoint does.
 *
 * @example
 * ```ts
 * requireTrust({ name: "owner", trust: "owner" }, "owner", "The turn inspector"); // passes
 * // requireTrust({ name: "gus", trust: "guest" }, "household", "Usage figures")
 * // → 403 'Usage figures need trust household or owner; this request came from "gus" (trust guest)'
 * ```
 */
export function requireTrust(identity: Identity, needed: "household" | "owner", what: string): void {
  if (permits(needed, identity.trust)) return;
  const trust = needed === "owner" ? "owner" : "household or owner";
  throw new ApiError(
    403,
    "forbidden",
    `${what} need${what.endsWith("s") ? "" : "s"} trust ${trust}; this request came from ${
      JSON.stringify(identity.name)
    } (trust ${identity.trust})`,
  );
}
