/**
 * Errors of the OpenAI-compatible door in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`: what
 * OpenAI's clients read (the official `openai` client raises `BadRequestError` and friends from the status and keeps
 * `param` and `code`). `param` is there when one field of the request is at fault.
 *
 * @module
 */

import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError } from "../api_error.ts";

/** An {@link ApiError} that names the request field it is about (OpenAI's `param`). */
export class OpenAiError extends ApiError {
  /** The field, as OpenAI names it (`tools`, `response_format.json_schema.schema`, `messages[2].content[1]`). */
  readonly param: string | undefined;

  /**
   * @example
   * ```ts
   * throw new OpenAiError(400, "unsupported_parameter", 'Field "n" is 2; homed gives one answer a request', "n");
   * ```
   */
  constructor(status: ContentfulStatusCode, code: string, message: string, param?: string) {
    super(status, code, message);
    this.name = "OpenAiError";
    this.param = param;
  }
}

/**
 * A 400 about one field (`invalid_request_error`).
 *
 * @example
 * ```ts
 * throw invalidField("stream", 'Field "stream" must be true or false, got "yes"');
 * ```
 */
export function invalidField(param: string, message: string, code = "invalid_value"): OpenAiError {
  return new OpenAiError(400, code, message, param);
}

/** OpenAI's error body. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; code: string; param?: string };
}

/**
 * An error as OpenAI's API words it: the type from the status, `param` when a field is at fault.
 *
 * @example
 * ```ts
 * import { ApiError } from "../api_error.ts";
 *
 * openAiError(new ApiError(401, "unauthorized", "This endpoint needs an Authorization: Bearer <api_token> header"));
 * // { error: { message: "This endpoint needs …", type: "authentication_error", code: "unauthorized" } }
 * openAiError(invalidField("n", 'Field "n" is 2 …', "unsupported_parameter"));
 * // { error: { message: 'Field "n" is 2 …', type: "invalid_request_error", code: "unsupported_parameter", param: "n" } }
 * ```
 */
export function openAiError(error: ApiError): OpenAiErrorBody {
  const type = error.status === 401
    ? "authentication_error"
    : error.status === 403
    ? "permission_error"
    : error.status === 429
    ? "rate_limit_error"
    : error.status >= 500
    ? "server_error"
    : "invalid_request_error";
  const param = error instanceof OpenAiError ? error.param : undefined;
  return { error: { message: error.message, type, code: error.code, ...(param === undefined ? {} : { param }) } };
}

/** A JSON value, shown short in a message (the caller's text: never kilobytes of it). */
export function shown(value: unknown, max = 60): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
