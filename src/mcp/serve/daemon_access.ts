/**
 * {@link ButlerAccess} over a running daemon's HTTP API, for `homed mcp serve`: `POST /api/chat` (or
 * `POST /api/chat/stream`, to pass the reply on as it is written), `GET /api/memory/documents`,
 * `GET /api/knowledge/search` and `GET /api/schedules`, each under a deadline. The bearer token is the caller's
 * identity and trust, so the daemon applies its trust rules itself: this side never
 * decides who may see what, it only passes the daemon's refusal on (a guest's 403 becomes the tool's error).
 *
 * @module
 */

import { type Clock, systemClock } from "../../clock.ts";
import { readSse } from "../../net/sse.ts";
import type { ButlerAccess } from "./homed_tools.ts";

/** Options of {@link httpButlerAccess}. */
export interface HttpButlerAccessOptions {
  /** The daemon's base URL, e.g. `http://127.0.0.1:8080` (a path prefix behind a proxy is kept). */
  baseUrl: string;
  /** An API token (`daemon.api_token` or one of `daemon.api_tokens`); empty sends none (a tokenless, loopback daemon). */
  token: string;
  /** The longest wait for a lookup's whole answer, in milliseconds. */
  timeoutMs: number;
  /** The longest wait for a chat turn, in milliseconds (a turn with tools takes longer than a lookup); `timeoutMs` if unset. */
  chatTimeoutMs?: number;
  /** The fetch to use (tests pass one); the global `fetch` by default. */
  fetch?: typeof fetch;
  /** Where the deadlines' timers come from; the system clock by default. */
  clock?: Pick<Clock, "after">;
}

/**
 * The daemon answered a call with an error status: its message, and the status and code it gave.
 *
 * @example
 * ```ts
 * import type { ButlerAccess } from "./homed_tools.ts";
 *
 * declare const access: ButlerAccess;
 * try {
 *   await access.recall("umbrella");
 * } catch (error) {
 *   if (error instanceof ButlerApiError && error.status === 403) console.error(error.message); // "Inspecting memory needs…"
 * }
 * ```
 */
export class ButlerApiError extends Error {
  override readonly name = "ButlerApiError";
  /** The status, the API's error code (`forbidden`, `unauthorized`, …; `http` when the body was not the API's) and message. */
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** The time ran out before the daemon's answer was read whole. */
class DeadlineExceeded extends Error {}

/** The caller stopped waiting (its `signal` aborted). */
class WaitStopped extends Error {}

/** An answer of the daemon that ends the call (not the API's shape, or a failed turn): passed on as it is. */
class AnswerError extends Error {}

/** The `error` of the API's error body (`{"error": {"code", "message"}}`), when the body is one. */
function apiError(text: string): { code: string; message: string } | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (body === null || typeof body !== "object" || !("error" in body)) return undefined;
    const error: unknown = body.error;
    if (error === null || typeof error !== "object") return undefined;
    const code = "code" in error && typeof error.code === "string" ? error.code : "error";
    const message = "message" in error && typeof error.message === "string" ? error.message : undefined;
    return message === undefined ? undefined : { code, message };
  } catch {
    return undefined;
  }
}

/** The field `name` of an answer's JSON object, or an error naming the call and the field. */
function field(body: unknown, name: string, call: string): unknown {
  if (body === null || typeof body !== "object" || !(name in body)) {
    throw new AnswerError(
      `homed's answer to ${call} has no "${name}" field; is the daemon the same version as this homed?`,
    );
  }
  return (body as Record<string, unknown>)[name];
}

/** A chat answer's reply and channel (`POST /api/chat`'s body, `/api/chat/stream`'s `done` event). */
function chatAnswer(body: unknown, call: string): { reply: string; channel: string } {
  const reply = field(body, "reply", call);
  const channel = field(body, "channel", call);
  if (typeof reply !== "string" || typeof channel !== "string") {
    throw new AnswerError(`homed's answer to ${call} has a reply or channel that is not text`);
  }
  return { reply, channel };
}

/** One event's JSON data, or an error naming the stream. */
function eventData(data: string, call: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(data);
    if (value !== null && typeof value === "object") return value as Record<string, unknown>;
  } catch { /* said below */ }
  throw new AnswerError(`homed's stream for ${call} has an event that is not a JSON object: ${data.slice(0, 120)}`);
}

/**
 * Access to the daemon at `baseUrl` as the holder of `token`. A call fails with a {@link ButlerApiError} carrying the
 * API's message when the daemon refuses (401, 403, 429, …), and with an `Error` saying so when it cannot be reached,
 * does not answer before the deadline, or answers something that is not the API's JSON. A chat with `onText` is read
 * from `POST /api/chat/stream`, its reply's text passed on as it comes.
 *
 * @example
 * ```ts
 * const access = httpButlerAccess({
 *   baseUrl: "http://127.0.0.1:8080",
 *   token: Deno.env.get("HOMED_API_TOKEN") ?? "",
 *   timeoutMs: 15_000,
 *   chatTimeoutMs: 300_000,
 * });
 * const { reply } = await access.chat("Is the back door locked?");
 * ```
 */
