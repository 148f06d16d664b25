/**
 * The HTTP exchange every provider shares: one request, sent under the idle timeout, retried by the one policy
 * ({@link withRetry}), counted in the usage totals, its transport and HTTP failures mapped to one error vocabulary
 * (`call_errors.ts`). A provider hands over the request as data and one hook that reads a 2xx answer; the runner
 * never calls into the provider otherwise.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { callError, httpError, timeoutError } from "./call_errors.ts";
import { IdleTimeout } from "./idle_timeout.ts";
import { type ChatOptions, type ChatResponse, emptyUsageTotals, type Usage, type UsageTotals } from "./provider.ts";
import { ProviderError } from "./provider_error.ts";
import { withRetry } from "./retry.ts";

/** Options of {@link CallRunner}. */
export interface CallRunnerOptions {
  /** The server's `host[:port]`, named in every error. */
  host: string;
  /** Idle timeout: longest wait for the answer's headers, and between two streamed pieces (`llm.timeout`). */
  timeoutMs: number;
  maxRetries: number;
  clock: Clock;
  random: () => number;
  logger: Logger;
  /** The config key of the API key, named when the server refuses it (default `llm.api_key`). */
  keyName?: string;
}

/** Longest wait a server may ask for (`Retry-After`) before a call with `failFast` gives up instead of waiting. */
export const FAIL_FAST_WAIT_MS = 8_000;

/** The request a provider built; sent as is on every attempt. */
export interface HttpRequest {
  url: string | URL;
  method: string;
  /** Sent exactly as given: the wire decides its own `content-type`. */
  headers: Record<string, string>;
  body?: string | undefined;
}

/** A 2xx answer whose headers arrived, handed to the provider to read. */
export interface Reply {
  response: Response;
  /**
   * Where streamed text goes; `undefined` when the whole answer was asked for — the idle timeout is then already
   * off, since it covers only the wait for the headers.
   */
  onDelta: ((text: string) => void) | undefined;
  /** Records that a streamed piece arrived, so the idle timeout measures the gap from it. */
  touch: () => void;
}

/**
 * Reads a 2xx answer into the chat response: the one hook into the provider, since only it knows the wire's answer
 * shape. It runs inside the attempt, so a stream that breaks or stalls midway is retried (or timed out) like a
 * failed request.
 */
export type ReadReply = (reply: Reply) => Promise<ChatResponse>;

