/**
 * The error every Provider throws; the agent catches it and tells the user.
 *
 * @module
 */

/**
 * Why an LLM call failed (`ProviderError.code`). The provider owns this list; a failed turn carries it as its code
 * (io's `TurnErrorCode` passes it through) and the HTTP API maps it to a status.
 */
export type LlmFailureCode =
  | "no_api_key"
  | "auth"
  | "rate_limited"
  | "server"
  | "network"
  | "timeout"
  | "bad_request"
  | "bad_response"
  | "adapter"
  | "cancelled"
  /** No configured provider can answer: each is down or over its budget (`ProviderChain`; the message names why). */
  | "unavailable";

/** What kind of failure it was. */
export type ProviderErrorCode = LlmFailureCode;

/** An LLM call that failed, with a message fit to show the user. */
export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  /** HTTP status, when the server answered. */
  readonly status: number | undefined;
  /** Whether trying again may help (429, 5xx, network, timeout). */
  readonly retryable: boolean;
  /** Milliseconds the server asked to wait (`Retry-After`), when it did. */
  readonly retryAfterMs: number | undefined;

  /**
   * @example
   * ```ts
   * throw new ProviderError("timeout", "The LLM server did not answer within 120s", { retryable: true });
   * ```
   */
  constructor(
    code: ProviderErrorCode,
    message: string,
    options: { status?: number; retryable?: boolean; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProviderError";
    this.code = code;
    this.status = options.status;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}
