/**
 * The owner's yes in the console: `GET /api/confirmations` lists the actions waiting for the owner (what, who asked on
 * which channel with what trust, where the question went, when it expires); `POST /api/confirmations/<id>` with
 * `{"decision": "approve" | "deny"}` decides one — approve runs it once, deny runs nothing, each audited as decided on
 * `console`, by the same {@link Confirmations} as a yes in the chat. Owner only: a 403 names the rule for anyone else;
 * a 404 names an id nothing waits under (it ran, was declined or expired); a 400 names the field of a bad body.
 *
 * @module
 */

import type { Hono } from "hono";
import type { Confirmations } from "../policy/confirmations.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { requireTrust } from "./require_trust.ts";

/** Longest confirmation id taken from a path (homed's are 4 to 8 hex digits). */
const MAX_ID_CHARS = 40;
const DECISIONS = ["approve", "deny"] as const;

/**
 * Mounts the confirmation endpoints (behind the API's auth and body limit).
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { Confirmations } from "../policy/confirmations.ts";
 *
 * declare const options: ApiOptions;
 * declare const confirmations: Confirmations;
 * const app = createApi({ ...options, routes: [confirmationRoutes(confirmations)] });
 * ```
 */
export function confirmationRoutes(
  confirmations: Pick<Confirmations, "status" | "decide">,
): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/confirmations", (c) => {
      requireTrust(c.get("identity"), "owner", "Actions waiting for the owner's yes");
      return c.json({ pending: confirmations.status() });
    });
    app.post("/api/confirmations/:id", async (c) => {
      requireTrust(c.get("identity"), "owner", "Deciding a waiting action");
      const id = c.req.param("id");
      const shown = JSON.stringify(id.length > MAX_ID_CHARS ? `${id.slice(0, MAX_ID_CHARS)}…` : id);
      const decision = decisionOf(await c.req.text());
      const decided = await confirmations.decide(id, decision, { source: "console" });
      if (!decided) {
        throw new ApiError(
          404,
          "not_found",
          `Nothing waits for the owner's yes under ${shown} (it ran, was declined or expired)`,
        );
      }
      return c.json(decided);
    });
  };
}

/** The body's `decision`; a 400 naming the field otherwise. */
function decisionOf(text: string): (typeof DECISIONS)[number] {
  const expected = `the body must be a JSON object with "decision": "approve" or "deny"`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, "bad_request", `The body is not JSON; ${expected}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError(400, "bad_request", `The body is not a JSON object; ${expected}`);
  }
  const decision = (body as Record<string, unknown>).decision;
  if (decision === undefined) throw new ApiError(400, "bad_request", `Field "decision" is missing; ${expected}`);
  if (typeof decision !== "string" || !(DECISIONS as readonly string[]).includes(decision)) {
    throw new ApiError(
      400,
      "bad_request",
      `Field "decision" is ${JSON.stringify(decision).slice(0, 40)}; allowed: "approve" or "deny"`,
    );
  }
  return decision as (typeof DECISIONS)[number];
}
