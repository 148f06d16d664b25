/**
 * Telegram's updates as homed reads them: a `message` (text or caption, who sent it where, whether it addresses the
 * bot in a group, its photo, voice, audio, video or document as attachments) or a `callback_query` (an inline
 * button pressed). Read field by field from `unknown`, so a malformed update is dropped here, never half-trusted.
 *
 * @module
 */

import type { Conversation } from "../../chat_policy/allow_list.ts";
import type { MessageAttachment } from "../../io/message_payload.ts";

/** A `message` update, read. */
export interface IncomingMessage {
  kind: "message";
  updateId: number;
  conversation: Conversation;
  chatId: string;
  userId: string;
  /** The sender's first name or username, as they set it (never their identity). */
  display?: string;
  messageId: string;
  /** The text or caption, with mentions of the bot taken out. */
  text: string;
  /** In a group: the bot was @-mentioned, or the message replies to one of the bot's. */
  addressed: boolean;
  attachments: MessageAttachment[];
  fromBot: boolean;
}

/** A `callback_query` update, read. */
export interface IncomingCallback {
  kind: "callback";
  updateId: number;
  callbackId: string;
  userId: string;
  data: string;
  /** The message the button is on (absent when Telegram no longer has it). */
  chatId?: string;
  chatKind?: Conversation["kind"];
  messageId?: string;
}

/** Any other update (allowed_updates keeps these out; a bot token shared with another program may not). */
export interface OtherUpdate {
  kind: "other";
  updateId: number;
}

/** An update, read. */
export type Incoming = IncomingMessage | IncomingCallback | OtherUpdate;

type Fields = Record<string, unknown>;

const record = (value: unknown): Fields | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? value as Fields : undefined;

const idOf = (value: unknown): string | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) ? String(value) : undefined;

const stringOf = (value: unknown): string | undefined => typeof value === "string" ? value : undefined;

/**
 * Reads one update; `undefined` when it is not an update at all (no `update_id`).
 *
 * @example
 * ```ts
 * const update = readUpdate({
 *   update_id: 1001,
 *   message: { message_id: 5, chat: { id: 42, type: "private" }, from: { id: 42, first_name: "Ann" }, text: "hi" },
 * }, { id: "123456789", username: "homed_bot" });
 * update?.kind; // "message"
 * ```
 */
export function readUpdate(raw: unknown, bot: { id: string; username: string }): Incoming | undefined {
  const update = record(raw);
  const updateId = update?.update_id;
  if (typeof updateId !== "number" || !Number.isSafeInteger(updateId)) return undefined;
  const message = record(update!.message);
  if (message) return readMessage(updateId, message, bot) ?? { kind: "other", updateId };
  const callback = record(update!.callback_query);
  if (callback) return readCallback(updateId, callback) ?? { kind: "other", updateId };
  return { kind: "other", updateId };
}

function readMessage(updateId: number, message: Fields, bot: { id: string; username: string }) {
  const chat = record(message.chat);
  const from = record(message.from);
  const chatId = idOf(chat?.id);
  const userId = idOf(from?.id);
  const messageId = idOf(message.message_id);
  if (!chat || !from || !chatId || !userId || !messageId) return undefined;
  const type = stringOf(chat.type);
  // Channels' posts have no sender to trust; only people's chats are read.
  if (type !== "private" && type !== "group" && type !== "supergroup") return undefined;
  const conversation: Conversation = type === "private"
    ? { kind: "private", id: chatId }
    : { kind: "group", id: chatId };
  const raw = stringOf(message.text) ?? stringOf(message.caption) ?? "";
  const entities = Array.isArray(message.entities)
    ? message.entities
    : Array.isArray(message.caption_entities)
    ? message.caption_entities
    : [];
  const { text, mentioned } = withoutMentions(raw, entities, bot.username);
  const replied = record(record(message.reply_to_message)?.from);
  const repliesToBot = replied !== undefined && idOf(replied.id) === bot.id;
  const display = stringOf(from.first_name) || stringOf(from.username);
  return {
    kind: "message" as const,
    updateId,
    conversation,
    chatId,
    userId,
    ...(display ? { display } : {}),
    messageId,
    text,
    addressed: conversation.kind === "private" || mentioned || repliesToBot,
    attachments: attachmentsOf(message),
    fromBot: from.is_bot === true,
  };
}

/**
 * The text without the bot's @-mentions (Telegram's `mention` entities, offsets in UTF-16 units as JS strings count),
 * and whether there was one.
 */
function withoutMentions(text: string, entities: unknown[], username: string): { text: string; mentioned: boolean } {
  const mention = `@${username}`.toLowerCase();
  const spans = entities.map(record).filter((entity): entity is Fields => {
    if (!entity || entity.type !== "mention") return false;
    const { offset, length } = entity;
    return typeof offset === "number" && typeof length === "number" &&
      text.slice(offset, offset + length).toLowerCase() === mention;
  }).map((entity) => [entity.offset as number, entity.length as number] as const).sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [offset, length] of spans) out = out.slice(0, offset) + out.slice(offset + length);
  return { text: spans.length ? out.replace(/[ \t]{2,}/g, " ").trim() : text.trim(), mentioned: spans.length > 0 };
}

/** The message's media as attachments named by their `file_id` (fetched through `getFile` when needed). */
function attachmentsOf(message: Fields): MessageAttachment[] {
  const out: MessageAttachment[] = [];
  const sized = (file: Fields | undefined) => {
    const size = file?.file_size;
    return typeof size === "number" && size >= 0 ? { size } : {};
  };
  if (Array.isArray(message.photo)) {
    // Telegram lists a photo's sizes small to large; the largest is read (by pixels, not by position).
    const sizes = message.photo.map(record).filter((size): size is Fields => typeof size?.file_id === "string");
    const area = (size: Fields) => Number(size.width ?? 0) * Number(size.height ?? 0);
    const largest = sizes.reduce<Fields | undefined>(
      (best, size) => !best || area(size) >= area(best) ? size : best,
      undefined,
    );
    if (largest) out.push({ kind: "image", file: largest.file_id as string, ...sized(largest) });
  }
  const single: Array<[string, MessageAttachment["kind"]]> = [
    ["voice", "audio"],
    ["audio", "audio"],
    ["video", "video"],
    ["document", "file"],
  ];
  for (const [field, kind] of single) {
    const file = record(message[field]);
    const id = stringOf(file?.file_id);
    if (!id) continue;
    const name = stringOf(file?.file_name);
    out.push({ kind, file: id, ...(name ? { name } : {}), ...sized(file) });
  }
  return out;
}

function readCallback(updateId: number, callback: Fields): IncomingCallback | undefined {
  const callbackId = stringOf(callback.id);
  const userId = idOf(record(callback.from)?.id);
  if (!callbackId || !userId) return undefined;
  const message = record(callback.message);
  const chat = record(message?.chat);
  const chatId = idOf(chat?.id);
  const messageId = idOf(message?.message_id);
  return {
    kind: "callback",
    updateId,
    callbackId,
    userId,
    data: stringOf(callback.data) ?? "",
    ...(chatId ? { chatId, chatKind: chat?.type === "private" ? "private" as const : "group" as const } : {}),
    ...(messageId ? { messageId } : {}),
  };
}
