/**
 * The daemon's refusal of a call `homed mcp serve` made for its client, as an error the tools pass on: the daemon
 * applies its trust rules itself, so a guest's 403 is this error's message, shown as the tool's error. Its own file so
 * the HTTP exchange and the access built on it share it.
 *
 * @module
 */

/**
 * The daemon answered a call with an error status: its message, and the status and code it gave.
 *
 * @example
 * ```ts
 * import type { ButlerAccess } from "./homed_tools.ts";
 *
 * declare const access: ButlerAccess;
 * try {
 *   await access.recall("umbrella");
 * } catch (error) {
 *   if (error instanceof ButlerApiError && error.status === 403) console.error(error.message); // "Inspecting memory needs…"
 * }
 * ```
 */
export class ButlerApiError extends Error {
  override readonly name = "ButlerApiError";
  /** The status, the API's error code (`forbidden`, `unauthorized`, …; `http` when the body was not the API's) and message. */
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}
