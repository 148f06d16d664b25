/**
 * The error every Provider throws; the agent catches it and tells the user.
 *
 * @module
 */

import type { LlmFailureCode } from "../io/turn_error.ts";

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
