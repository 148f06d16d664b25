/**
 * The OpenAI-compatible door (`daemon.openai_api`): `GET /v1/models` and `POST /v1/chat/completions`, streamed and
 * not, so Open WebUI, phone apps and Home Assistant's OpenAI-style conversation integrations talk to the one butler.
 * `Authorization: Bearer <a homed API token>` is the person (their trust applies); the message joins the one
 * conversation from `openai:<their name>`. Only the request's last user message is taken: the client's own history
 * and system prompt are not the butler's memory or persona. Errors come in OpenAI's shape
 * (`{"error": {"message", "type", "code"}}`), a wrong key as 401.
 *
 * @module
 */

import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { HttpDevice } from "../devices/http/http_device.ts";
import type { TurnEvent } from "../io/device.ts";
import { AsyncQueue } from "../io/async_queue.ts";
import { LaneFullError } from "../io/fair_queue.ts";
import { ShuttingDown } from "../io/turn_error.ts";
import { ApiError, statusForTurnError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { MAX_TEXT_CHARS } from "./chat_body.ts";

/** The one model the door offers: the butler. */
const MODEL = "homed";

/**
 * An error as OpenAI's API words it.
 *
 * @example
 * ```ts
 * import { ApiError } from "./api_error.ts";
 *
 * openAiError(new ApiError(401, "unauthorized", "This endpoint needs an Authorization: Bearer <api_token> header"));
 * // { error: { message: "This endpoint needs …", type: "authentication_error", code: "unauthorized" } }
 * ```
 */
export function openAiError(error: ApiError): { error: { message: string; type: string; code: string } } {
  const type = error.status === 401 || error.status === 403
    ? "authentication_error"
    : error.status === 429
    ? "rate_limit_error"
    : error.status >= 500
    ? "server_error"
    : "invalid_request_error";
  return { error: { message: error.message, type, code: error.code } };
}

/**
 * The last user message's text of an OpenAI chat request; throws {@link ApiError} 400 naming the field.
 *
 * @example
 * ```ts
 * lastUserText({ model: "homed", messages: [{ role: "system", content: "x" }, { role: "user", content: "hi" }] }); // "hi"
 * ```
 */
export function lastUserText(body: unknown): { text: string; stream: boolean } {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ApiError(400, "bad_request", "The body must be a JSON object with messages");
  }
  const { messages, stream } = body as { messages?: unknown; stream?: unknown };
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new ApiError(400, "bad_request", 'Field "messages" must be a non-empty list');
  }
  const last = [...messages].reverse().find((message) => (message as { role?: unknown })?.role === "user") as
    | { content?: unknown }
    | undefined;
  if (!last) throw new ApiError(400, "bad_request", 'Field "messages" has no message with role "user"');
  const content = last.content;
  const text = typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.filter((part) => part?.type === "text" && typeof part.text === "string").map((part) => part.text)
      .join("\n")
    : undefined;
  if (text === undefined || text.trim() === "") {
    throw new ApiError(400, "bad_request", "The last user message needs text content (a string, or text parts)");
  }
  if (text.length > MAX_TEXT_CHARS) {
    throw new ApiError(
      413,
      "too_large",
      `The last user message has ${text.length} characters; allowed: at most ${MAX_TEXT_CHARS}`,
    );
  }
  if (stream !== undefined && typeof stream !== "boolean") {
    throw new ApiError(400, "bad_request", `Field "stream" must be true or false, got ${JSON.stringify(stream)}`);
  }
  return { text, stream: stream === true };
}

/**
 * Mounts the door on `app` (behind the same guard and tokens as `/api/*`), submitting to `device` (an `openai`
 * HttpDevice).
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { HttpDevice } from "../devices/http/http_device.ts";
 * import type { ApiVariables } from "./auth.ts";
 *
 * const app = new Hono<{ Variables: ApiVariables }>();
 * openAiDoor(new HttpDevice({ name: "openai" }), () => Date.now())(app);
 * ```
 */
export function openAiDoor(
  device: HttpDevice,
  now: () => number,
): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/v1/models", (c) =>
      c.json({
        object: "list",
        data: [{ id: MODEL, object: "model", created: Math.floor(now() / 1000), owned_by: "homed" }],
      }));
    app.post("/v1/chat/completions", async (c) => {
      let body: unknown;
      try {
        body = await c.req.json();
      } catch (error) {
        throw new ApiError(400, "bad_json", `The body is not valid JSON: ${(error as Error).message}`);
      }
      const { text, stream } = lastUserText(body);
      const identity = c.get("identity");
      const created = Math.floor(now() / 1000);
      const events = new AsyncQueue<TurnEvent>();
      let submission;
      try {
        submission = device.submit(
          { text, identity, source: `openai:${identity.name}` },
          stream ? (event) => (events.push(event), event.type === "done" && events.close()) : undefined,
        );
      } catch (error) {
        if (error instanceof LaneFullError) throw new ApiError(429, "too_many_waiting", error.message);
        if (error instanceof ShuttingDown) throw new ApiError(503, "shutting_down", "homed is shutting down");
        throw error;
      }
      const id = `chatcmpl-${submission.event.id}`;
      if (!stream) {
        const result = await submission.done;
        if (result.error) {
          throw new ApiError(statusForTurnError(result.error.code), result.error.code, result.error.message);
        }
        return c.json({
          id,
          object: "chat.completion",
          created,
          model: MODEL,
          choices: [{ index: 0, message: { role: "assistant", content: result.reply }, finish_reason: "stop" }],
          usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        });
      }
      const chunk = (delta: Record<string, unknown>, finish: string | null) =>
        JSON.stringify({
          id,
          object: "chat.completion.chunk",
          created,
          model: MODEL,
          choices: [{ index: 0, delta, finish_reason: finish }],
        });
      return streamSSE(c, async (sse) => {
        await sse.writeSSE({ data: chunk({ role: "assistant", content: "" }, null) });
        let streamed = false;
        for (let next = await events.next(); next; next = await events.next()) {
          if (next.type === "delta") {
            streamed = true;
            await sse.writeSSE({ data: chunk({ content: next.text }, null) });
          } else if (next.type === "done") {
            if (next.result.error) {
              const error = new ApiError(
                statusForTurnError(next.result.error.code),
                next.result.error.code,
                next.result.error.message,
              );
              await sse.writeSSE({ data: JSON.stringify(openAiError(error)) });
            } else {
              // A reply no model streamed (a command's, a confirmation's) comes whole.
              if (!streamed && next.result.reply) {
                await sse.writeSSE({ data: chunk({ content: next.result.reply }, null) });
              }
              await sse.writeSSE({ data: chunk({}, "stop") });
            }
          }
        }
        await sse.writeSSE({ data: "[DONE]" });
      });
    });
  };
}
