/**
 * A client of homed's `GET /api/events`: what it pushes for the http channel when no request waits (reminders,
 * `output_send` to http), collected until stopped.
 *
 * @module
 */

import { readSse } from "../../src/net/sse.ts";

/** The messages pushed so far, and the stop. */
export interface EventListener {
  messages: Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * Listens on `${url}/api/events` with `headers` (a token, when homed has one).
 *
 * @example
 * ```ts
 * const events = listenToEvents("http://127.0.0.1:8080");
 * // … a reminder fires …
 * events.messages.at(-1)?.text;
 * await events.stop();
 * ```
 */
export function listenToEvents(url: string, headers: Record<string, string> = {}): EventListener {
  const messages: Array<Record<string, unknown>> = [];
  const controller = new AbortController();
  const done = (async () => {
    try {
      const response = await fetch(`${url}/api/events`, { headers, signal: controller.signal });
      if (!response.body) return;
      for await (const event of readSse(response.body)) {
        if (event.event === "message") messages.push(JSON.parse(event.data));
      }
    } catch { /* aborted */ }
  })();
  return {
    messages,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}
