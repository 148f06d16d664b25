/**
 * The one error vocabulary of an LLM call: an HTTP status, a broken connection, a silent server or an unusable
 * answer becomes the same {@link ProviderError} whichever wire (OpenAI chat completions, or a Lua adapter's) the
 * provider speaks. Every message names the server's `host[:port]` — never the URL, which may carry a key.
 *
 * Plain functions of the host, so a provider reading a reply and the runner doing the exchange word a failure
 * alike without either calling into the other.
 *
 * @module
 */

import { ProviderError } from "./provider_error.ts";
import { parseRetryAfter } from "./retry.ts";

/**
 * The server's own words from an error body (`{"error": {"message": …}}`, `{"error": "…"}`, `{"message": …}`).
 *
 * @example
 * ```ts
 * errorDetail({ error: { message: "model not found" } }); // "model not found"
 * errorDetail("<html>"); // undefined
 * ```
 */
export function errorDetail(body: unknown): string | undefined {
  const record = body as { error?: unknown; message?: unknown } | null;
  if (!record || typeof record !== "object") return undefined;
  const error = record.error as { message?: unknown } | string | undefined;
  if (typeof error === "string" && error !== "") return error;
  if (error && typeof error === "object" && typeof error.message === "string") return error.message;
  if (typeof record.message === "string") return record.message;
  return undefined;
}

/**
 * An answer homed cannot use; `detail` says what is wrong with it.
 *
 * @example
 * ```ts
 * badResponse("api.deepseek.com", "it has no choices").message;
 * // "The LLM server at api.deepseek.com sent an answer homed cannot use: it has no choices"
 * ```
 */
export function badResponse(host: string, detail: string): ProviderError {
  return new ProviderError("bad_response", `The LLM server at ${host} sent an answer homed cannot use: ${detail}`);
}

/**
 * A stream the server ended with an error of its own; retryable, like a 5xx before the first byte.
 *
 * @example
 * ```ts
 * midStreamError("api.deepseek.com", "overloaded").code; // "server"
 * ```
 */
export function midStreamError(host: string, detail: string | undefined): ProviderError {
  return new ProviderError("server", `The LLM server at ${host} failed midway through the answer: ${detail}`, {
    retryable: true,
  });
}

/**
 * No headers, or no streamed piece, within the idle timeout.
 *
 * @example
 * ```ts
 * timeoutError("api.deepseek.com", 30_000, new Error("timeout")).message;
 * // "The LLM server at api.deepseek.com did not answer within 30s"
 * ```
 */
export function timeoutError(host: string, timeoutMs: number, cause: unknown): ProviderError {
  return new ProviderError(
    "timeout",
    `The LLM server at ${host} did not answer within ${Math.round(timeoutMs / 1000)}s`,
    { retryable: true, cause },
  );
}

/**
 * An answer with an HTTP error status; the message quotes the server's own words when its error body is JSON
 * homed understands, else the start of the text. `now` (epoch ms) resolves a `Retry-After` date; `keyName` is the
 * config key a refused key is set in.
 *
 * 402 (DeepSeek's "Insufficient Balance", a spent quota) is `rate_limited` like 429 — the server will not serve this
 * account for now — but not retried: a moment later the balance is the same.
 *
 * @example
 * ```ts
 * const error = httpError("api.deepseek.com", 429, new Headers({ "retry-after": "3" }), '{"error":"slow down"}', 0);
 * error.message; // "The LLM server at api.deepseek.com is rate limiting (HTTP 429: slow down)"
 * error.retryAfterMs; // 3000
 * httpError("api.deepseek.com", 402, new Headers(), '{"error":{"message":"Insufficient Balance"}}', 0).code;
 * // "rate_limited"
 * ```
 */
export function httpError(
  host: string,
  status: number,
  headers: Headers,
  text: string,
  now: number,
  keyName = "llm.api_key",
): ProviderError {
  let said: string | undefined;
  try {
    said = errorDetail(JSON.parse(text));
  } catch { /* not JSON: the text itself */ }
  said ??= text.trim().slice(0, 300) || "no detail";
  const retryAfterMs = parseRetryAfter(headers, now);
  const extra = { status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  if (status === 401 || status === 403) {
    return new ProviderError(
      "auth",
      `The LLM server at ${host} refused the API key (HTTP ${status}: ${said}); check ${keyName}`,
      extra,
    );
  }
  if (status === 402) {
    return new ProviderError(
      "rate_limited",
      `The LLM server at ${host} refused to serve this account (HTTP 402: ${said}); top up its balance or check its quota`,
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

/**
 * Any failure as a {@link ProviderError}: one already is; else cancelled (the caller's `signal` aborted), bad JSON,
 * or a connection that could not be made or broke.
 *
 * @example
 * ```ts
 * const error = callError("127.0.0.1:11434", new TypeError("error sending request"), undefined);
 * error.code; // "network"
 * error.retryable; // true (a refused connection is not retried)
 * ```
 */
export function callError(host: string, error: unknown, signal: AbortSignal | undefined): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal?.aborted) return new ProviderError("cancelled", "The LLM call was cancelled", { cause: error });
  if (error instanceof SyntaxError) return badResponse(host, `it is not valid JSON (${error.message})`);
  // fetch rejects with a TypeError when the server cannot be reached or the connection breaks.
  const cause = (error as Error)?.cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : "";
  const message = `Cannot reach the LLM server at ${host}: ${(error as Error)?.message ?? String(error)}${cause}`;
  // Refused: nothing listens there. Another try a second later rarely finds it, and would cost every message that
  // second; the breaker's probe notices when it is back.
  const refused = /connection refused|os error 111|ECONNREFUSED/i.test(message);
  return new ProviderError("network", message, { retryable: !refused, cause: error });
}
