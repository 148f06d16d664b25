/**
 * What an MCP transport's errors mean for a session, and how they read in a message: a 4xx to the first POST is a
 * legacy SSE server (try SSE), a 404 or a 400 naming the session is a session the server forgot (reconnect), and
 * every message is one line of at most 300 characters with fetch's cause (refused, reset) added — an HTTP error
 * carries the server's whole page.
 *
 * @module
 */

import { oneLine } from "../text/untrusted.ts";
// The SDK's `./*` export maps `x.js` to `x.js.d.ts`, which does not exist: without `@ts-types` (the same path with no
// extension, which maps to `x.d.ts`) its modules would type-check as `any`.
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/**
 * A 4xx from the first POST: the server does not speak streamable HTTP there (a legacy SSE server).
 *
 * @example
 * ```ts
 * // @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
 * import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
 *
 * isNotStreamable(new StreamableHTTPError(405, "Method not allowed")); // true
 * ```
 */
export function isNotStreamable(error: unknown): boolean {
  return error instanceof StreamableHTTPError && typeof error.code === "number" && error.code >= 400 &&
    error.code < 500;
}

/**
 * The server forgot our HTTP session: a 404 (as the spec says), a 400 naming the session (as server-everything
 * does), or a 400 when the event stream of an established session is reopened.
 *
 * @example
 * ```ts
 * // @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
 * import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
 *
 * isSessionGone(new StreamableHTTPError(404, "Session not found")); // true
 * isSessionGone(new StreamableHTTPError(500, "Internal error")); // false
 * ```
 */
export function isSessionGone(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  if (error.code === 404) return true;
  return error.code === 400 && /session|Failed to open SSE stream/i.test(error.message);
}

/**
 * An error's message on one line and at most 300 characters (an HTTP error carries the server's whole page).
 *
 * @example
 * ```ts
 * messageOf(new Error("fetch failed", { cause: new Error("connection refused") })); // "fetch failed: connection refused"
 * ```
 */
export function messageOf(error: unknown): string {
  let message = oneLine(error instanceof Error ? error.message : String(error));
  // fetch says only "fetch failed"; the cause says why (refused, reset, no route).
  const cause = error instanceof Error && error.cause instanceof Error ? oneLine(error.cause.message) : "";
  if (cause && !message.includes(cause)) message = `${message}: ${cause}`;
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/**
 * A streamable-HTTP error with its status: `HTTP 403: Error POSTing to endpoint: …`.
 *
 * @example
 * ```ts
 * httpError(new Error("fetch failed")); // "fetch failed"
 * ```
 */
export function httpError(error: unknown): string {
  if (!(error instanceof StreamableHTTPError)) return messageOf(error);
  return `HTTP ${error.code ?? "error"}: ${messageOf(error).replace(/^Streamable HTTP error: /, "")}`;
}
