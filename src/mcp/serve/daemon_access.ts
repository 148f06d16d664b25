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
import { AnswerError, chatAnswer, eventData, field } from "./daemon_answers.ts";
import { DaemonExchange } from "./daemon_exchange.ts";
import type { ButlerAccess } from "./homed_tools.ts";

export { ButlerApiError } from "./butler_api_error.ts";

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
  const daemon = new DaemonExchange(base, options.fetch ?? fetch, options.clock ?? systemClock, options);
  const lookup = (path: string, query: string, k: number | undefined) =>
    `${path}?${new URLSearchParams({ q: query, ...(k === undefined ? {} : { k: String(k) }) })}`;

  return {
    async chat(text, chatOptions = {}) {
      if (chatOptions.onText) {
        const timeoutMs = options.chatTimeoutMs ?? options.timeoutMs;
        return await streamedChat(daemon, timeoutMs, text, chatOptions.onText, chatOptions.signal);
      }
      const body = await daemon.call("POST", "/api/chat", options.chatTimeoutMs ?? options.timeoutMs, { text });
      return chatAnswer(body, "POST /api/chat");
    },
    async recall(query, k) {
      const body = await daemon.call("GET", lookup("/api/memory/documents", query, k), options.timeoutMs);
      return field(body, "documents", "GET /api/memory/documents");
    },
    async searchKnowledge(query, k) {
      const body = await daemon.call("GET", lookup("/api/knowledge/search", query, k), options.timeoutMs);
      return field(body, "hits", "GET /api/knowledge/search");
    },
    async schedules() {
      return field(await daemon.call("GET", "/api/schedules", options.timeoutMs), "schedules", "GET /api/schedules");
    },
  };
}

/** A chat read from `/api/chat/stream`: the deltas to `onText` as they come, then the `done` event's reply. */
function streamedChat(
  daemon: DaemonExchange,
  timeoutMs: number,
  text: string,
  onText: (delta: string) => void,
  signal: AbortSignal | undefined,
): Promise<{ reply: string; channel: string }> {
  const request = {
    method: "POST" as const,
    path: "/api/chat/stream",
    timeoutMs,
    body: { text },
    accept: "text/event-stream",
  };
  return daemon.exchange(signal ? { ...request, signal } : request, async (response, name) => {
    if (!response.ok || !response.body) throw daemon.refusal(response.status, await response.text(), name);
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
