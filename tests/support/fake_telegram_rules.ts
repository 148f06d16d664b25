/**
 * The request checks of {@link ./fake_telegram.ts} that need none of its state: Telegram's refusals (as
 * {@link ApiError}), its error texts, and the validation of formatted text and of `reply_markup`.
 *
 * @module
 */

import { EntityParseError, type ParsedText, parseFormatted } from "./fake_telegram_format.ts";
import type { SentMedia } from "./fake_telegram_types.ts";
import { type FileStore, isImage, isVoice, jsonParam, stringParam, type WireRequest } from "./fake_telegram_wire.ts";

/**
 * A refusal: answered with `code`/`description`; also recorded as a violation when `violation`.
 *
 * @example
 * ```ts
 * import { ApiError } from "./fake_telegram_rules.ts";
 *
 * throw new ApiError(400, "Bad Request: chat not found");
 * ```
 */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly violation = true,
    readonly parameters?: Record<string, unknown>,
  ) {
    super(description);
  }
}

export const CONFLICT =
  "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running";
export const QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid";
export const NOT_MODIFIED =
  "Bad Request: message is not modified: specified new message content and reply markup are " +
  "exactly the same as a current content and reply markup of the message";
export const CHAT_ACTIONS = new Set([
  "typing",
  "upload_photo",
  "record_video",
  "upload_video",
  "record_voice",
  "upload_voice",
  "upload_document",
  "choose_sticker",
  "find_location",
  "record_video_note",
  "upload_video_note",
]);
/**
 * A JSON-serialised parameter, or a 400 `can't parse <what> JSON object`.
 *
 * @example
 * ```ts
 * import { jsonField } from "./fake_telegram_rules.ts";
 *
 * jsonField({ allowed_updates: '["message"]' }, "allowed_updates", "allowed_updates"); // ["message"]
 * ```
 */
export function jsonField(params: Record<string, unknown>, name: string, what: string): unknown {
  try {
    return jsonParam(params, name);
  } catch {
    throw new ApiError(400, `Bad Request: can't parse ${what} JSON object`);
  }
}

/**
 * The `text` (or `caption`) parameter parsed with its `parse_mode` as Telegram does, refused as Telegram refuses it:
 * unparsable (`can't parse entities: …`), empty text, or longer than `max` code points once parsed.
 *
 * @example
 * ```ts
 * import { parseField } from "./fake_telegram_rules.ts";
 *
 * parseField({ text: "<b>Hi</b>", parse_mode: "HTML" }, "text", 4096, true).text; // "Hi"
 * ```
 */
export function parseField(
  params: Record<string, unknown>,
  field: "text" | "caption",
  max: number,
  strictHtmlEscapes: boolean,
): ParsedText & { raw: string } {
  const raw = stringParam(params, field) ?? "";
  if (new TextEncoder().encode(raw).length > 1 << 15) throw new ApiError(400, "Bad Request: text is too long");
  let parsed: ParsedText;
  try {
    parsed = parseFormatted(raw, stringParam(params, "parse_mode"), { strictHtmlEscapes });
  } catch (error) {
    if (error instanceof EntityParseError) {
      throw new ApiError(400, `Bad Request: can't parse entities: ${error.message}`);
    }
    throw new ApiError(400, "Bad Request: unsupported parse_mode");
  }
  if (field === "text" && !parsed.text) throw new ApiError(400, "Bad Request: message text is empty");
  // Telegram counts the Unicode code points of the parsed text; homed must split longer text itself.
  if ([...parsed.text].length > max) {
    throw new ApiError(400, `Bad Request: message ${field === "text" ? "is" : "caption is"} too long`);
  }
  return { ...parsed, raw };
}

/** Button kinds other than url and callback_data that make an inline button valid. */
const OTHER_BUTTONS = /^(switch_inline_query|login_url|web_app|pay|copy_text|callback_game)/;

/**
 * The `reply_markup` parameter, checked as Telegram checks an inline keyboard (callback data at most 64 bytes).
 *
 * @example
 * ```ts
 * import { replyMarkup } from "./fake_telegram_rules.ts";
 *
 * replyMarkup({ reply_markup: { inline_keyboard: [[{ text: "Yes", callback_data: "yes" }]] } });
 * ```
 */
export function replyMarkup(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const markup = jsonField(params, "reply_markup", "reply keyboard markup");
  if (markup === undefined) return undefined;
  if (markup === null || typeof markup !== "object" || Array.isArray(markup)) {
    throw new ApiError(400, "Bad Request: object expected as reply markup");
  }
  const rows = (markup as Record<string, unknown>).inline_keyboard;
  if (rows === undefined) return markup as Record<string, unknown>;
  if (!Array.isArray(rows) || !rows.every(Array.isArray)) {
    throw new ApiError(
      400,
      'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays',
    );
  }
  const bad = (why: string) => new ApiError(400, `Bad Request: can't parse inline keyboard button: ${why}`);
  for (const button of (rows as unknown[][]).flat()) {
    if (button === null || typeof button !== "object") throw bad("InlineKeyboardButton must be an Object");
    const { text, url, callback_data: data } = button as Record<string, unknown>;
    if (typeof text !== "string") throw bad('Can\'t find field "text"');
    if (data !== undefined && data !== "") {
      if (typeof data !== "string" || new TextEncoder().encode(data).length > 64) {
        throw new ApiError(400, "Bad Request: BUTTON_DATA_INVALID");
      }
    } else if (!url && !Object.keys(button).some((key) => OTHER_BUTTONS.test(key))) {
      throw bad("Text buttons are unallowed in the inline keyboard");
    }
  }
  return markup as Record<string, unknown>;
}

