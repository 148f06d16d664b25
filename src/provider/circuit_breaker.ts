/**
 * A circuit breaker for one LLM provider. Closed, the provider is used; a request that fails because the provider
 * cannot answer (after its own retries) opens it, and the chain goes straight to the next provider instead. While
 * open, a probe asks the provider every `llm.probe_interval` on the injected clock whether it answers again — each
 * under a deadline (that provider's `llm.timeout`), never two at once; a probe that throws or hangs is logged and
 * counted as still down, never more. The first probe that succeeds closes the breaker.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, deadline } from "../clock.ts";
import { ProviderError, type ProviderErrorCode } from "./provider_error.ts";

/**
 * The failures that mean "this provider cannot answer now": the chain moves on to the next provider and the breaker
 * opens. Not among them: `bad_request` and `bad_response` (the next provider would get the same request, and the
 * server is up), `adapter` (a Lua adapter's script failed on this request: its server may be fine, the next request
 * may not fail), `cancelled` (the caller gave up) and `unavailable` (the chain's own).
 */
export const AVAILABILITY_FAILURES: ReadonlySet<ProviderErrorCode> = new Set<ProviderErrorCode>([
  "network",
  "timeout",
  "server",
  "rate_limited",
  "auth",
  "no_api_key",
]);

/**
 * Whether `error` says the provider cannot answer now (see {@link AVAILABILITY_FAILURES}).
 *
 * @example
 * ```ts
 * import { ProviderError } from "./provider_error.ts";
 *
 * isAvailabilityFailure(new ProviderError("server", "HTTP 503")); // true
 * isAvailabilityFailure(new ProviderError("bad_request", "HTTP 400")); // false
 * ```
 */
export function isAvailabilityFailure(error: unknown): error is ProviderError {
  return error instanceof ProviderError && AVAILABILITY_FAILURES.has(error.code);
}

/** `closed`: the provider is used. `open`: it failed and is being probed. */
export type BreakerState = "closed" | "open";

/** A change of a breaker's state. */
export type BreakerChange = { state: "open"; error: ProviderError } | { state: "closed" };

/** Options of {@link CircuitBreaker}. */
export interface CircuitBreakerOptions {
  /** The provider's name, in logs. */
  name: string;
  /** Asks the provider whether it answers; resolves when it does. */
  probe: (signal: AbortSignal) => Promise<void>;
  clock: Clock;
  /** `llm.probe_interval`: from the opening (or the last probe's end) to the next probe. */
  intervalMs: number;
  /** Deadline of one probe (the provider's `llm.timeout`). */
  timeoutMs: number;
  logger: Logger;
  /** Hears every change of state, once per change. */
  onChange?: (change: BreakerChange) => void;
}

