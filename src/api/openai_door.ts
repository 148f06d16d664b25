/**
 * The OpenAI-compatible door (`daemon.openai_api`): `GET /v1/models`, `GET /v1/models/{id}` and
 * `POST /v1/chat/completions`, streamed and not, so Open WebUI, phone apps and Home Assistant's OpenAI-style
 * conversation integrations talk to the one butler. `Authorization: Bearer <a homed API token>` is the person (their
 * trust applies). Two models:
 *
 * - `homed` (and any name the door does not know): a turn of the butler. Only the request's last user message is
 *   taken — its text and images (`openai/images.ts`) — and joins the one conversation from `openai:<their name>`; the
 *   client's own history and system prompt are not the butler's memory or persona. `response_format` is passed on
 *   with every request of the turn. The client's `tools` are refused (homed runs its own).
 * - `homed-utility`: a stateless call for household members and the owner — the request's own messages and tools go
 *   to the configured model as they are, through homed's provider (usage and budget count) but with no persona,
 *   context, memory or homed tools, and nothing is remembered; the model's `tool_calls` come back to the client. A
 *   background task a client sends to `homed` (a prompt that begins with `### Task:`, as Open WebUI's titles, tags
 *   and follow-ups do) goes the same way.
 *
 * Both go through the `openai` channel and the agent's input queue. Errors come in OpenAI's shape
 * (`openai/errors.ts`), a wrong key as 401.
 *
 * @module
 */

