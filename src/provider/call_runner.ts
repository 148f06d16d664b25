/**
 * What every HTTP provider shares: one retry policy ({@link withRetry}), the idle timeout on the injected clock,
 * usage totals, and one error vocabulary — an HTTP status, a broken connection or a silent server becomes the same
 * {@link ProviderError} whichever wire (OpenAI chat completions, or a Lua adapter's) the provider speaks.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { type ChatOptions, type ChatResponse, emptyUsageTotals, type Usage, type UsageTotals } from "./provider.ts";
import { ProviderError } from "./provider_error.ts";
import { parseRetryAfter, withRetry } from "./retry.ts";

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
}

/**
 * Aborts when nothing arrived for `ms` on the injected clock. `touch()` only records the time (it runs on every
 * streamed piece); the one timer re-arms itself for the remainder when it fires early.
 */
export class IdleTimeout {
  readonly controller = new AbortController();
  fired = false;
  #cancel: () => void = () => {};
  #last: number;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const idle = new IdleTimeout(30_000, systemClock);
   * const response = await fetch("https://api.deepseek.com/v1/models", { signal: idle.controller.signal });
   * idle.touch(); // on every streamed piece
   * idle.clear(); // when the answer is complete
   * idle.fired; // false
   * ```
   */
  constructor(private readonly ms: number, private readonly clock: Clock) {
    this.#last = clock.monotonic();
    this.#arm(ms);
  }

  #arm(delay: number): void {
    this.#cancel = this.clock.after(delay, () => {
      const idle = this.clock.monotonic() - this.#last;
      if (idle < this.ms) return this.#arm(this.ms - idle);
      this.fired = true;
      this.controller.abort(new Error("timeout"));
    });
  }

  touch(): void {
    this.#last = this.clock.monotonic();
  }

  clear(): void {
    this.#cancel();
  }
}

/** What one attempt gets: the signal to pass to `fetch`, the idle timeout to touch, and where streamed text goes. */
export interface Attempt {
  signal: AbortSignal;
  idle: IdleTimeout;
  onDelta: ((text: string) => void) | undefined;
}

/** The server's own words from an error body (`{"error": {"message": …}}`, `{"error": "…"}`, `{"message": …}`). */
export function errorDetail(body: unknown): string | undefined {
  const record = body as { error?: unknown; message?: unknown } | null;
  if (!record || typeof record !== "object") return undefined;
  const error = record.error as { message?: unknown } | string | undefined;
  if (typeof error === "string" && error !== "") return error;
  if (error && typeof error === "object" && typeof error.message === "string") return error.message;
  if (typeof record.message === "string") return record.message;
  return undefined;
}

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
   * const url = "https://api.deepseek.com/v1/chat/completions";
   * const headers = { authorization: `Bearer ${Deno.env.get("DEEPSEEK_API_KEY")}` };
   * const body = JSON.stringify({ model: "deepseek-v4-flash", messages: [{ role: "user", content: "hi" }] });
   * const response = await runner.run({}, async (attempt) => {
   *   const reply = await postJson(runner, url, headers, body, attempt.signal);
   *   const { choices: [choice] } = await reply.json();
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
   * Runs `attempt` until it succeeds or a failure is final. A stream that already showed text is never retried (the
   * user saw it); its error says the answer was cut off.
   */
  async run(options: ChatOptions, attempt: (context: Attempt) => Promise<ChatResponse>): Promise<ChatResponse> {
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
          return await this.#once(options.signal, onDelta, attempt);
        } catch (error) {
          const mapped = this.mapError(error, options.signal);
          if (emitted && mapped.retryable) {
            throw new ProviderError(mapped.code, `${mapped.message} (the answer was cut off midway)`, {
              ...(mapped.status === undefined ? {} : { status: mapped.status }),
              cause: error,
            });
          }
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
      if (error instanceof ProviderError) throw error;
      throw this.mapError(error, options.signal);
    }
  }

  async #once(
    signal: AbortSignal | undefined,
    onDelta: ((text: string) => void) | undefined,
    attempt: (context: Attempt) => Promise<ChatResponse>,
  ): Promise<ChatResponse> {
    const idle = new IdleTimeout(this.#options.timeoutMs, this.#options.clock);
    const combined = signal ? AbortSignal.any([signal, idle.controller.signal]) : idle.controller.signal;
    try {
      const response = await attempt({ signal: combined, idle, onDelta });
      // A cut-off stream is never a complete answer.
      if (combined.aborted) throw combined.reason;
      return response;
    } catch (error) {
      if (idle.fired) {
        throw new ProviderError(
          "timeout",
          `The LLM server at ${this.host} did not answer within ${Math.round(this.#options.timeoutMs / 1000)}s`,
          { retryable: true, cause: error },
        );
      }
      throw error;
    } finally {
      idle.clear();
    }
  }

  #count(usage: Usage): void {
    this.#totals.promptTokens += usage.promptTokens;
    this.#totals.completionTokens += usage.completionTokens;
    this.#totals.totalTokens += usage.totalTokens;
    this.#totals.cacheHitTokens += usage.cacheHitTokens;
    this.#totals.cacheMissTokens += usage.cacheMissTokens;
  }

  /** An answer homed cannot use; `detail` says what is wrong with it. */
  badResponse(detail: string): ProviderError {
    return new ProviderError(
      "bad_response",
      `The LLM server at ${this.host} sent an answer homed cannot use: ${detail}`,
    );
  }

  /**
   * An answer with an HTTP error status, as the error vocabulary names it; `detail` is the server's own words when
   * the wire's error body was understood.
   */
  httpError(status: number, headers: Headers, text: string, detail?: string): ProviderError {
    const host = this.host;
    let said = detail;
    if (said === undefined) {
      try {
        said = errorDetail(JSON.parse(text));
      } catch { /* not JSON: the text itself */ }
    }
    said ??= text.trim().slice(0, 300) || "no detail";
    const retryAfterMs = parseRetryAfter(headers, this.#options.clock.now());
    const extra = { status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    if (status === 401 || status === 403) {
      return new ProviderError(
        "auth",
        `The LLM server at ${host} refused the API key (HTTP ${status}: ${said}); check llm.api_key`,
        extra,
      );
    }
    if (status === 429) {
      return new ProviderError("rate_limited", `The LLM server at ${host} is rate limiting (HTTP 429: ${said})`, {
        ...extra,
        retryable: true,
      });
    }
    // 529 is Anthropic's "overloaded".
    if (status >= 500) {
      return new ProviderError("server", `The LLM server at ${host} failed (HTTP ${status}: ${said})`, {
        ...extra,
        retryable: true,
      });
    }
    return new ProviderError(
      "bad_request",
      `The LLM server at ${host} rejected the request (HTTP ${status}: ${said})`,
      extra,
    );
  }

  /** Any failure as a {@link ProviderError}: cancelled, bad JSON, or a connection that could not be made or broke. */
  mapError(error: unknown, signal: AbortSignal | undefined): ProviderError {
    if (error instanceof ProviderError) return error;
    if (signal?.aborted) return new ProviderError("cancelled", "The LLM call was cancelled", { cause: error });
    if (error instanceof SyntaxError) return this.badResponse(`it is not valid JSON (${error.message})`);
    // fetch rejects with a TypeError when the server cannot be reached or the connection breaks.
    const cause = (error as Error)?.cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : "";
    return new ProviderError(
      "network",
      `Cannot reach the LLM server at ${this.host}: ${(error as Error)?.message ?? String(error)}${cause}`,
      { retryable: true, cause: error },
    );
  }
}

/**
 * POSTs a JSON body; a status other than 2xx becomes the runner's {@link CallRunner.httpError}.
 *
 * @example
 * ```ts
 * declare const runner: CallRunner;
 * declare const attempt: Attempt;
 *
 * const response = await postJson(
 *   runner,
 *   "https://api.deepseek.com/v1/chat/completions",
 *   { authorization: `Bearer ${Deno.env.get("DEEPSEEK_API_KEY")}` },
 *   JSON.stringify({ model: "deepseek-v4-flash", messages: [{ role: "user", content: "hi" }] }),
 *   attempt.signal,
 * );
 * ```
 */
export async function postJson(
  runner: CallRunner,
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  describeError?: (status: number, text: string) => string | undefined,
): Promise<Response> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
    signal,
  });
  if (response.ok) return response;
  const text = await response.text().catch(() => "");
  throw runner.httpError(response.status, response.headers, text, describeError?.(response.status, text));
}
