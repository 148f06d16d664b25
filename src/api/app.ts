/**
 * The HTTP API on hono: health, chat (JSON and SSE), the event stream, status and channels, and when configured the
 * OpenAI-compatible door at `/v1` and the MCP server at `/mcp`; every other endpoint (knowledge, memory, plugins,
 * the console, …) is mounted from `routes` (`api_setup.ts`). Every error is an {@link ApiError} turned into
 * `{"error": {"code", "message"}}` in one place (OpenAI's error shape under `/v1`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { streamSSE } from "hono/streaming";
import type { TurnEvent, TurnResult } from "../io/device.ts";
import { AsyncQueue } from "../io/async_queue.ts";
import { LaneFullError } from "../io/fair_queue.ts";
import { ApiError, statusForTurnError } from "./api_error.ts";
import { type ApiVariables, bearerAuth, type TokenOptions } from "./auth.ts";
import { bodyRuleAfterAuth, requestGuard, type RequestGuardOptions } from "./request_guard.ts";
import { readChatRequest, type UploadLimits } from "./chat_body.ts";
import type { MessageAttachment } from "../io/message_payload.ts";
import type { Identity } from "../identity/identity.ts";
import { openAiDoor, openAiError } from "./openai_door.ts";
import type { HttpDevice, HttpMessage } from "./http_device.ts";
import { ShuttingDown } from "../io/turn_error.ts";

/** Options of {@link createApi}. */
export interface ApiOptions {
  device: HttpDevice;
  /** The API tokens; none at all means every (loopback) caller is the owner. */
  tokens: TokenOptions;
  /** Host, Origin and size rules (see {@link requestGuard}). */
  guard: RequestGuardOptions;
  maxBodyBytes: number;
  logger: Logger;
  /** The body of `GET /api/status` (the daemon's is a `StatusBody`, `status_body.ts`; tests pass smaller ones). */
  status: () => object;
  /** The body of `GET /api/channels` for the caller (what is personal in it, only theirs). */
  channels: (identity: Identity) => Record<string, unknown>;
  /**
   * Images and audio in chat requests: their limits, and where their bytes are kept (the media cache). Without it a
   * chat request's attachments are refused.
   */
  uploads?: UploadLimits & { keep(bytes: Uint8Array, mime: string): Promise<{ id: string }> };
  /** `daemon.openai_api`: the OpenAI-compatible door at `/v1`, submitting to this `openai` channel. */
  openAi?: HttpDevice;
  /** The clock's `now`, for the door's `created` times. */
  now?: () => number;
  /** homed as an MCP server at `/mcp` (`mcp.serve_http`), with the caller's identity from the same tokens. */
  mcp?: (request: Request, identity: Identity) => Promise<Response>;
  /** More endpoints, mounted behind the same auth and body limit (knowledge, memory, plugins, …). */
  routes?: ReadonlyArray<(app: Hono<{ Variables: ApiVariables }>) => void>;
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
 * Builds the app.
 *
 * @example
 * ```ts
 * import { HttpDevice } from "./http_device.ts";
 * import { log } from "../log/logging.ts";
 *
 * const app = createApi({
 *   device: new HttpDevice(),
 *   tokens: { ownerToken: "", people: {} }, // no token: every (loopback) caller is the owner
 *   guard: { port: () => 8080, publicHosts: [], allowedOrigins: [] },
 *   maxBodyBytes: 262_144,
 *   logger: log("api"),
 *   status: () => ({ ok: true }),
 *   channels: () => ({ channels: [] }),
 * });
 * Deno.serve({ hostname: "127.0.0.1", port: 8080 }, app.fetch);
 * ```
 */
export function createApi(options: ApiOptions): Hono<{ Variables: ApiVariables }> {
  const app = new Hono<{ Variables: ApiVariables }>();
  const { device, logger } = options;

  app.onError((error, c) => {
    // The OpenAI-compatible door answers in OpenAI's error shape, which its clients read.
    if (error instanceof ApiError && c.req.path.startsWith("/v1/")) return c.json(openAiError(error), error.status);
    if (error instanceof ApiError) return c.json(error.toJSON(), error.status);
    logger.error("Request {method} {path} failed: {error}", { method: c.req.method, path: c.req.path, error });
    return c.json(new ApiError(500, "internal", "Internal error in homed; see its log").toJSON(), 500);
  });
  app.notFound((c) => {
    // The path is the caller's text: shown short and quoted, never kilobytes of it.
    const path = c.req.path.length > 80 ? `${c.req.path.slice(0, 77)}...` : c.req.path;
    return c.json(new ApiError(404, "not_found", `No endpoint ${c.req.method} ${JSON.stringify(path)}`).toJSON(), 404);
  });

  app.use("*", requestGuard(options.guard));
  app.get("/healthz", (c) => c.json({ ok: true }));

  const auth = bearerAuth(options.tokens);
  // A body that is not JSON, from a caller with a token: refused once who they are (and their route's trust) is known.
  const bodyRule = bodyRuleAfterAuth();
  app.use("/api/*", auth, bodyRule);
  const limitTo = (maxSize: number, what: string) =>
    bodyLimit({
      maxSize,
      onError: () => {
        throw new ApiError(413, "too_large", `The body is larger than ${what}`);
      },
    });
  const bodyLimited = limitTo(options.maxBodyBytes, `daemon.max_body_bytes (${options.maxBodyBytes} bytes)`);
  // A chat request may carry one attachment of the largest allowed size, as base64, besides the usual body.
  const uploads = options.uploads;
  const chatBytes = uploads
    ? options.maxBodyBytes + Math.ceil(Math.max(uploads.maxImageBytes, uploads.maxAudioBytes) * 4 / 3) + 16_384
    : options.maxBodyBytes;
  const chatLimited = uploads
    ? limitTo(
      chatBytes,
      `${chatBytes} bytes (daemon.max_body_bytes and one attachment of media.max_image_bytes or media.max_audio_bytes)`,
    )
    : bodyLimited;
  app.use("/api/*", (c, next) => (c.req.path.startsWith("/api/chat") ? chatLimited : bodyLimited)(c, next));

  if (options.openAi) {
    // OpenAI's clients expect a wrong key to be a 401 `invalid_api_key` (they show it as "check your API key").
    // A chat completion may carry image parts (data: URLs), as /api/chat carries an attachment.
    app.use(
      "/v1/*",
      bearerAuth(options.tokens, { status: 401, code: "invalid_api_key" }),
      bodyRule,
      (c, next) => (c.req.path === "/v1/chat/completions" ? chatLimited : bodyLimited)(c, next),
    );
    openAiDoor(options.openAi, options.now ?? Date.now)(app);
  }

  const mcp = options.mcp;
  if (mcp) {
    app.use("/mcp", auth, bodyRule, bodyLimited);
    app.all("/mcp", (c) => mcp(c.req.raw, c.get("identity")));
  }

  app.get("/api/status", (c) => c.json(options.status()));
  app.get("/api/channels", (c) => c.json(options.channels(c.get("identity"))));
  for (const mount of options.routes ?? []) mount(app);

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

  return app;
}

/** Clients `/api/events` serves at once (a household has a few; each holds a connection and a queue). */
export const EVENTS_CLIENTS_MAX = 32;
