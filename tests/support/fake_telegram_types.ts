/**
 * The public types of {@link ./fake_telegram.ts} (re-exported there) and the shapes it keeps internally.
 *
 * @module
 */

import type { TelegramEntity } from "./fake_telegram_format.ts";
import type { FakeChat, FakeUser } from "./fake_telegram_wire.ts";

/** Rate limits, checked on every send (`sendMessage`, `sendPhoto`, `sendVoice`, `sendDocument`). */
export interface FakeTelegramRateLimit {
  /** Sends accepted to one chat within any second (default 1, the Bot API FAQ's advice). */
  perChatPerSecond?: number;
  /** Sends accepted to one group or supergroup within any minute (default 20). */
  perGroupPerMinute?: number;
  /** The `retry_after` of a 429, in seconds (default 1, short for tests). */
  retryAfterS?: number;
}

/** Options of {@link FakeTelegram.start}. */
export interface FakeTelegramOptions {
  /** The bot token clients must use (default `"123456789:AAFakeTelegramTokenForHomedTests00"`). */
  token?: string;
  /** The bot's username, without `@` (default `"homed_test_bot"`). */
  botUsername?: string;
  /** The bot's first name (default `"homed"`). */
  botName?: string;
  /**
   * Telegram's privacy mode, on by default for every bot: in groups, only commands, mentions of the bot and replies
   * to its messages reach it; other group messages are not queued (`userSends` answers `queued: false`).
   */
  privacyMode?: boolean;
  /** Rate limits, or `false` for none ({@link FakeTelegram.rateLimitNext} still works). */
  rateLimit?: FakeTelegramRateLimit | false;
  /** Refuse a bare `&`/`>` in HTML, which the docs forbid and real Telegram tolerates (default true). */
  strictHtmlEscapes?: boolean;
  /** The first update_id (default 1000). */
  firstUpdateId?: number;
}

/** A message a test's user sends. */
export interface UserMessage {
  chat: FakeChat;
  from: FakeUser;
  /** The text, or the caption of a photo, voice or document. */
  text?: string;
  /** Reply to the bot's last message in this chat (`true`) or to the bot's message with this id. */
  replyToBot?: boolean | number;
  /** Mention `@<botUsername>` (prepended unless the text already has it), marked with a `mention` entity. */
  mentionBot?: boolean;
  /** A photo (JPEG or PNG bytes), delivered as `PhotoSize[]` whose file_ids `getFile` resolves. */
  photo?: Uint8Array;
  /** A voice message (OGG/Opus bytes). */
  voice?: Uint8Array;
  /** The voice message's duration in seconds (default 1). */
  voiceDurationS?: number;
  document?: { name: string; bytes: Uint8Array; mime: string };
}

/** What a queued user action became. */
export interface QueuedUpdate {
  update_id: number;
  /** The user's message (for userSends) or the pressed message (for userPresses). */
  message_id: number;
  /** false when Telegram would not deliver it (privacy mode, or not in the bot's `allowed_updates`). */
  queued: boolean;
  /** The callback query's id (userPresses only). */
  callback_query_id?: string;
}

/** A file the bot uploaded or referred to. */
export interface SentMedia {
  field: "photo" | "voice" | "document";
  /** The uploaded bytes (also when the bot re-sent a known file_id). */
  bytes?: Uint8Array;
  filename?: string;
  mime?: string;
  /** An HTTP URL the bot passed instead of a file (Telegram would fetch it; the fake does not). */
  url?: string;
  /** A file_id the bot passed instead of a file. */
  file_id?: string;
}

/** A message the bot sent and Telegram accepted; edits update `text`, `entities` and `reply_markup` in place. */
export interface SentMessage {
  method: "sendMessage" | "sendPhoto" | "sendVoice" | "sendDocument";
  chat_id: number;
  message_id: number;
  /** What the user sees: the text (or caption) with the formatting stripped and entities decoded. */
  text: string;
  /** The text (or caption) as sent. */
  raw: string;
  parse_mode?: string;
  entities: TelegramEntity[];
  reply_markup?: Record<string, unknown>;
  reply_to_message_id?: number;
  media?: SentMedia;
  /** performance.now() when it was accepted. */
  at: number;
}

/** A `sendChatAction` call. */
export interface RecordedChatAction {
  chat_id: number;
  action: string;
  at: number;
}

/** An accepted `editMessageText` / `editMessageReplyMarkup`. */
export interface RecordedEdit {
  method: "editMessageText" | "editMessageReplyMarkup";
  chat_id: number;
  message_id: number;
  text?: string;
  reply_markup?: Record<string, unknown>;
  at: number;
}

/** A callback query the fake created for a button press. */
export interface FakeCallback {
  id: string;
  data: string;
  from: FakeUser;
  chat_id: number;
  message_id: number;
  /** performance.now() of its first delivery by getUpdates. */
  deliveredAt?: number;
  /** performance.now() of the bot's first send or edit in the chat after that delivery. */
  respondedAt?: number;
  answer?: { text?: string; show_alert?: boolean; at: number };
}

/** A message the fake holds (the bot's or a user's), with its Bot API object. */
export interface StoredMessage {
  chat: FakeChat;
  fromBot: boolean;
  object: Record<string, unknown>;
  sent?: SentMessage;
}
