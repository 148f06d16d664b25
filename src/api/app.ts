/**
 * The HTTP API on hono: health, chat (JSON and SSE), the event stream, status and channels, and when configured the
 * OpenAI-compatible door at `/v1` and the MCP server at `/mcp`; every other endpoint (knowledge, memory, plugins,
 * the console, …) is mounted from `routes` (`api_setup.ts`). Every error is an {@link ApiError} turned into
 * `{"error": {"code", "message"}}` in one place (OpenAI's error shape under `/v1`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "./api_error.ts";
import { type ApiVariables, bearerAuth, type TokenOptions } from "./auth.ts";
import { bodyRuleAfterAuth, requestGuard, type RequestGuardOptions } from "./request_guard.ts";
import type { UploadLimits } from "./chat_body.ts";
import { chatRoutes } from "./chat_routes.ts";
import type { Identity } from "../identity/identity.ts";
import { openAiDoor, openAiError } from "./openai_door.ts";
import type { HttpDevice } from "./http_device.ts";

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

  chatRoutes({ device, uploads, logger })(app);

  return app;
}