import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { AnsweredTurn } from "../agent/core/agent.ts";
import type { HttpDevice, HttpMessage } from "./http_device.ts";
import type { Identity } from "../identity/identity.ts";
import type { TurnEvent, TurnResult } from "../io/device.ts";
import { AsyncQueue } from "../io/async_queue.ts";
import { LaneFullError } from "../io/fair_queue.ts";
import { ShuttingDown } from "../io/turn_error.ts";
import { ApiError, statusForTurnError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { OpenAiError, openAiError } from "./openai/errors.ts";
import { imageAttachments } from "./openai/images.ts";
import { BUTLER_MODEL, type DoorRequest, readDoorRequest, UTILITY_MODEL } from "./openai/request.ts";
import {
  chunkBody,
  completionBody,
  finishReason,
  type Head,
  modelBody,
  toolCallsDelta,
  usageChunk,
} from "./openai/reply.ts";

export { openAiError } from "./openai/errors.ts";

/** The models the door offers. */
const MODELS = [BUTLER_MODEL, UTILITY_MODEL];

/** The message the `openai` channel submits for a request. */
function messageFor(request: DoorRequest, identity: Identity): HttpMessage {
  const source = `openai:${identity.name}`;
  const format = request.responseFormat ? { responseFormat: request.responseFormat } : {};
  if (request.kind === "stateless") {
    if (identity.trust === "guest") {
      const what = request.why === "model"
        ? `Model "${UTILITY_MODEL}"`
        : `A background task (a prompt that begins with "### Task:") goes to the plain model, which`;
      throw new OpenAiError(
        403,
        "forbidden",
        `${what} answers household members and the owner only: it is the bare model, without the butler's persona ` +
          `and rules; this token is "${identity.name}" (trust guest). A guest talks to model "${BUTLER_MODEL}"`,
        request.why === "model" ? "model" : "messages",
      );
    }
    const stateless = { messages: request.messages, ...(request.tools.length ? { tools: request.tools } : {}) };
    return { text: "(a stateless model call)", identity, source, modelCall: { ...format, stateless } };
  }
  const { attachments, held } = imageAttachments(request.images);
  return {
    text: request.text,
    identity,
    source,
    ...(attachments.length ? { attachments } : {}),
    ...(held.size ? { held } : {}),
    ...(request.responseFormat ? { modelCall: format } : {}),
  };
}

/** A failed turn as the door answers it: 400 naming the field when one was at fault, else by the turn's code. */
function turnError(result: TurnResult): ApiError | undefined {
  const error = result.error;
  if (!error) return undefined;
  const param = (result as AnsweredTurn).param;
  if (param !== undefined) return new OpenAiError(400, error.code, error.message, param);
  return new ApiError(statusForTurnError(error.code), error.code, error.message);
}

/**
 * Mounts the door on `app` (behind the same guard and tokens as `/api/*`), submitting to `device` (an `openai`
 * HttpDevice).
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { HttpDevice } from "./http_device.ts";
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
    app.get("/v1/models", (c) => {
      const created = Math.floor(now() / 1000);
      return c.json({ object: "list", data: MODELS.map((id) => modelBody(id, created)) });
    });
    // `*`, not `:id`: a model id may hold a slash (`openai/gpt-4o`), and it must still be answered in OpenAI's shape.
    app.get("/v1/models/*", (c) => {
      const id = decodeURIComponent(c.req.path.slice("/v1/models/".length));
      if (!MODELS.includes(id)) {
        const shownId = id.length > 80 ? `${id.slice(0, 77)}...` : id;
        throw new OpenAiError(
          404,
          "model_not_found",
          `The model ${JSON.stringify(shownId)} does not exist; homed offers ${MODELS.join(" and ")}`,
          "model",
        );
      }
      return c.json(modelBody(id, Math.floor(now() / 1000)));
    });
    app.post("/v1/chat/completions", async (c) => {
      let body: unknown;
      try {
        body = await c.req.json();
      } catch (error) {
        throw new ApiError(400, "bad_json", `The body is not valid JSON: ${(error as Error).message}`);
      }
      const request = readDoorRequest(body);
      const message = messageFor(request, c.get("identity"));
      const events = new AsyncQueue<TurnEvent>();
      let submission;
      try {
        submission = device.submit(
          message,
          request.stream ? (event) => (events.push(event), event.type === "done" && events.close()) : undefined,
        );
      } catch (error) {
        if (error instanceof LaneFullError) throw new ApiError(429, "too_many_waiting", error.message);
        if (error instanceof ShuttingDown) throw new ApiError(503, "shutting_down", "homed is shutting down");
        throw error;
      }
      const head: Head = {
        id: `chatcmpl-${submission.event.id}`,
        created: Math.floor(now() / 1000),
        model: request.model,
      };
      if (!request.stream) {
        const result = await submission.done;
        const error = turnError(result);
        if (error) throw error;
        return c.json(completionBody(head, result));
      }
      return streamSSE(c, async (sse) => {
        await sse.writeSSE({ data: chunkBody(head, { role: "assistant", content: "" }, null) });
        let streamed = false;
        for (let next = await events.next(); next; next = await events.next()) {
          if (next.type === "delta") {
            streamed = true;
            await sse.writeSSE({ data: chunkBody(head, { content: next.text }, null) });
          } else if (next.type === "done") {
            const result: AnsweredTurn = next.result;
            const error = turnError(result);
            if (error) {
              await sse.writeSSE({ data: JSON.stringify(openAiError(error)) });
              continue;
            }
            // A reply no model streamed (a command's, a confirmation's) comes whole.
            if (!streamed && result.reply) {
              await sse.writeSSE({ data: chunkBody(head, { content: result.reply }, null) });
            }
            if (result.toolCalls?.length) {
              await sse.writeSSE({ data: chunkBody(head, toolCallsDelta(result.toolCalls), null) });
            }
            await sse.writeSSE({ data: chunkBody(head, {}, finishReason(result)) });
            if (request.includeUsage) await sse.writeSSE({ data: usageChunk(head, result.usage) });
          }
        }
        await sse.writeSSE({ data: "[DONE]" });
      });
    });
    // Anything else under /v1 is answered in OpenAI's shape too (clients probe endpoints homed does not have).
    app.all("/v1/*", (c) => {
      const path = c.req.path.length > 80 ? `${c.req.path.slice(0, 77)}...` : c.req.path;
      throw new OpenAiError(
        404,
        "unknown_url",
        `homed's OpenAI door has no ${c.req.method} ${JSON.stringify(path)}; it answers GET /v1/models, ` +
          "GET /v1/models/{id} and POST /v1/chat/completions",
      );
    });
  };
}