/** One provider's breaker. */
export class CircuitBreaker {
  #options: CircuitBreakerOptions;
  #state: BreakerState = "closed";
  #since: number;
  #lastError: ProviderError | undefined;
  #failures = 0;
  #probes = 0;
  #nextProbe: number | undefined;
  #cancelTimer: () => void = () => {};
  #probing: AbortController | undefined;
  #closed = false;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   * import type { Provider } from "./provider.ts";
   *
   * declare const provider: Provider;
   * const breaker = new CircuitBreaker({
   *   name: "deepseek-v4-flash@api.deepseek.com",
   *   probe: (signal) => provider.probe!(signal),
   *   clock: systemClock,
   *   intervalMs: 30_000,
   *   timeoutMs: 30_000,
   *   logger: log("llm"),
   *   onChange: (change) => console.log(change.state),
   * });
   * try {
   *   await provider.chat({ messages: [{ role: "user", content: "hi" }] });
   *   breaker.succeed();
   * } catch (error) {
   *   if (isAvailabilityFailure(error)) breaker.fail(error); // "open": probed every 30 s until it answers
   * }
   * breaker.close();
   * ```
   */
  constructor(options: CircuitBreakerOptions) {
    this.#options = options;
    this.#since = options.clock.now();
  }

  /** `closed` (used) or `open` (being probed). */
  get state(): BreakerState {
    return this.#state;
  }

  /** When the state last changed (epoch ms; the start before any change). */
  get since(): number {
    return this.#since;
  }

  /** Why it is (or last was) down: the failure that opened it, or the last probe's. */
  get lastError(): ProviderError | undefined {
    return this.#lastError;
  }

  /** Requests that failed for availability, in all. */
  get failures(): number {
    return this.#failures;
  }

  /** Probes started, in all. */
  get probes(): number {
    return this.#probes;
  }

  /** When the next probe is due (epoch ms), or undefined when none is scheduled. */
  get nextProbe(): number | undefined {
    return this.#nextProbe;
  }

  /** A request failed because the provider cannot answer: opens the breaker (once) and starts probing. */
  fail(error: ProviderError): void {
    this.#failures++;
    this.#lastError = error;
    if (this.#state === "open" || this.#closed) return;
    this.#state = "open";
    this.#since = this.#options.clock.now();
    this.#options.logger.warning("LLM {name} is down ({code}: {error}); probing it every {seconds} s", {
      name: this.#options.name,
      code: error.code,
      error: error.message,
      seconds: Math.round(this.#options.intervalMs / 1000),
    });
    this.#schedule();
    this.#emit({ state: "open", error });
  }

  /** The provider answered (a request or a probe): closes the breaker and stops probing. */
  succeed(): void {
    if (this.#state === "closed" || this.#closed) return;
    this.#state = "closed";
    this.#since = this.#options.clock.now();
    this.#cancelTimer();
    this.#nextProbe = undefined;
    this.#options.logger.info("LLM {name} answers again", { name: this.#options.name });
    this.#emit({ state: "closed" });
  }

  /** Stops probing for good (a probe in flight is aborted); the state no longer changes. */
  close(): void {
    this.#closed = true;
    this.#cancelTimer();
    this.#nextProbe = undefined;
    this.#probing?.abort(new Error("closed"));
  }

  #schedule(): void {
    if (this.#closed || this.#state === "closed") return;
    const { clock, intervalMs } = this.#options;
    this.#nextProbe = clock.now() + intervalMs;
    this.#cancelTimer = clock.after(intervalMs, () => {
      this.#nextProbe = undefined;
      void this.#probe();
    });
  }

  async #probe(): Promise<void> {
    if (this.#closed || this.#state === "closed" || this.#probing) return;
    const { clock, timeoutMs, name, logger } = this.#options;
    this.#probes++;
    const controller = this.#probing = new AbortController();
    const limit = deadline(clock, timeoutMs);
    let failure: ProviderError | undefined;
    try {
      // A probe that throws at once is a rejection like any other.
      const raced = await limit.race((async () => await this.#options.probe(controller.signal))());
      if (raced.late) {
        controller.abort(new Error("probe deadline"));
        failure = new ProviderError("timeout", `The probe of ${name} did not answer within ${timeoutMs / 1000}s`);
      }
    } catch (error) {
      if (error instanceof ProviderError) {
        failure = error;
      } else {
        logger.warning("The probe of LLM {name} failed unexpectedly: {error}", { name, error });
        failure = new ProviderError("network", `The probe of ${name} failed: ${(error as Error)?.message ?? error}`, {
          cause: error,
        });
      }
    } finally {
      limit.cancel();
      this.#probing = undefined;
    }
    // A request may have closed it meanwhile.
    if (this.#closed || this.state === "closed") return;
    if (failure === undefined) return this.succeed();
    this.#lastError = failure;
    logger.debug("LLM {name} is still down: {error}", { name, error: failure.message });
    this.#schedule();
  }

  #emit(change: BreakerChange): void {
    try {
      this.#options.onChange?.(change);
    } catch (error) {
      this.#options.logger.error("A listener of LLM {name}'s breaker failed: {error}", {
        name: this.#options.name,
        error,
      });
    }
  }
}
