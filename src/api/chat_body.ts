/**
 * Validation of the chat request body `{"text": "...", "user"?: "..."}`.
 *
 * @module
 */

import { ApiError } from "./api_error.ts";

/** A valid chat request. */
export interface ChatBody {
  text: string;
  /** The `user` field: a display name the caller gives, never their identity (that comes from the token). */
  display: string | undefined;
}

/** Longest message accepted, in characters. */
export const MAX_TEXT_CHARS = 32_000;
const USER = /^[\p{L}\p{N}_.@:-]{1,64}$/u;

/**
 * Parses and checks the raw body text; throws {@link ApiError} 400 naming the field and the bad value.
 *
 * @example
 * ```ts
 * parseChatBody('{"text":"hi","user":"alice"}'); // { text: "hi", display: "alice" }
 * ```
 */
export function parseChatBody(raw: string): ChatBody {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (error) {
    throw new ApiError(400, "bad_json", `The body is not valid JSON: ${(error as Error).message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ApiError(400, "bad_request", `The body must be a JSON object, got ${JSON.stringify(body)?.slice(0, 60)}`);
  }
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== "text" && key !== "user") {
      throw new ApiError(400, "bad_request", `Unknown field "${key}"; allowed fields: text, user`);
    }
  }
  const text = record.text;
  if (text === undefined) throw new ApiError(400, "bad_request", 'Field "text" is missing');
  if (typeof text !== "string" || text.trim() === "") {
    throw new ApiError(
      400,
      "bad_request",
      `Field "text" must be a non-empty string, got ${JSON.stringify(text)?.slice(0, 60)}`,
    );
  }
  if (text.length > MAX_TEXT_CHARS) {
    throw new ApiError(
      413,
      "too_large",
      `Field "text" has ${text.length} characters; allowed: at most ${MAX_TEXT_CHARS}`,
    );
  }
  const user = record.user;
  if (user !== undefined && (typeof user !== "string" || !USER.test(user))) {
    throw new ApiError(
      400,
      "bad_request",
      `Field "user" must be 1 to 64 letters, digits or _ . @ : -, got ${JSON.stringify(user)?.slice(0, 80)}`,
    );
  }
  return { text, display: user };
}
