/**
 * A strict fake of the Telegram Bot API on loopback, for homed's Telegram channel tests, built from the Bot API
 * documentation (core.telegram.org/bots/api) and the Bot API server's own behaviour (tdlib/telegram-bot-api's
 * `Client.cpp`, TDLib's `MessageEntity.cpp`): `POST|GET <apiUrl>/bot<token>/<method>` with a query string, JSON,
 * urlencoded or multipart body; answers `{ok: true, result}` or `{ok: false, error_code, description, parameters?}`
 * with Telegram's descriptions word for word; files at `<apiUrl>/file/bot<token>/<file_path>`.
 *
 * The test plays the users ({@link FakeTelegram.userSends}, {@link FakeTelegram.userPresses}); the client under test
 * long-polls `getUpdates` and answers with `sendMessage`, media uploads, chat actions, callback answers and edits,
 * which are recorded ({@link FakeTelegram.sent}, {@link FakeTelegram.chatActions}, {@link FakeTelegram.edits}).
 * What a well-behaved client never does (two polls at once, text Telegram cannot parse, an over-long message, a send
 * inside a 429's `retry_after`, a callback answered twice, an unknown method…) is answered as Telegram answers it and
 * recorded as a violation; {@link FakeTelegram.close} fails the test on any, unless the test took them with
 * {@link FakeTelegram.takeViolations}.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { ParsedText } from "./fake_telegram_format.ts";
import {
  ApiError,
  CHAT_ACTIONS,
  jsonField,
  NOT_MODIFIED,
  parseField,
  QUERY_INVALID,
  RateLimiter,
  replyMarkup,
  uploadedMedia,
} from "./fake_telegram_rules.ts";
import type {
  FakeCallback,
  FakeTelegramOptions,
  QueuedUpdate,
  RecordedChatAction,
  RecordedEdit,
  SentMedia,
  SentMessage,
  StoredMessage,
  UserMessage,
} from "./fake_telegram_types.ts";
import { UpdateQueue } from "./fake_telegram_updates.ts";
import {
  badGatewayResponse,
  chatObject,
  detectEntities,
  errorResponse,
  type FakeChat,
  type FakeUser,
  FileStore,
  imageSize,
  intParam,
  okResponse,
  readRequest,
  stringParam,
  UnreadableBody,
  userObject,
  type WireRequest,
} from "./fake_telegram_wire.ts";
import { waitFor } from "./wait.ts";

export type { FakeChat, FakeUser } from "./fake_telegram_wire.ts";
export type { ParseMode, TelegramEntity } from "./fake_telegram_format.ts";
export type {
  FakeCallback,
  FakeTelegramOptions,
  FakeTelegramRateLimit,
  QueuedUpdate,
  RecordedChatAction,
  RecordedEdit,
  SentMedia,
  SentMessage,
  UserMessage,
} from "./fake_telegram_types.ts";

const now = () => performance.now();
const unixNow = () => Math.floor(Date.now() / 1000);

/**
 * The fake server: the test plays the users, the client under test polls and answers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 *
 * await using fake = FakeTelegram.start({ rateLimit: false });
 * const { update_id } = fake.userSends({ chat: { id: 42, type: "private" }, from: { id: 42, first_name: "Ann" }, text: "hi" });
 * // … the client under test, pointed at fake.apiUrl with fake.token …
 * await fetch(`${fake.botUrl}/getUpdates?offset=${update_id}`).then((r) => r.json());
 * await fetch(`${fake.botUrl}/sendMessage`, {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ chat_id: 42, text: "*Hello*, Ann\\!", parse_mode: "MarkdownV2" }),
 * }).then((r) => r.body?.cancel());
 * assert.equal(fake.sent[0]?.text, "Hello, Ann!");
 * ```
 */
