/**
 * What the Telegram device sends, piece by piece: an output becomes pieces (text split at `telegram.split_at` before
 * it is formatted, so no tag spans two messages; media as uploads of bytes homed holds, the caption beside them when
 * it fits in 1024 characters), and each piece goes out paced per chat, in HTML parse mode, honouring a 429's
 * `retry_after` on the injected clock before trying that piece again, and — should Telegram still refuse the
 * formatting — once more as plain text. The owner's confirmation questions (`/confirm <id>`) get Approve / Deny
 * buttons.
 *
 * @module
 */

import type { Clock } from "../../clock.ts";
import type { Pacer } from "../../chat_policy/pacer.ts";
import { splitText } from "../../chat_policy/split_text.ts";
import { type BotApi, TelegramError, type Upload } from "./bot_api.ts";
import { toTelegramHtml } from "./telegram_html.ts";
import { extensionFor, sniffMedia } from "../../fs/media_type.ts";

/** A text message to send: Markdown as the model wrote it. */
export interface TextPiece {
  kind: "text";
  text: string;
  /** Quote this message (a reply in a group, first piece only). */
  replyTo?: string;
  /** The id of a confirmation to offer Approve / Deny buttons for. */
  confirm?: string;
}

/** A photo, voice or document to upload. */
export interface MediaPiece {
  kind: "media";
  method: "sendPhoto" | "sendVoice" | "sendDocument";
  upload: Upload;
  caption?: string;
  replyTo?: string;
}

/** One message to send. */
export type Piece = TextPiece | MediaPiece;

/** Telegram's longest caption, in characters. */
export const CAPTION_LIMIT = 1024;

/** How many 429s in a row one piece waits out before its send fails. */
const RATE_LIMIT_TRIES = 5;

/** `/confirm <id>` in homed's question to the owner (`src/policy/confirmations.ts`). */
const CONFIRM = /\/confirm ([0-9a-f]{4,8})\b/;

/**
 * The confirmation a text asks for, if any.
 *
 * @example
 * ```ts
 * confirmationIn("Confirm: unlock the door? Reply 是 / yes within 5 min (or /confirm a1b2)"); // "a1b2"
 * ```
 */
export function confirmationIn(text: string): string | undefined {
  return CONFIRM.exec(text)?.[1];
}

/**
 * The Approve / Deny keyboard for confirmation `id`; a press comes back as `confirm:<id>` or `deny:<id>`.
 *
 * @example
 * ```ts
 * confirmKeyboard("a1b2").inline_keyboard[0]![0]!.callback_data; // "confirm:a1b2"
 * ```
 */
export function confirmKeyboard(id: string): { inline_keyboard: { text: string; callback_data: string }[][] } {
  return {
    inline_keyboard: [[{ text: "✅ Approve", callback_data: `confirm:${id}` }, {
      text: "✖️ Deny",
      callback_data: `deny:${id}`,
    }]],
  };
}

/**
 * Text as pieces within `splitAt` characters, in order; the first quotes `replyTo`, and the piece with the
 * confirmation command carries its buttons.
 *
 * @example
 * ```ts
 * textPieces("a\n\nb", 100).length; // 1
 * textPieces("x".repeat(5000), 4096).map((piece) => piece.text.length); // [4096, 904]
 * ```
 */
export function textPieces(text: string, splitAt: number, replyTo?: string): TextPiece[] {
  const parts = splitText(text, splitAt);
  const pieces: TextPiece[] = (parts.length ? parts : ["(empty)"]).map((part) => ({ kind: "text", text: part }));
  if (replyTo) pieces[0]!.replyTo = replyTo;
  const id = confirmationIn(text);
  if (id) (pieces.find((piece) => confirmationIn(piece.text) === id) ?? pieces.at(-1)!).confirm = id;
  return pieces;
}

/** What {@link PieceSender} counts. */
export interface SendCounts {
  sent: number;
  failed: number;
  rate_limited: number;
  format_fallbacks: number;
}

/** Options of {@link PieceSender}. */
export interface PieceSenderOptions {
  api: BotApi;
  clock: Pick<Clock, "sleep">;
  pacer: Pacer;
  counts: SendCounts;
  /** The device's stop: a wait for a 429 ends with it. */
  signal: () => AbortSignal | undefined;
  /** A piece sent as plain text after Telegram refused its formatting. */
  onFallback(description: string): void;
}

