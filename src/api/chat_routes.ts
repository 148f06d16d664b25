/**
 * The chat endpoints of the HTTP API: `POST /api/chat` (one JSON answer), `POST /api/chat/stream` (SSE as the turn
 * goes) and `GET /api/events` (the `http` channel's messages no request waits for: reminders, `output_send`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { AsyncQueue } from "../io/async_queue.ts";
import type { TurnEvent, TurnResult } from "../io/device.ts";
import { LaneFullError } from "../io/fair_queue.ts";
import type { MessageAttachment } from "../io/message_payload.ts";
import { ShuttingDown } from "../io/turn_error.ts";
import { ApiError, statusForTurnError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { readChatRequest, type UploadLimits } from "./chat_body.ts";
import type { HttpDevice, HttpMessage } from "./http_device.ts";

/** Clients `/api/events` serves at once (a household has a few; each holds a connection and a queue). */
export const EVENTS_CLIENTS_MAX = 32;

/** Options of {@link chatRoutes}. */
export interface ChatRoutesOptions {
  /** The `http` channel the requests submit to. */
  device: HttpDevice;
  /** Images and audio in chat requests, and where their bytes are kept; none: attachments are refused. */
  uploads: (UploadLimits & { keep(bytes: Uint8Array, mime: string): Promise<{ id: string }> }) | undefined;
  logger: Logger;
}

function resultBody(result: TurnResult): { reply: string; channel: string; rounds: number } {
  return { reply: result.reply, channel: result.channel, rounds: result.rounds };
}

function turnError(result: TurnResult): ApiError | undefined {
  return result.error
    ? new ApiError(statusForTurnError(result.error.code), result.error.code, result.error.message)
    : undefined;
}

/**
 * Mounts the chat endpoints.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { ApiVariables } from "./auth.ts";
 * import { HttpDevice } from "./http_device.ts";
 * import { log } from "../log/logging.ts";
 *
 * const app = new Hono<{ Variables: ApiVariables }>();
 * chatRoutes({ device: new HttpDevice(), uploads: undefined, logger: log("api") })(app);
 * ```
 */
export function chatRoutes(options: ChatRoutesOptions): (app: Hono<{ Variables: ApiVariables }>) => void {
  const { device, uploads, logger } = options;
  return (app) => {
    const submit: HttpDevice["submit"] = (message, onEvent) => {
      try {
        return device.submit(message, onEvent);
      } catch (error) {
        if (error instanceof LaneFullError) throw new ApiError(429, "too_many_waiting", error.message);
        if (error instanceof ShuttingDown) {
          throw new ApiError(503, "shutting_down", "homed is shutting down; try again shortly");
        }
        throw error;
      }
    };

    /** The chat request as a message: its attachments' bytes kept in the media cache, the message naming them. */
    const messageOf = async (c: Context<{ Variables: ApiVariables }>): Promise<HttpMessage> => {
      const body = await readChatRequest(c.req.raw, uploads ?? { maxImageBytes: 0, maxAudioBytes: 0 });
      const attachments: MessageAttachment[] = [];
      for (const upload of body.uploads) {
        const kept = await uploads!.keep(upload.bytes, upload.mime);
        attachments.push({
          kind: upload.kind,
          media: kept.id,
          size: upload.bytes.length,
          mime: upload.mime,
          ...(upload.name ? { name: upload.name } : {}),
        });
      }
      return {
        text: body.text,
        identity: c.get("identity"),
        display: body.display,
        ...(attachments.length ? { attachments } : {}),
      };
    };

    app.post("/api/chat", async (c) => {
      const result = await submit(await messageOf(c)).done;
      const error = turnError(result);
      if (error) throw error;
      return c.json(resultBody(result));
    });

    app.post("/api/chat/stream", async (c) => {
      const message = await messageOf(c);
      const events = new AsyncQueue<TurnEvent>();
      const { event } = submit(message, (turnEvent) => {
        events.push(turnEvent);
        if (turnEvent.type === "done") events.close();
      });
      return streamSSE(c, async (stream) => {
        await stream.writeSSE({ event: "start", data: JSON.stringify({ id: event.id }) });
        for (let next = await events.next(); next; next = await events.next()) {
          if (next.type === "delta") {
            await stream.writeSSE({ event: "delta", data: JSON.stringify({ text: next.text }) });
          } else if (next.type === "tool") {
            await stream.writeSSE({ event: "tool", data: JSON.stringify({ name: next.name, ok: next.ok }) });
          } else if (next.result.error) {
            await stream.writeSSE({ event: "error", data: JSON.stringify(next.result.error) });
          } else {
            await stream.writeSSE({ event: "done", data: JSON.stringify(resultBody(next.result)) });
          }
        }
      });
    });

    // Messages for the `http` channel that no request waits for (reminders, output_send): pushed as they are sent.
    app.get("/api/events", (c) => {
      if (c.get("identity").trust === "guest") {
        throw new ApiError(403, "forbidden", "Guests do not receive the household's messages");
      }
      if (device.eventClients >= EVENTS_CLIENTS_MAX) {
        throw new ApiError(503, "busy", `${EVENTS_CLIENTS_MAX} clients already listen on /api/events; try again later`);
      }
      // At most EVENTS_CLIENT_MAX_BYTES wait for one client; one that stops reading is let go, its connection closed.
      return device.eventStream(logger, c.get("identity"));
    });
  };
}