export class FakeTelegram {
  /** Messages the bot sent and Telegram accepted, in order. */
  readonly sent: SentMessage[] = [];
  readonly chatActions: RecordedChatAction[] = [];
  readonly edits: RecordedEdit[] = [];
  readonly violations: string[] = [];
  /** The commands of the last `setMyCommands`. */
  commands: unknown[] = [];
  #server: Deno.HttpServer<Deno.NetAddr>;
  #token: string;
  #bot: { id: number; username: string; name: string };
  #privacy: boolean;
  #rate: RateLimiter;
  #strictHtml: boolean;
  #updates: UpdateQueue;
  #nextMessageId = 1;
  #chats = new Map<number, { chat: FakeChat; user?: FakeUser }>();
  #messages = new Map<number, StoredMessage>();
  #files = new FileStore();
  #callbacks = new Map<string, FakeCallback>();
  #outageUntil = 0;
  #outageCalls = 0;
  #revoked = false;
  #revokedCalls = 0;

  private constructor(options: FakeTelegramOptions) {
    this.#token = options.token ?? "123456789:AAFakeTelegramTokenForHomedTests00";
    this.#bot = {
      id: Number(this.#token.split(":")[0]) || 123456789,
      username: options.botUsername ?? "homed_test_bot",
      name: options.botName ?? "homed",
    };
    this.#privacy = options.privacyMode ?? true;
    this.#rate = new RateLimiter(
      options.rateLimit === false ? undefined : {
        perChatPerSecond: options.rateLimit?.perChatPerSecond ?? 1,
        perGroupPerMinute: options.rateLimit?.perGroupPerMinute ?? 20,
        retryAfterS: options.rateLimit?.retryAfterS ?? 1,
      },
      this.violations,
    );
    this.#strictHtml = options.strictHtmlEscapes ?? true;
    this.#updates = new UpdateQueue(options.firstUpdateId ?? 1000, this.violations);
    this.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => this.#handle(request));
  }

  /**
   * Starts a fake on a free loopback port.
   *
   * @example
   * ```ts
   * await using fake = FakeTelegram.start({ botUsername: "homed_bot" });
   * fake.userSends({ chat: { id: 42, type: "private" }, from: { id: 42, first_name: "Ann" }, text: "hi" });
   * const answer = await fetch(`${fake.botUrl}/getUpdates`);
   * ```
   */
  static start(options: FakeTelegramOptions = {}): FakeTelegram {
    return new FakeTelegram(options);
  }

  /** `http://127.0.0.1:<port>`, the API root (Telegram's `https://api.telegram.org`). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** `<apiUrl>/bot<token>`: append `/<method>`. */
  get botUrl(): string {
    return `${this.apiUrl}/bot${this.#token}`;
  }

  /** The bot token clients must use. */
  get token(): string {
    return this.#token;
  }

  /** The bot as `getMe` describes it. */
  get bot(): { id: number; username: string; first_name: string } {
    return { id: this.#bot.id, username: this.#bot.username, first_name: this.#bot.name };
  }

  /** How many times getUpdates handed out this update (0: never; 2 or more: redelivered, unconfirmed). */
  deliveries(updateId: number): number {
    return this.#updates.deliveries(updateId);
  }

  /** Updates queued and not yet confirmed by an offset. */
  get pendingUpdates(): number {
    return this.#updates.length;
  }

  /** Calls answered 502 during the last {@link FakeTelegram.outage}. */
  get callsDuring(): number {
    return this.#outageCalls;
  }

  /** Calls answered 401 since {@link FakeTelegram.revokeToken}. */
  get revokedCalls(): number {
    return this.#revokedCalls;
  }

  /** Makes a chat known without a message from it (a user who wrote to the bot before the test). */
  addChat(chat: FakeChat, user?: FakeUser): void {
    if (chat.type === "private" && user && user.id !== chat.id) throw new Error("a private chat's id is its user's id");
    this.#chats.set(chat.id, { chat, ...(user ? { user } : {}) });
  }

  /**
   * A user sends a message: queues a `message` update shaped as Telegram shapes it, and returns its ids.
   *
   * @example
   * ```ts
   * await using fake = FakeTelegram.start();
   * const group = { id: -100123, type: "supergroup" as const, title: "Home" };
   * const { update_id } = fake.userSends({ chat: group, from: { id: 7, first_name: "Bo" }, text: "lights?", mentionBot: true });
   * ```
   */
  userSends(input: UserMessage): QueuedUpdate {
    const { chat, from } = input;
    if (chat.type === "private" && chat.id !== from.id) throw new Error("a private chat's id is its user's id");
    if (chat.type !== "private" && chat.id >= 0) throw new Error("group and supergroup ids are negative");
    if (!this.#chats.has(chat.id) || chat.type === "private") {
      this.addChat(chat, chat.type === "private" ? from : undefined);
    }
    let text = input.text ?? "";
    const mention = `@${this.#bot.username}`;
    if (input.mentionBot && !text.includes(mention)) text = `${mention} ${text}`.trimEnd();
    const message_id = this.#nextMessageId++;
    const message: Record<string, unknown> = {
      message_id,
      from: userObject(from),
      chat: chatObject(chat, chat.type === "private" ? from : undefined),
      date: unixNow(),
    };
    let repliesToBot = false;
    if (input.replyToBot !== undefined && input.replyToBot !== false) {
      const target = typeof input.replyToBot === "number"
        ? this.#messages.get(input.replyToBot)
        : [...this.#messages.values()].findLast((m) => m.fromBot && m.chat.id === chat.id);
      if (!target?.fromBot || target.chat.id !== chat.id) {
        throw new Error(`no bot message to reply to in chat ${chat.id}`);
      }
      message.reply_to_message = { ...target.object };
      repliesToBot = true;
    }
    const entities = detectEntities(text);
    const hasMedia = input.photo || input.voice || input.document;
    if (input.photo) {
      const { width, height } = imageSize(input.photo);
      const scale = Math.min(1, 320 / Math.max(width, height));
      message.photo = [{ width: Math.round(width * scale), height: Math.round(height * scale) }, { width, height }].map(
        (size) => ({ ...FileStore.ref(this.#files.add(input.photo!, "photos", "jpg")), ...size }),
      );
    } else if (input.voice) {
      const file = this.#files.add(input.voice, "voice", "oga");
      message.voice = { ...FileStore.ref(file), duration: input.voiceDurationS ?? 1, mime_type: "audio/ogg" };
    } else if (input.document) {
      const extension = /\.(\w+)$/.exec(input.document.name)?.[1] ?? "bin";
      const file = this.#files.add(input.document.bytes, "documents", extension);
      message.document = { file_name: input.document.name, mime_type: input.document.mime, ...FileStore.ref(file) };
    } else if (!text) throw new Error("userSends needs text, a photo, a voice or a document");
    if (text) message[hasMedia ? "caption" : "text"] = text;
    if (entities.length) message[hasMedia ? "caption_entities" : "entities"] = entities;
    this.#messages.set(message_id, { chat, fromBot: false, object: message });
    const addressed = repliesToBot ||
      entities.some((e) =>
        (e.type === "mention" && text.slice(e.offset, e.offset + e.length).toLowerCase() === mention.toLowerCase()) ||
        e.type === "bot_command"
      );
    const hidden = chat.type !== "private" && this.#privacy && !addressed;
    return { ...this.#updates.add("message", message, hidden), message_id };
  }

  /**
   * A user presses an inline button of a message the bot sent: queues a `callback_query` update. Throws when the
   * message does not exist or carries no button with this callback data (the test is wrong, not the bot).
   *
   * @example
   * ```ts
   * await using fake = FakeTelegram.start();
   * declare const messageId: number; // a sendMessage the bot made with an inline keyboard
   * const { callback_query_id } = fake.userPresses({ from: { id: 42, first_name: "Ann" }, message_id: messageId, data: "yes" });
   * ```
   */
  userPresses(input: { from: FakeUser; message_id: number; data: string }): QueuedUpdate {
    const stored = this.#messages.get(input.message_id);
    if (!stored?.fromBot) throw new Error(`message ${input.message_id} is not a message the bot sent`);
    const rows = (stored.object.reply_markup as { inline_keyboard?: Array<Array<Record<string, unknown>>> } | undefined)
      ?.inline_keyboard ?? [];
    if (!rows.flat().some((button) => button.callback_data === input.data)) {
      throw new Error(
        `message ${input.message_id} has no inline button with callback_data ${JSON.stringify(input.data)}`,
      );
    }
    const callback: FakeCallback = {
      id: `${this.#bot.id}${String(this.#callbacks.size + 1).padStart(7, "0")}`,
      data: input.data,
      from: input.from,
      chat_id: stored.chat.id,
      message_id: input.message_id,
    };
    this.#callbacks.set(callback.id, callback);
    const payload = {
      id: callback.id,
      from: userObject(input.from),
      message: { ...stored.object },
      chat_instance: String(-stored.chat.id * 7919 + 13),
      data: input.data,
    };
    return {
      ...this.#updates.add("callback_query", payload, false, callback),
      message_id: input.message_id,
      callback_query_id: callback.id,
    };
  }

  /**
   * Callback queries the bot got and has not answered although it already sent or edited something in that chat
   * since (so it is not still deciding): the button's spinner keeps turning for the user.
   */
  unansweredCallbacks(): FakeCallback[] {
    return [...this.#callbacks.values()].filter((c) => c.deliveredAt !== undefined && !c.answer && c.respondedAt);
  }

  /** Answers the next `count` sends with 429 and `retry_after: retryAfterS`. */
  rateLimitNext(count: number, retryAfterS = 1): void {
    this.#rate.forceNext(count, retryAfterS);
  }

  /** For `ms`, every call is answered 502 with nginx's HTML page (a held long poll too); counts them in callsDuring. */
  outage(ms: number): void {
    this.#outageUntil = now() + ms;
    this.#outageCalls = 0;
    this.#updates.endPoll(badGatewayResponse());
  }

  /** From now on every call is answered 401 Unauthorized (the token was revoked in @BotFather); see revokedCalls. */
  revokeToken(): void {
    this.#revoked = true;
    this.#updates.endPoll(errorResponse(401, "Unauthorized"));
  }

  /** Resolves once `count` messages were sent (in all, or to `chatId`); fails after `limitMs` saying how many were. */
  waitForSent(count: number, options: { chatId?: number; limitMs?: number } = {}): Promise<SentMessage[]> {
    const matching = () => this.sent.filter((m) => options.chatId === undefined || m.chat_id === options.chatId);
    return waitFor(() => matching().length >= count, `${count} sent Telegram message(s) (got ${matching().length})`, {
      limitMs: options.limitMs ?? 10_000,
      everyMs: 5,
    }).then(matching);
  }

  /** Returns and clears the violations, for a test that provoked them on purpose. */
  takeViolations(): string[] {
    return this.violations.splice(0);
  }

  /** Ends a held poll, stops the server, and fails when any violation was recorded. */
  async close(): Promise<void> {
    this.#updates.endPoll(okResponse([]));
    await this.#server.shutdown();
    assert.deepEqual(this.violations, [], "the fake Telegram saw requests that break the Bot API contract");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- HTTP ----------------------------------------------------------------------------------------------------------

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (now() < this.#outageUntil) {
      this.#outageCalls++;
      await request.body?.cancel();
      return badGatewayResponse();
    }
    const match = /^\/(file\/)?bot([^/]*)\/(.*)$/.exec(url.pathname);
    if (this.#revoked && match) {
      this.#revokedCalls++;
      await request.body?.cancel();
      return errorResponse(401, "Unauthorized");
    }
    if (!match || match[2] !== this.#token) {
      await request.body?.cancel();
      this.violations.push(`${request.method} ${url.pathname}: ${match ? "wrong bot token" : "not a Bot API path"}`);
      return match ? errorResponse(401, "Unauthorized") : errorResponse(404, "Not Found");
    }
    if (match[1]) return this.#download(decodeURIComponent(match[3]!));
    const method = match[3]!;
    try {
      const wire = await readRequest(request, url).catch((error) => {
        throw error instanceof UnreadableBody ? new ApiError(400, `Bad Request: ${error.message}`) : error;
      });
      return await this.#dispatch(method, wire, request);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.violation) this.violations.push(`${method}: ${error.description}`);
      return errorResponse(error.code, error.description, error.parameters);
    }
  }

  #dispatch(method: string, wire: WireRequest, request: Request): Response | Promise<Response> {
    // The Bot API matches method names in any letter case.
    switch (method.toLowerCase()) {
      case "getme":
        return okResponse({
          id: this.#bot.id,
          is_bot: true,
          first_name: this.#bot.name,
          username: this.#bot.username,
          can_join_groups: true,
          can_read_all_group_messages: !this.#privacy,
          supports_inline_queries: false,
          can_connect_to_business: false,
          has_main_web_app: false,
        });
      case "getupdates":
        return this.#updates.getUpdates(wire.params, request);
      case "deletewebhook":
        if (["true", "1"].includes(stringParam(wire.params, "drop_pending_updates") ?? "")) this.#updates.drop();
        return okResponse(true);
      case "getwebhookinfo":
        return okResponse({ url: "", has_custom_certificate: false, pending_update_count: this.#updates.length });
      case "setmycommands":
        this.commands = (jsonField(wire.params, "commands", "commands") as unknown[] | undefined) ?? [];
        return okResponse(true);
      case "getmycommands":
        return okResponse(this.commands);
      case "sendmessage":
        return this.#sendMessage(wire.params);
      case "sendphoto":
        return this.#sendMedia("sendPhoto", "photo", wire);
      case "sendvoice":
        return this.#sendMedia("sendVoice", "voice", wire);
      case "senddocument":
        return this.#sendMedia("sendDocument", "document", wire);
      case "sendchataction":
        return this.#sendChatAction(wire.params);
      case "answercallbackquery":
        return this.#answerCallback(wire.params);
      case "editmessagetext":
        return this.#edit("editMessageText", wire.params);
      case "editmessagereplymarkup":
        return this.#edit("editMessageReplyMarkup", wire.params);
      case "deletemessage": {
        this.#messages.delete(this.#target(wire.params, "message to delete not found").id);
        return okResponse(true);
      }
      case "getfile": {
        const file = this.#files.byId(stringParam(wire.params, "file_id") ?? "");
        if (!file) throw new ApiError(400, "Bad Request: invalid file_id");
        return okResponse({ ...FileStore.ref(file), file_path: file.file_path });
      }
      default:
        throw new ApiError(404, "Not Found");
    }
  }

  #download(path: string): Response {
    const file = this.#files.byPath(path);
    if (!file) {
      this.violations.push(`file download: no file at ${path}`);
      return errorResponse(404, "Not Found");
    }
    return new Response(file.bytes.slice(), { headers: { "content-type": "application/octet-stream" } });
  }

  // --- Sending -------------------------------------------------------------------------------------------------------

  #chat(params: Record<string, unknown>): FakeChat {
    const raw = stringParam(params, "chat_id");
    if (raw === undefined) throw new ApiError(400, "Bad Request: chat_id is empty");
    const known = /^-?\d+$/.test(raw) ? this.#chats.get(Number(raw)) : undefined;
    if (!known) throw new ApiError(400, "Bad Request: chat not found");
    return known.chat;
  }

  #replyTo(params: Record<string, unknown>, chat: FakeChat): number | undefined {
    const reply = jsonField(params, "reply_parameters", "reply parameters") as Record<string, unknown> | undefined;
    const id = reply ? Number(reply.message_id) : intParam(params, "reply_to_message_id");
    if (id === undefined || Number.isNaN(id)) return undefined;
    const target = this.#messages.get(id);
    if (target && target.chat.id === Number(reply?.chat_id ?? chat.id)) return id;
    if (reply?.allow_sending_without_reply === true || params.allow_sending_without_reply === "true") return undefined;
    throw new ApiError(400, "Bad Request: message to be replied not found");
  }

  #sendMessage(params: Record<string, unknown>): Response {
    const chat = this.#chat(params);
    const parsed = parseField(params, "text", 4096, this.#strictHtml);
    const reply = this.#replyTo(params, chat);
    const markup = replyMarkup(params);
    this.#rate.check("sendMessage", chat);
    return this.#record("sendMessage", chat, params, parsed, markup, reply, {});
  }

  async #sendMedia(method: SentMessage["method"], field: SentMedia["field"], wire: WireRequest): Promise<Response> {
    const params = wire.params;
    const chat = this.#chat(params);
    const media = await uploadedMedia(method, field, wire, this.#files, this.violations);
    const parsed = parseField(params, "caption", 1024, this.#strictHtml);
    const reply = this.#replyTo(params, chat);
    const markup = replyMarkup(params);
    this.#rate.check(method, chat);
    const extension = field === "photo"
      ? "jpg"
      : field === "voice"
      ? "oga"
      : /\.(\w+)$/.exec(media.filename ?? "")?.[1] ?? "bin";
    const stored = this.#files.add(media.bytes ?? new Uint8Array(), `${field}s`, extension);
    const ref = FileStore.ref(stored);
    const content = field === "photo"
      ? { photo: [{ ...ref, ...imageSize(media.bytes ?? new Uint8Array()) }] }
      : field === "voice"
      ? { voice: { ...ref, duration: 1, mime_type: "audio/ogg" } }
      : {
        document: { ...ref, file_name: media.filename ?? "file", mime_type: media.mime ?? "application/octet-stream" },
      };
    return this.#record(method, chat, params, parsed, markup, reply, content, media);
  }

  #record(
    method: SentMessage["method"],
    chat: FakeChat,
    params: Record<string, unknown>,
    parsed: ParsedText & { raw: string },
    markup: Record<string, unknown> | undefined,
    reply: number | undefined,
    content: Record<string, unknown>,
    media?: SentMedia,
  ): Response {
    const message_id = this.#nextMessageId++;
    const isText = method === "sendMessage";
    const object: Record<string, unknown> = {
      message_id,
      from: { id: this.#bot.id, is_bot: true, first_name: this.#bot.name, username: this.#bot.username },
      chat: chatObject(chat, this.#chats.get(chat.id)?.user),
      date: unixNow(),
      ...(reply === undefined ? {} : { reply_to_message: this.#messages.get(reply)!.object }),
      ...content,
      ...(parsed.text ? { [isText ? "text" : "caption"]: parsed.text } : {}),
      ...(parsed.entities.length ? { [isText ? "entities" : "caption_entities"]: parsed.entities } : {}),
      ...(markup?.inline_keyboard ? { reply_markup: markup } : {}),
    };
    const parseMode = stringParam(params, "parse_mode");
    const sent: SentMessage = {
      method,
      chat_id: chat.id,
      message_id,
      text: parsed.text,
      raw: parsed.raw,
      ...(parseMode ? { parse_mode: parseMode } : {}),
      entities: parsed.entities,
      ...(markup ? { reply_markup: markup } : {}),
      ...(reply === undefined ? {} : { reply_to_message_id: reply }),
      ...(media ? { media } : {}),
      at: now(),
    };
    this.sent.push(sent);
    this.#messages.set(message_id, { chat, fromBot: true, object, sent });
    this.#responded(chat.id);
    return okResponse(object);
  }

  /** Marks the chat's delivered, unanswered callbacks as ones the bot has since acted on. */
  #responded(chatId: number): void {
    for (const callback of this.#callbacks.values()) {
      if (callback.chat_id === chatId && callback.deliveredAt !== undefined && !callback.answer) {
        callback.respondedAt ??= now();
      }
    }
  }

  #sendChatAction(params: Record<string, unknown>): Response {
    const chat = this.#chat(params);
    const action = stringParam(params, "action") ?? "";
    if (!CHAT_ACTIONS.has(action)) throw new ApiError(400, "Bad Request: wrong parameter action in request");
    this.chatActions.push({ chat_id: chat.id, action, at: now() });
    return okResponse(true);
  }

  #answerCallback(params: Record<string, unknown>): Response {
    const id = stringParam(params, "callback_query_id") ?? "";
    const callback = this.#callbacks.get(id);
    if (!callback || callback.deliveredAt === undefined) throw new ApiError(400, QUERY_INVALID);
    if (callback.answer) {
      this.violations.push(`answerCallbackQuery: callback query ${id} answered twice`);
      throw new ApiError(400, QUERY_INVALID, false);
    }
    const text = stringParam(params, "text");
    const alert = stringParam(params, "show_alert");
    callback.answer = { ...(text ? { text } : {}), ...(alert ? { show_alert: alert === "true" } : {}), at: now() };
    return okResponse(true);
  }

  #target(params: Record<string, unknown>, missing: string): { stored: StoredMessage; id: number } {
    const chat = this.#chat(params);
    const id = intParam(params, "message_id");
    if (id === undefined) throw new ApiError(400, "Bad Request: message identifier is not specified");
    const stored = this.#messages.get(id);
    if (!stored || stored.chat.id !== chat.id) throw new ApiError(400, `Bad Request: ${missing}`);
    return { stored, id };
  }

  #edit(method: RecordedEdit["method"], params: Record<string, unknown>): Response {
    if (stringParam(params, "inline_message_id")) {
      throw new ApiError(400, "Bad Request: the fake has no inline messages");
    }
    const { stored, id } = this.#target(params, "message to edit not found");
    if (!stored.fromBot) throw new ApiError(400, "Bad Request: message can't be edited");
    const parsed = method === "editMessageText" ? parseField(params, "text", 4096, this.#strictHtml) : undefined;
    const markup = replyMarkup(params);
    // Both methods drop the inline keyboard unless reply_markup is given again.
    const keyboard = markup?.inline_keyboard ? markup : undefined;
    const sameText = !parsed || parsed.text === stored.object.text;
    if (sameText && JSON.stringify(keyboard) === JSON.stringify(stored.object.reply_markup)) {
      throw new ApiError(400, NOT_MODIFIED);
    }
    if (parsed) {
      stored.object.text = parsed.text;
      if (parsed.entities.length) stored.object.entities = parsed.entities;
      else delete stored.object.entities;
    }
    if (keyboard) stored.object.reply_markup = keyboard;
    else delete stored.object.reply_markup;
    stored.object.edit_date = unixNow();
    if (stored.sent) {
      if (parsed) Object.assign(stored.sent, { text: parsed.text, raw: parsed.raw, entities: parsed.entities });
      if (keyboard) stored.sent.reply_markup = keyboard;
      else delete stored.sent.reply_markup;
    }
    this.edits.push({
      method,
      chat_id: stored.chat.id,
      message_id: id,
      ...(parsed ? { text: parsed.text } : {}),
      ...(keyboard ? { reply_markup: keyboard } : {}),
      at: now(),
    });
    this.#responded(stored.chat.id);
    return okResponse(stored.object);
  }
}