/** Limits as {@link RateLimiter} applies them. */
export interface RateLimits {
  perChatPerSecond: number;
  perGroupPerMinute: number;
  retryAfterS: number;
}

/**
 * Telegram's flood control as tests need it: too many sends to a chat → 429 with `retry_after`, and a send inside a
 * 429's `retry_after` → a violation (the client ignored it) and another 429.
 *
 * @example
 * ```ts
 * import { RateLimiter } from "./fake_telegram_rules.ts";
 *
 * const violations: string[] = [];
 * const limiter = new RateLimiter({ perChatPerSecond: 1, perGroupPerMinute: 20, retryAfterS: 1 }, violations);
 * limiter.check("sendMessage", { id: 42, type: "private" }); // accepted; a second one now throws a 429 ApiError
 * ```
 */
export class RateLimiter {
  #limits: RateLimits | undefined;
  #violations: string[];
  #sendTimes = new Map<number, number[]>();
  #blockedUntil = new Map<number, number>();
  #forced = { count: 0, retryAfterS: 1 };

  /** `limits` undefined: no automatic limits ({@link RateLimiter.forceNext} still works). */
  constructor(limits: RateLimits | undefined, violations: string[]) {
    this.#limits = limits;
    this.#violations = violations;
  }

  /** The next `count` sends get a 429 with this `retry_after`. */
  forceNext(count: number, retryAfterS: number): void {
    this.#forced = { count, retryAfterS };
  }

  /** Throws the 429 a send to `chat` gets now, or counts the send as accepted. */
  check(method: string, chat: { id: number; type: string }): void {
    const at = performance.now();
    const blocked = this.#blockedUntil.get(chat.id) ?? 0;
    const tooMany = (seconds: number) =>
      new ApiError(429, `Too Many Requests: retry after ${seconds}`, false, { retry_after: seconds });
    const block = (seconds: number) => {
      this.#blockedUntil.set(chat.id, at + seconds * 1000);
      return tooMany(seconds);
    };
    if (at < blocked) {
      this.#violations.push(
        `${method}: sent to chat ${chat.id} ${Math.round(blocked - at)} ms before a 429's retry_after elapsed`,
      );
      throw tooMany(Math.ceil((blocked - at) / 1000));
    }
    if (this.#forced.count > 0) {
      this.#forced.count--;
      throw block(this.#forced.retryAfterS);
    }
    const times = this.#sendTimes.get(chat.id) ?? [];
    const limits = this.#limits;
    if (limits) {
      const inSecond = times.filter((t) => t > at - 1000).length;
      const inMinute = times.filter((t) => t > at - 60_000).length;
      if (inSecond >= limits.perChatPerSecond || (chat.type !== "private" && inMinute >= limits.perGroupPerMinute)) {
        throw block(limits.retryAfterS);
      }
    }
    this.#sendTimes.set(chat.id, [...times.filter((t) => t > at - 60_000), at]);
  }
}

/**
 * The file of a `sendPhoto` / `sendVoice` / `sendDocument`: a multipart part named `field` (or the part an
 * `attach://<name>` value names), an HTTP URL, or a known file_id — refused as Telegram refuses a missing, empty or
 * unusable file. A part without a filename is accepted but recorded as a violation: the user would see "blob".
 *
 * @example
 * ```ts
 * import { FileStore } from "./fake_telegram_wire.ts";
 * import { uploadedMedia } from "./fake_telegram_rules.ts";
 *
 * const media = await uploadedMedia("sendPhoto", "photo", {
 *   params: { photo: "https://cam.local/snap.jpg" },
 *   files: new Map(),
 * }, new FileStore(), []);
 * ```
 */
export async function uploadedMedia(
  method: string,
  field: SentMedia["field"],
  wire: WireRequest,
  store: FileStore,
  violations: string[],
): Promise<SentMedia> {
  const value = stringParam(wire.params, field);
  const attached = value?.startsWith("attach://");
  const file = attached ? wire.files.get(value!.slice(9)) : value ? undefined : wire.files.get(field);
  if (!file && (!value || attached)) throw new ApiError(400, `Bad Request: there is no ${field} in the request`);
  if (!file) {
    if (/^https?:\/\//i.test(value!)) return { field, url: value! };
    const known = store.byId(value!);
    if (!known) throw new ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified");
    return { field, file_id: value!, bytes: known.bytes };
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.length === 0) throw new ApiError(400, "Bad Request: file must be non-empty");
  if (!file.name || file.name === "blob") violations.push(`${method}: the ${field} part has no filename`);
  if (field === "photo" && !isImage(bytes)) throw new ApiError(400, "Bad Request: IMAGE_PROCESS_FAILED");
  if (field === "voice" && !isVoice(bytes)) {
    throw new ApiError(400, "Bad Request: voice is not OGG/Opus, MP3 or M4A (the fake's wording)");
  }
  return { field, bytes, filename: file.name, ...(file.type ? { mime: file.type } : {}) };
}
