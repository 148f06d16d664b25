/**
 * How a turn can fail, as the agent reports it to the device the input came from (`TurnResult.error.code`) and the
 * HTTP API maps it to a status. The LLM's failures are listed here once; the provider's `ProviderErrorCode` is
 * {@link LlmFailureCode}.
 *
 * @module
 */

/** Why an LLM call failed (`ProviderError.code`). */
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

/**
 * Every way a turn ends in failure: an LLM failure, an input that is no message (`bad_input`), homed stopping
 * (`shutting_down`), a fault in homed (`internal`), or a reply that could not be handed to its channel
 * (`undelivered`).
 */
export type TurnErrorCode = LlmFailureCode | "bad_input" | "shutting_down" | "internal" | "undelivered";

/** A failed turn's code and the message fit to show the person who asked. */
export interface TurnError {
  code: TurnErrorCode;
  message: string;
}

/** homed is stopping and takes no new input: the caller answers "try again shortly" (HTTP 503 `shutting_down`). */
export class ShuttingDown extends Error {
  /**
   * @example
   * ```ts
   * new ShuttingDown().message; // "homed is shutting down and takes no new input"
   * ```
   */
  constructor(message = "homed is shutting down and takes no new input") {
    super(message);
    this.name = "ShuttingDown";
  }
}