export function httpButlerAccess(options: HttpButlerAccessOptions): ButlerAccess {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? fetch;
  const clock = options.clock ?? systemClock;

  /** The daemon's refusal of a call, as an error. */
  function refusal(status: number, text: string, name: string): ButlerApiError {
    const refused = apiError(text);
    if (!refused) {
      return new ButlerApiError(status, "http", `homed answered ${name} with HTTP ${status}: ${text.slice(0, 200)}`);
    }
    // A missing token is the one refusal the MCP side can fix itself: name where the token comes from.
    const hint = status === 401 && !options.token ? " (set HOMED_API_TOKEN to one of homed's API tokens)" : "";
    return new ButlerApiError(status, refused.code, `${refused.message}${hint}`);
  }

  /**
   * One request, answered and read by `read` before the deadline (and before `signal` aborts). `read`'s
   * {@link ButlerApiError} or {@link AnswerError} is passed on; any other failure means the daemon was not reached.
   */
  async function exchange<T>(
    request: {
      method: "GET" | "POST";
      path: string;
      timeoutMs: number;
      body?: unknown;
      accept: string;
      signal?: AbortSignal;
    },
    read: (response: Response, name: string) => Promise<T>,
  ): Promise<T> {
    const { method, path, timeoutMs, body, accept, signal } = request;
    const name = `${method} ${path.replace(/\?.*$/, "")}`;
    const controller = new AbortController();
    const cancel = clock.after(timeoutMs, () => controller.abort(new DeadlineExceeded()));
    const stop = () => controller.abort(new WaitStopped());
    if (signal?.aborted) stop();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const response = await doFetch(`${base}${path}`, {
        method,
        headers: {
          accept,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
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
  async function call(method: "GET" | "POST", path: string, timeoutMs: number, body?: unknown): Promise<unknown> {
    return await exchange({ method, path, timeoutMs, body, accept: "application/json" }, async (response, name) => {
      const text = await response.text();
      if (!response.ok) throw refusal(response.status, text, name);
      try {
        return JSON.parse(text);
      } catch {
        throw new AnswerError(`homed's answer to ${name} is not JSON: ${text.slice(0, 120)}`);
      }
    });
  }

  /** A chat read from `/api/chat/stream`: the deltas to `onText` as they come, then the `done` event's reply. */
  function streamedChat(text: string, onText: (delta: string) => void, signal: AbortSignal | undefined) {
    const timeoutMs = options.chatTimeoutMs ?? options.timeoutMs;
    const request = {
      method: "POST" as const,
      path: "/api/chat/stream",
      timeoutMs,
      body: { text },
      accept: "text/event-stream",
    };
    return exchange(signal ? { ...request, signal } : request, async (response, name) => {
      if (!response.ok || !response.body) throw refusal(response.status, await response.text(), name);
      for await (const event of readSse(response.body)) {
        if (event.event === "delta") {
          const delta = eventData(event.data, name).text;
          if (typeof delta === "string") onText(delta);
        } else if (event.event === "error") {
          const message = eventData(event.data, name).message;
          throw new AnswerError(typeof message === "string" ? message : `homed's turn for ${name} failed`);
        } else if (event.event === "done") {
          return chatAnswer(eventData(event.data, name), name);
        }
      }
      throw new AnswerError(`homed's stream for ${name} ended before the turn did`);
    });
  }

  const lookup = (path: string, query: string, k: number | undefined) =>
    `${path}?${new URLSearchParams({ q: query, ...(k === undefined ? {} : { k: String(k) }) })}`;

  return {
    async chat(text, chatOptions = {}) {
      if (chatOptions.onText) return await streamedChat(text, chatOptions.onText, chatOptions.signal);
      const body = await call("POST", "/api/chat", options.chatTimeoutMs ?? options.timeoutMs, { text });
      return chatAnswer(body, "POST /api/chat");
    },
    async recall(query, k) {
      const body = await call("GET", lookup("/api/memory/documents", query, k), options.timeoutMs);
      return field(body, "documents", "GET /api/memory/documents");
    },
    async searchKnowledge(query, k) {
      const body = await call("GET", lookup("/api/knowledge/search", query, k), options.timeoutMs);
      return field(body, "hits", "GET /api/knowledge/search");
    },
    async schedules() {
      return field(await call("GET", "/api/schedules", options.timeoutMs), "schedules", "GET /api/schedules");
    },
  };
}
