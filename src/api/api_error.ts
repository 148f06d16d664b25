/**
 * The one exception type of the HTTP API; `app.onError` turns it into a JSON response.
 *
 * @module
 */

import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { HomedTurnErrorCode, TurnErrorCode } from "../io/turn_error.ts";
import type { LlmFailureCode } from "../provider/provider_error.ts";

/** An HTTP error with a stable code and a message for the user. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: string;

  /**
   * @example
   * ```ts
   * throw new ApiError(400, "bad_request", 'Field "text" is missing');
   * ```
   */
  constructor(status: ContentfulStatusCode, code: string, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }

  /** The JSON body: `{"error": {"code", "message"}}`. */
  toJSON(): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

/** HTTP status for a failed turn's error code: an LLM failure's or homed's own; any other code is a 502. */
export function statusForTurnError(code: TurnErrorCode): ContentfulStatusCode {
  switch (code as LlmFailureCode | HomedTurnErrorCode) {
    case "bad_input":
      return 400;
    case "no_api_key":
    case "unavailable":
    case "cancelled":
    case "shutting_down":
      return 503;
    case "timeout":
      return 504;
    case "internal":
      return 500;
    default:
      return 502;
  }
}
