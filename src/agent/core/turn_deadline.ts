/**
 * One deadline for all the LLM rounds and retries of a turn (`llm.turn_timeout`). Only time spent waiting for the
 * LLM counts; tool calls have their own deadlines.
 *
 * @module
 */

import type { Clock } from "../../clock.ts";
import { ProviderError } from "../../provider/provider_error.ts";

/** The LLM time budget of one turn. */
export class TurnDeadline {
  #clock: Clock;
  #limitMs: number;
  #remainingMs: number;
  #expired = false;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   * import type { Provider } from "../../provider/provider.ts";
   *
   * declare const provider: Provider;
   *
   * const turn = new AbortController();
   * const deadline = new TurnDeadline(systemClock, 90_000);
   * const answer = await deadline.run(
   *   (signal) => provider.chat({ messages: [{ role: "user", content: "hi" }] }, { signal }),
   *   turn.signal,
   * );
   * deadline.expired; // false: the answer came within 90 s
   * ```
   */
  constructor(clock: Clock, limitMs: number) {
    this.#clock = clock;
    this.#limitMs = limitMs;
    this.#remainingMs = limitMs;
  }

  /** True once the budget ran out. */
  get expired(): boolean {
    return this.#expired;
  }

  /**
   * Runs one LLM call with what is left of the budget. When the budget runs out the call is aborted and a
   * `ProviderError` with code `timeout` naming `llm.turn_timeout` is thrown instead of whatever the call threw.
   */
  async run<T>(call: (signal: AbortSignal) => Promise<T>, outer: AbortSignal): Promise<T> {
    if (this.#remainingMs <= 0) throw this.#error();
    const controller = new AbortController();
    const signal = AbortSignal.any([outer, controller.signal]);
    const started = this.#clock.monotonic();
    const cancel = this.#clock.after(this.#remainingMs, () => {
      this.#expired = true;
      controller.abort(this.#error());
    });
    try {
      return await call(signal);
    } catch (error) {
      if (this.#expired && !outer.aborted) throw this.#error(error);
      throw error;
    } finally {
      cancel();
      this.#remainingMs -= this.#clock.monotonic() - started;
    }
  }

  #error(cause?: unknown): ProviderError {
    return new ProviderError(
      "timeout",
      `The LLM did not finish this turn within ${
        Math.round(this.#limitMs / 100) / 10
      }s (llm.turn_timeout), so homed stopped waiting; the message was not answered — please try again`,
      cause === undefined ? {} : { cause },
    );
  }
}
