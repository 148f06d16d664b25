/**
 * One request of `homed mcp serve` to the daemon's HTTP API, answered and read whole before a deadline (and before the
 * caller stops waiting), with the caller's bearer token. Failures become errors that say which: the daemon's refusal
 * ({@link ButlerApiError}, with the API's message), an answer that is not what was asked for (`AnswerError`, passed
 * on), the time running out, the wait stopped, or the daemon not reached at all.
 *
 * @module
 */

import type { Clock } from "../../clock.ts";
import { ButlerApiError } from "./butler_api_error.ts";
import { AnswerError, apiError } from "./daemon_answers.ts";

/** The time ran out before the daemon's answer was read whole. */
class DeadlineExceeded extends Error {}

/** The caller stopped waiting (its `signal` aborted). */
class WaitStopped extends Error {}

/** One request: its method and path, its deadline, its JSON body, what it accepts, and who may stop the wait. */
export interface DaemonRequest {
  method: "GET" | "POST";
  path: string;
  timeoutMs: number;
  body?: unknown;
  accept: string;
  signal?: AbortSignal;
}

/**
 * The daemon at one base URL, asked as the holder of one token.
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 *
 * const daemon = new DaemonExchange("http://127.0.0.1:8080", fetch, systemClock, { token: "" });
 * await daemon.call("GET", "/api/schedules", 15_000); // { schedules: […] }
 * ```
 */
export class DaemonExchange {
  #base: string;
  #fetch: typeof fetch;
  #clock: Pick<Clock, "after">;
  #auth: { readonly token: string };

  /** `base` without a trailing slash; `auth.token` empty sends none (a tokenless, loopback daemon). */
  constructor(base: string, doFetch: typeof fetch, clock: Pick<Clock, "after">, auth: { readonly token: string }) {
    this.#base = base;
    this.#fetch = doFetch;
    this.#clock = clock;
    this.#auth = auth;
  }

  /** The daemon's refusal of a call, as an error. */
  refusal(status: number, text: string, name: string): ButlerApiError {
    const refused = apiError(text);
    if (!refused) {
      return new ButlerApiError(status, "http", `homed answered ${name} with HTTP ${status}: ${text.slice(0, 200)}`);
    }
    // A missing token is the one refusal the MCP side can fix itself: name where the token comes from.
    const hint = status === 401 && !this.#auth.token ? " (set HOMED_API_TOKEN to one of homed's API tokens)" : "";
    return new ButlerApiError(status, refused.code, `${refused.message}${hint}`);
  }

  /**
   * One request, answered and read by `read` before the deadline (and before `signal` aborts). `read`'s
   * {@link ButlerApiError} or `AnswerError` is passed on; any other failure means the daemon was not reached.
   */
  async exchange<T>(request: DaemonRequest, read: (response: Response, name: string) => Promise<T>): Promise<T> {
    const { method, path, timeoutMs, body, accept, signal } = request;
    const base = this.#base;
    const name = `${method} ${path.replace(/\?.*$/, "")}`;
    const controller = new AbortController();
    const cancel = this.#clock.after(timeoutMs, () => controller.abort(new DeadlineExceeded()));
    const stop = () => controller.abort(new WaitStopped());
    if (signal?.aborted) stop();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const response = await this.#fetch(`${base}${path}`, {
        method,
        headers: {
          accept,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(this.#auth.token ? { authorization: `Bearer ${this.#auth.token}` } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: controller.signal,
      });
      return await read(response, name);
    } catch (error) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
      if (reason instanceof DeadlineExceeded) {
        throw new Error(`homed at ${base} did not answer ${name} within ${timeoutMs} ms`);
      }
      if (reason instanceof WaitStopped) throw new Error(`The wait for homed's answer to ${name} was stopped`);
      if (error instanceof ButlerApiError || error instanceof AnswerError) throw error;
      throw new Error(
        `Cannot reach homed at ${base} (${error instanceof Error ? error.message : String(error)}); is it running?`,
        { cause: error },
      );
    } finally {
      cancel();
      signal?.removeEventListener("abort", stop);
    }
  }

  /** One call: its answer's JSON, everything (the headers and the body) read before the deadline. */
  async call(method: "GET" | "POST", path: string, timeoutMs: number, body?: unknown): Promise<unknown> {
    return await this.exchange(
      { method, path, timeoutMs, body, accept: "application/json" },
      async (response, name) => {
        const text = await response.text();
        if (!response.ok) throw this.refusal(response.status, text, name);
        try {
          return JSON.parse(text);
        } catch {
          throw new AnswerError(`homed's answer to ${name} is not JSON: ${text.slice(0, 120)}`);
        }
      },
    );
  }
}
