/**
 * Reading the daemon's answers for `homed mcp serve`: the API's error body, the fields a call needs from a JSON
 * answer, a chat's reply and channel, one server-sent event's JSON. An answer that is not what this homed expects (a
 * daemon of another version, a failed turn) is an {@link AnswerError} saying so, passed on to the tool as it is.
 *
 * @module
 */

/**
 * An answer of the daemon that ends the call (not the API's shape, or a failed turn): passed on as it is.
 *
 * @example
 * ```ts
 * throw new AnswerError("homed's answer to GET /api/schedules has no \"schedules\" field");
 * ```
 */
export class AnswerError extends Error {}

/**
 * The `error` of the API's error body (`{"error": {"code", "message"}}`), when the body is one.
 *
 * @example
 * ```ts
 * apiError('{"error": {"code": "forbidden", "message": "owner only"}}'); // { code: "forbidden", message: "owner only" }
 * apiError("<html>"); // undefined
 * ```
 */
export function apiError(text: string): { code: string; message: string } | undefined {
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

/**
 * The field `name` of an answer's JSON object, or an error naming the call and the field.
 *
 * @example
 * ```ts
 * field({ hits: [] }, "hits", "GET /api/knowledge/search"); // []
 * ```
 */
export function field(body: unknown, name: string, call: string): unknown {
  if (body === null || typeof body !== "object" || !(name in body)) {
    throw new AnswerError(
      `homed's answer to ${call} has no "${name}" field; is the daemon the same version as this homed?`,
    );
  }
  return (body as Record<string, unknown>)[name];
}

/**
 * A chat answer's reply and channel (`POST /api/chat`'s body, `/api/chat/stream`'s `done` event).
 *
 * @example
 * ```ts
 * chatAnswer({ reply: "Locked.", channel: "http" }, "POST /api/chat"); // { reply: "Locked.", channel: "http" }
 * ```
 */
export function chatAnswer(body: unknown, call: string): { reply: string; channel: string } {
  const reply = field(body, "reply", call);
  const channel = field(body, "channel", call);
  if (typeof reply !== "string" || typeof channel !== "string") {
    throw new AnswerError(`homed's answer to ${call} has a reply or channel that is not text`);
  }
  return { reply, channel };
}

/**
 * One event's JSON data, or an error naming the stream.
 *
 * @example
 * ```ts
 * eventData('{"text": "Lo"}', "POST /api/chat/stream").text; // "Lo"
 * ```
 */
export function eventData(data: string, call: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(data);
    if (value !== null && typeof value === "object") return value as Record<string, unknown>;
  } catch { /* said below */ }
  throw new AnswerError(`homed's stream for ${call} has an event that is not a JSON object: ${data.slice(0, 120)}`);
}
