/**
 * The API's trust rule for one endpoint: refuses a caller below the trust it needs with a 403 that names both — before
 * a refusal of what the request sent (who before what: a guest's form POST to an owner's route is told it needs the
 * owner, not that its body should be JSON).
 *
 * @module
 */

import type { Identity } from "../identity/identity.ts";
import { permits } from "../identity/trust.ts";
import { ApiError } from "./api_error.ts";

/** Refusals of a request's body waiting for its route's trust check (see {@link deferUntilTrusted}). */
const deferred = new WeakMap<Identity, Error>();

/**
 * A copy of `identity` that carries `refusal` (a 415 for a body that is not JSON) to the route's trust check:
 * {@link requireTrust} throws it once the caller passes, and its own 403 when they do not. The request guard defers
 * this way only requests that carry a token and are below the owner (`request_guard.ts`, `bodyRuleAfterAuth`).
 *
 * @example
 * ```ts
 * import { ApiError } from "./api_error.ts";
 *
 * const refusal = new ApiError(415, "unsupported_media_type", "The body must be sent as Content-Type: application/json");
 * const gus = deferUntilTrusted({ name: "gus", trust: "guest" }, refusal);
 * // requireTrust(gus, "household", "Cancelling a schedule") → 403 (who first); a household member so deferred → the 415
 * ```
 */
export function deferUntilTrusted(identity: Identity, refusal: Error): Identity {
  const copy = { ...identity };
  deferred.set(copy, refusal);
  return copy;
}

/**
 * Throws a 403 unless `identity` has at least trust `needed`; `what` says what the endpoint does. A caller who passes
 * but whose request's body was refused meanwhile ({@link deferUntilTrusted}) gets that refusal now.
 *
 * @example
 * ```ts
 * requireTrust({ name: "owner", trust: "owner" }, "owner", "The turn inspector"); // passes
 * // requireTrust({ name: "gus", trust: "guest" }, "household", "Usage figures")
 * // → 403 'Usage figures need trust household or owner; this request came from "gus" (trust guest)'
 * ```
 */
export function requireTrust(identity: Identity, needed: "household" | "owner", what: string): void {
  if (permits(needed, identity.trust)) {
    const refusal = deferred.get(identity);
    if (refusal) throw refusal;
    return;
  }
  const trust = needed === "owner" ? "owner" : "household or owner";
  throw new ApiError(
    403,
    "forbidden",
    `${what} need${what.endsWith("s") ? "" : "s"} trust ${trust}; this request came from ${
      JSON.stringify(identity.name)
    } (trust ${identity.trust})`,
  );
}
