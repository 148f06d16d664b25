/**
 * homed's one retry policy for LLM calls: 429, 5xx, network errors and timeouts are retried with exponential
 * backoff and jitter; a server's `Retry-After` wins over the backoff. The SDK's own retries are off.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import { exponentialBackoff } from "../service/backoff.ts";
import { ProviderError } from "./provider_error.ts";

/** Longest wait homed accepts from `Retry-After`; a server asking more is treated as a failure now. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Options of {@link withRetry}. */
export interface RetryOptions {
  maxRetries: number;
  clock: Clock;
  /** A number in [0, 1); `Math.random` in production. */
  random: () => number;
  signal?: AbortSignal | undefined;
  /** First backoff, doubled each attempt. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Called before each wait (for logs and accounting). */
  onRetry?: (error: ProviderError, attempt: number, delayMs: number) => void;
}

/**
 * Parses `Retry-After` (seconds or an HTTP date) or `retry-after-ms` into milliseconds.
 *
 * @example
 * ```ts
 * parseRetryAfter(new Headers({ "retry-after": "1" }), Date.now()); // 1000
 * ```
 */
export function parseRetryAfter(headers: Headers | undefined, now: number): number | undefined {
  const ms = headers?.get("retry-after-ms");
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before retry number `attempt` (1-based).
 *
 * @example
 * ```ts
 * backoffDelay(1, undefined, () => 0.5, 500, 8000); // 500
 * backoffDelay(1, 1000, () => 0.5, 500, 8000); // 1000
 * ```
 */
export function backoffDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number,
  baseDelayMs: number,
  maxDelayMs: number,
): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  return exponentialBackoff(attempt - 1, { minMs: baseDelayMs, maxMs: maxDelayMs, jitter: 0.5 }, random);
}

/**
 * Runs `call` until it succeeds, fails with a non-retryable error, or retries run out.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { ProviderError } from "./provider_error.ts";
 *
 * const answer = await withRetry(async (attempt) => {
 *   if (attempt === 0) throw new ProviderError("rate_limited", "Too many requests", { status: 429, retryable: true });
 *   return "ok";
 * }, { maxRetries: 2, clock: systemClock, random: Math.random }); // "ok", after one wait of 250–750 ms
 * ```
 */
export async function withRetry<T>(call: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const base = options.baseDelayMs ?? 500;
  const max = options.maxDelayMs ?? 8_000;
  for (let attempt = 0;; attempt++) {
    try {
      return await call(attempt);
    } catch (error) {
      if (!(error instanceof ProviderError) || !error.retryable || attempt >= options.maxRetries) throw error;
      if (error.retryAfterMs !== undefined && error.retryAfterMs > MAX_RETRY_AFTER_MS) throw error;
      const delay = backoffDelay(attempt + 1, error.retryAfterMs, options.random, base, max);
      options.onRetry?.(error, attempt + 1, delay);
      await options.clock.sleep(delay, options.signal);
    }
  }
}