/** Runs provider calls: attempts under the idle timeout, retried by the one policy, counted, their errors mapped. */
export class CallRunner {
  readonly host: string;
  #options: CallRunnerOptions;
  #totals: UsageTotals = emptyUsageTotals();

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   *
   * const runner = new CallRunner({
   *   host: "api.deepseek.com",
   *   timeoutMs: 30_000,
   *   maxRetries: 2,
   *   clock: systemClock,
   *   random: Math.random,
   *   logger: log("llm"),
   * });
   * const answer = await runner.exchange({
   *   url: "https://api.deepseek.com/v1/chat/completions",
   *   method: "POST",
   *   headers: { "content-type": "application/json", authorization: `Bearer ${Deno.env.get("DEEPSEEK_API_KEY")}` },
   *   body: JSON.stringify({ model: "deepseek-v4-flash", messages: [{ role: "user", content: "hi" }] }),
   * }, {}, async ({ response }) => {
   *   const { choices: [choice] } = await response.json();
   *   return { content: choice.message.content, toolCalls: [], finishReason: choice.finish_reason };
   * });
   * ```
   */
  constructor(options: CallRunnerOptions) {
    this.host = options.host;
    this.#options = options;
  }

  /** Running token and request totals. */
  usage(): UsageTotals {
    return { ...this.#totals };
  }

  /** Counts a call refused before any request (no key, say) as an error, and returns that error to throw. */
  refuseError(error: ProviderError): ProviderError {
    this.#totals.errors++;
    return error;
  }

  /**
   * Sends `request` until an attempt succeeds or a failure is final; `readReply` reads each 2xx answer. Streamed
   * when `options.onDelta` is given. A stream that already showed text is never retried (the user saw it); its
   * error says the answer was cut off.
   */
  async exchange(request: HttpRequest, options: ChatOptions, readReply: ReadReply): Promise<ChatResponse> {
    let emitted = false;
    const onDelta = options.onDelta
      ? (text: string) => {
        emitted = true;
        options.onDelta!(text);
      }
      : undefined;
    const started = this.#options.clock.monotonic();
    try {
      const response = await withRetry(async () => {
        this.#totals.requests++;
        try {
          return await this.#attempt(request, options.signal, onDelta, readReply);
        } catch (error) {
          const mapped = callError(this.host, error, options.signal);
          if (emitted && mapped.retryable) {
            throw new ProviderError(mapped.code, `${mapped.message} (the answer was cut off midway)`, {
              ...(mapped.status === undefined ? {} : { status: mapped.status }),
              cause: error,
            });
          }
          // Another provider answers sooner than a retry of a silent server, or a long wait the server asks for.
          if (options.failFast && mapped.retryable && failsFast(mapped)) throw final(mapped, error);
          throw mapped;
        }
      }, {
        maxRetries: this.#options.maxRetries,
        clock: this.#options.clock,
        random: this.#options.random,
        signal: options.signal,
        onRetry: (error, number, delayMs) => {
          this.#totals.retries++;
          this.#options.logger.warning("LLM call failed ({code}), retry {attempt} in {delayMs} ms", {
            code: error.code,
            attempt: number,
            delayMs,
          });
        },
      });
      if (response.usage) this.#count(response.usage);
      this.#options.logger.debug("LLM answered in {ms} ms: {tools} tool calls, {tokens} tokens", {
        ms: Math.round(this.#options.clock.monotonic() - started),
        tools: response.toolCalls.length,
        tokens: response.usage?.totalTokens ?? 0,
      });
      return response;
    } catch (error) {
      this.#totals.errors++;
      // A backoff sleep that was cancelled rejects with the signal's reason, not a ProviderError.
      throw callError(this.host, error, options.signal);
    }
  }

  /** One request and the reading of its answer, under a fresh idle timeout. */
  async #attempt(
    request: HttpRequest,
    signal: AbortSignal | undefined,
    onDelta: ((text: string) => void) | undefined,
    readReply: ReadReply,
  ): Promise<ChatResponse> {
    const idle = new IdleTimeout(this.#options.timeoutMs, this.#options.clock);
    const combined = signal ? AbortSignal.any([signal, idle.controller.signal]) : idle.controller.signal;
    try {
      const response = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: combined,
      });
      if (!response.ok) throw await this.#httpError(response);
      // The idle timeout covers the wait for the headers; a long answer's body is bounded by the turn deadline.
      if (!onDelta) idle.clear();
      const answer = await readReply({ response, onDelta, touch: () => idle.touch() });
      // A cut-off stream is never a complete answer.
      if (combined.aborted) throw combined.reason;
      return answer;
    } catch (error) {
      if (idle.fired) throw timeoutError(this.host, this.#options.timeoutMs, error);
      throw error;
    } finally {
      idle.clear();
    }
  }

  /**
   * One request that only has to succeed (a probe: `GET /models`): 2xx resolves, anything else rejects with the same
   * error vocabulary as a chat. Never retried, not counted in the usage totals; the idle timeout bounds the wait for
   * the headers, the body is not read.
   */
  async check(request: HttpRequest, signal: AbortSignal): Promise<void> {
    const idle = new IdleTimeout(this.#options.timeoutMs, this.#options.clock);
    try {
      const response = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: AbortSignal.any([signal, idle.controller.signal]),
      });
      if (!response.ok) throw await this.#httpError(response);
      await response.body?.cancel();
    } catch (error) {
      if (idle.fired) throw timeoutError(this.host, this.#options.timeoutMs, error);
      throw callError(this.host, error, signal);
    } finally {
      idle.clear();
    }
  }

  async #httpError(response: Response): Promise<ProviderError> {
    const text = await response.text().catch(() => "");
    const { clock, keyName } = this.#options;
    return httpError(this.host, response.status, response.headers, text, clock.now(), keyName);
  }

  #count(usage: Usage): void {
    this.#totals.promptTokens += usage.promptTokens;
    this.#totals.completionTokens += usage.completionTokens;
    this.#totals.totalTokens += usage.totalTokens;
    this.#totals.cacheHitTokens += usage.cacheHitTokens;
    this.#totals.cacheMissTokens += usage.cacheMissTokens;
  }
}

/** Whether a retryable failure is one a call with `failFast` does not wait out: a timeout, or a long `Retry-After`. */
function failsFast(error: ProviderError): boolean {
  return error.code === "timeout" || (error.retryAfterMs ?? 0) > FAIL_FAST_WAIT_MS;
}

/** `error` as a final one (not retried). */
function final(error: ProviderError, cause: unknown): ProviderError {
  return new ProviderError(error.code, error.message, {
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    cause,
  });
}