/** Sends pieces to chats. */
export class PieceSender {
  #options: PieceSenderOptions;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   * import { Pacer } from "../../chat_policy/pacer.ts";
   * import { BotApi } from "./bot_api.ts";
   *
   * const api = new BotApi({ apiUrl: "https://api.telegram.org", token: "123456789:AA…", clock: systemClock });
   * const sender = new PieceSender({
   *   api,
   *   clock: systemClock,
   *   pacer: new Pacer(systemClock, 1_000),
   *   counts: { sent: 0, failed: 0, rate_limited: 0, format_fallbacks: 0 },
   *   signal: () => undefined,
   *   onFallback: () => {},
   * });
   * ```
   */
  constructor(options: PieceSenderOptions) {
    this.#options = options;
  }

  /**
   * Sends `piece` to `chatId`; resolves with the message's id. A 429 is waited out and the piece sent again; a
   * transient failure rejects with a {@link TelegramError} whose `transient` is true (the device holds the rest).
   */
  async send(chatId: string, piece: Piece): Promise<string | undefined> {
    const { pacer, counts } = this.#options;
    for (let tries = 0;; tries++) {
      await pacer.wait(chatId);
      try {
        const message = await this.#attempt(chatId, piece, true);
        counts.sent++;
        return message;
      } catch (error) {
        if (error instanceof TelegramError && error.code === 400 && /can't parse entities/i.test(error.description)) {
          // Never expected (the HTML is escaped by construction), but a message is worth more than its formatting.
          counts.format_fallbacks++;
          this.#options.onFallback(error.description);
          const message = await this.#attempt(chatId, piece, false).catch((again) => this.#failed(again));
          counts.sent++;
          return message;
        }
        if (error instanceof TelegramError && error.code === 429 && tries < RATE_LIMIT_TRIES) {
          counts.rate_limited++;
          // Telegram says when: sending sooner only earns another 429 and a longer ban.
          await this.#options.clock.sleep(Math.max(1, error.retryAfterS ?? 1) * 1000, this.#options.signal());
          continue;
        }
        return this.#failed(error);
      } finally {
        pacer.sent(chatId);
      }
    }
  }

  #failed(error: unknown): never {
    this.#options.counts.failed++;
    throw error;
  }

  async #attempt(chatId: string, piece: Piece, formatted: boolean): Promise<string | undefined> {
    const { api } = this.#options;
    const signal = this.#options.signal();
    const reply = piece.replyTo
      // Allowed without the quoted message: it may have been deleted meanwhile, and the answer still matters.
      ? { reply_parameters: { message_id: Number(piece.replyTo), allow_sending_without_reply: true } }
      : {};
    let result: unknown;
    if (piece.kind === "text") {
      result = await api.call("sendMessage", {
        chat_id: chatId,
        ...(formatted ? { text: toTelegramHtml(piece.text), parse_mode: "HTML" } : { text: piece.text }),
        link_preview_options: { is_disabled: true },
        ...reply,
        ...(piece.confirm ? { reply_markup: confirmKeyboard(piece.confirm) } : {}),
      }, { ...(signal ? { signal } : {}) });
    } else {
      const caption = piece.caption
        ? formatted ? { caption: toTelegramHtml(piece.caption), parse_mode: "HTML" } : { caption: piece.caption }
        : {};
      result = await api.upload(piece.method, { chat_id: chatId, ...caption, ...reply }, piece.upload, {
        ...(signal ? { signal } : {}),
        timeoutMs: 120_000,
      });
    }
    const id = (result as { message_id?: unknown } | null)?.message_id;
    return typeof id === "number" ? String(id) : undefined;
  }
}

/**
 * The upload of media bytes as Telegram plays them: a picture as a photo; audio Telegram plays as a voice message
 * (OGG/Opus, MP3, M4A) as voice; any other audio — homed's speech is WAV, and homed has no Opus encoder — as a
 * document the user can still play; anything else as a document under its name.
 *
 * @example
 * ```ts
 * mediaUpload("image", Uint8Array.of(0xff, 0xd8, 0xff, 0xe0), undefined).method; // "sendPhoto"
 * ```
 */
export function mediaUpload(
  type: "image" | "audio" | "file",
  bytes: Uint8Array,
  name: string | undefined,
): { method: MediaPiece["method"]; upload: Upload } {
  const { mime, kind } = sniffMedia(bytes);
  if (type === "image") {
    const image = kind === "image" ? mime : "image/jpeg";
    return {
      method: "sendPhoto",
      upload: { field: "photo", bytes, filename: `image.${extensionFor(image)}`, mime: image },
    };
  }
  // What Telegram plays as a voice message. WAV (homed's own speech) it would refuse, and converting needs an Opus
  // encoder homed does not carry — sent as a file instead.
  if (type === "audio" && VOICE.has(mime)) {
    return { method: "sendVoice", upload: { field: "voice", bytes, filename: `voice.${extensionFor(mime)}`, mime } };
  }
  if (type === "audio") {
    const wav = mime === "audio/wav";
    return {
      method: "sendDocument",
      upload: {
        field: "document",
        bytes,
        filename: name ?? (wav ? "voice.wav" : "audio.bin"),
        mime: wav ? mime : "application/octet-stream",
      },
    };
  }
  return {
    method: "sendDocument",
    upload: { field: "document", bytes, filename: name ?? "file", mime: "application/octet-stream" },
  };
}

/** The audio Telegram's `sendVoice` takes (OGG/Opus, MP3, M4A). */
const VOICE = new Set(["audio/ogg", "audio/mpeg", "audio/mp4"]);
