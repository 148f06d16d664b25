/**
 * How a turn can fail, as the agent reports it to the device the input came from (`TurnResult.error.code`) and the
 * HTTP API maps it to a status. io names its own codes ({@link HomedTurnErrorCode}); a failure another layer names
 * passes through as its code — the LLM's, the provider's `LlmFailureCode` (io sits below the provider and does not
 * list them).
 *
 * @module
 */

/**
 * The ways a turn fails that io itself names: an input that is no message (`bad_input`), homed stopping
 * (`shutting_down`), a fault in homed (`internal`), or a reply that could not be handed to its channel (`undelivered`).
 */
export type HomedTurnErrorCode = "bad_input" | "shutting_down" | "internal" | "undelivered";

/**
 * Every way a turn ends in failure: one of io's own codes, or a failure another layer names — an LLM failure, the
 * provider's `LlmFailureCode` (`src/provider/provider_error.ts`). Where both are known (the agent, the HTTP API's
 * status mapping) they are typed as `LlmFailureCode | HomedTurnErrorCode`.
 */
// deno-lint-ignore ban-types -- `string & {}`: any other code, io's own still named in the type (not widened).
export type TurnErrorCode = HomedTurnErrorCode | (string & {});

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
