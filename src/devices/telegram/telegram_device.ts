/**
 * Telegram through the Bot API, as one Device (`telegram`): long polling `getUpdates` (no public address needed),
 * private chats and groups (`telegram:private:<chat id>`, `telegram:group:<chat id>`), trust from `telegram.owner`,
 * `allow_users` and `allow_groups` (as QQ's), in a group only messages that @-mention the bot or reply to it.
 *
 * Once-only processing across restarts: the updates of an answer are handed in, then the next offset is written
 * (`offset_store.ts`), then asked for; an update seen twice (a crash between the two) is caught by its `update_id`.
 * Side effects of an answer (callback answers, keyboard removals, typing) go after the offset is kept, so a restart
 * never does them twice. Polling failures back off with the one {@link Backoff}; a revoked token (401) is said in
 * status and the log and retried once a minute at most. While polling cannot reach Telegram, replies wait in the IO
 * queue ({@link TelegramDevice.canSend}) and go once a poll succeeds.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import { AllowList, type Conversation } from "../../chat_policy/allow_list.ts";
import { Pacer } from "../../chat_policy/pacer.ts";
import { RecentMap } from "../../chat_policy/recent.ts";
import type { Clock } from "../../clock.ts";
import { type Device, type DeviceContext, SendInterrupted, type TurnEvent } from "../../io/device.ts";
import { Capability, type InputRef, type OutputEvent } from "../../io/event.ts";
import type { MessageAttachment } from "../../io/message_payload.ts";
import { LogLimiter } from "../../log/rate_limit.ts";
import { Backoff, type BackoffPolicy, dial, type Dialling } from "../../service/backoff.ts";
import { statusTool } from "../../tools/status_tool.ts";
import type { Tool } from "../../tools/tool.ts";
import { BotApi, TelegramError } from "./bot_api.ts";
import { TelegramTyping } from "./telegram_typing.ts";
import { OffsetStore } from "./offset_store.ts";
import { CAPTION_LIMIT, mediaUpload, type Piece, PieceSender, textPieces } from "./outgoing.ts";
import { type IncomingCallback, type IncomingMessage, readUpdate } from "./updates.ts";

/** The `telegram.*` settings the device uses. */
export interface TelegramSettings {
  token: string;
  apiUrl: string;
  owner: string;
  allowUsers: readonly string[];
  allowGroups: readonly string[];
  splitAt: number;
  minSendIntervalMs: number;
  pollTimeoutMs: number;
  queueLimit: number;
  /** `<data_dir>/telegram`: where the offset is kept. */
  dataDir: string;
}

/** What the device needs of homed's media: the bytes of media the butler sends. */
export interface TelegramMedia {
  read(id: string): Promise<Uint8Array | undefined>;
}

/** Options of {@link TelegramDevice}. */
export interface TelegramDeviceOptions {
  settings: TelegramSettings;
  clock: Clock;
  /** In [0, 1), for the backoff's jitter. */
  random: () => number;
  logger: Logger;
  /** Without it, no image, voice or file can be sent. */
  media?: TelegramMedia;
  /** Polling's backoff after a failure (default 1 s doubling to 60 s, ±20%). */
  backoff?: BackoffPolicy;
  /** The wait after a 401 before asking again (default 60 s: a revoked token is not fixed in seconds). */
  unauthorizedWaitMs?: number;
}

/** The largest file the Bot API lets a bot download (`getFile`), and so the most `locate` reads. */
const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;
/** How long `start` waits for the first poll before going on (the loop goes on behind it). */
const START_WAIT_MS = 3_000;
/** Telegram shows "typing…" for 5 s: sent again this often while a turn runs, at most this long. */

/**
 * Parses a `telegram:private:<id>` / `telegram:group:<id>` channel; `undefined` for anything else.
 *
 * @example
 * ```ts
 * conversationOf("telegram:group:-1001234567890"); // { kind: "group", id: "-1001234567890" }
 * ```
 */
export function conversationOf(channel: string): Conversation | undefined {
  const match = /^telegram:(private|group):(-?\d{1,20})$/.exec(channel);
  return match ? { kind: match[1] as Conversation["kind"], id: match[2]! } : undefined;
}

/**
 * The channel of a conversation — {@link conversationOf}'s inverse.
 *
 * @example
 * ```ts
 * channelOf({ kind: "private", id: "42" }); // "telegram:private:42"
 * ```
 */
export function channelOf(conversation: Conversation): string {
  return `telegram:${conversation.kind}:${conversation.id}`;
}

/** A callback's data: the decision on a confirmation. */
const DECISION = /^(confirm|deny):([0-9a-f]{4,8})$/;

/** The `telegram` channel. */
export class TelegramDevice implements Device {
  readonly name = "telegram";
  readonly type = "telegram";
  /** People send several short lines in a row: a burst waiting together is answered in one turn. */
  readonly coalesces = true;
  readonly description =
    "Telegram bot: telegram:private:<chat id> for a person, telegram:group:<chat id> for a group; text, images, voice and files";
  #options: TelegramDeviceOptions;
  #api: BotApi;
  #store: OffsetStore;
  #allow: AllowList;
  #pacer: Pacer;
  #sender: PieceSender;
  #limiter: LogLimiter;
  #context: DeviceContext | undefined;
  #stop: AbortController | undefined;
  #dialling: Dialling | undefined;
  #offset: number | undefined;
  /** Updates already handed in (a crash between emit and the offset's write delivers them again). */
  #handled = new RecentMap<number, true>(1_000);
  /** Messages whose buttons were taken away (`chat:message`): a second tap edits nothing Telegram would refuse. */
  #unbuttoned = new RecentMap<string, true>(1_000);
  #bot: { id: string; username: string } | undefined;
  /** Polling reached Telegram last time (undefined: not asked yet). */
  #connected: boolean | undefined;
  /** Telegram could not be reached (not a refusal such as a 401): replies wait in the IO queue meanwhile. */
  #unreachable = false;
  #connectedSince: number | undefined;
  #lastMessageAt: number | undefined;
  #lastError: string | undefined;
  /** Pieces not sent yet of outputs whose send failed half-way, for their next send. */
  #left = new WeakMap<OutputEvent, Piece[]>();
  /** Turns running per chat (input id → chat id), and each chat's typing timer. */
  #typing: TelegramTyping;
  #counts = { inputs: 0, ignored: 0, sent: 0, failed: 0, rate_limited: 0, format_fallbacks: 0 };

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   * import { log } from "../../log/logging.ts";
   *
   * const telegram = new TelegramDevice({
   *   settings: {
   *     token: "123456789:AAExampleExampleExampleExampleExam",
   *     apiUrl: "https://api.telegram.org",
   *     owner: "42",
   *     allowUsers: [],
   *     allowGroups: [],
   *     splitAt: 4096,
   *     minSendIntervalMs: 1_000,
   *     pollTimeoutMs: 30_000,
   *     queueLimit: 100,
   *     dataDir: "/var/lib/homed/telegram",
   *   },
   *   clock: systemClock,
   *   random: Math.random,
   *   logger: log("telegram"),
   * });
   * ```
   */
  constructor(options: TelegramDeviceOptions) {
    this.#options = options;
    const { settings, clock } = options;
    this.#api = new BotApi({ apiUrl: settings.apiUrl, token: settings.token, clock });
    this.#store = new OffsetStore(join(settings.dataDir, "offset.json"));
    this.#allow = new AllowList({ owner: settings.owner, users: settings.allowUsers, groups: settings.allowGroups });
    this.#pacer = new Pacer(clock, settings.minSendIntervalMs);
    this.#limiter = new LogLimiter({ clock });
    this.#typing = new TelegramTyping({
      clock,
      send: (chatId, timeoutMs) =>
        this.#api.call("sendChatAction", { chat_id: chatId, action: "typing" }, {
          ...(this.#stop ? { signal: this.#stop.signal } : {}),
          timeoutMs,
        }),
    });
    this.#sender = new PieceSender({
      api: this.#api,
      clock,
      pacer: this.#pacer,
      counts: this.#counts,
      signal: () => this.#stop?.signal,
      onFallback: (description) =>
        this.#log.warning("Telegram refused a message's formatting ({description}); sent it as plain text", {
          description,
        }),
    });
  }

  get #log(): Logger {
    return this.#options.logger;
  }

  /** The device's tools, made once so every device-table change registers the same objects. */
  #tools: readonly Tool[] = [statusTool(
    "telegram_status",
    "Whether the Telegram bot reaches Telegram (connected since, last message, last error), its username, and counts of messages in and out.",
    () => this.status(),
  )];

  tools(): readonly Tool[] {
    return this.#tools;
  }

  outputCapabilities(): number {
    return Capability.Text | Capability.Image | Capability.Audio | Capability.File;
  }

  /** Starts polling; waits at most a few seconds for the first answer (the loop goes on behind). Twice is once. */
  async start(context: DeviceContext): Promise<void> {
    this.#context = context;
    if (this.#dialling) return;
    const stop = new AbortController();
    this.#stop = stop;
    this.#dialling = dial({
      clock: this.#options.clock,
      waitMs: START_WAIT_MS,
      loop: (settled) => this.#poll(stop.signal, settled),
      onError: (error) => this.#log.error("Telegram polling stopped on a bug: {error}", { error }),
    });
    await this.#dialling.started;
  }

  /** Stops polling (the held poll is aborted), pending waits and typing. Twice is once. */
  async stop(): Promise<void> {
    this.#stop?.abort(new Error("homed is stopping"));
    await this.#dialling?.run;
    this.#dialling = undefined;
    await this.#typing.stop();
    this.#limiter.flush();
    this.#connected = undefined;
    this.#unreachable = false;
  }

  /** For `/api/status`: plain JSON. */
  status(): Record<string, unknown> {
    const iso = (ms: number | undefined) => ms === undefined ? null : new Date(ms).toISOString();
    return {
      connected: this.#connected === true,
      connected_since: iso(this.#connectedSince),
      last_message_at: iso(this.#lastMessageAt),
      last_error: this.#lastError ?? null,
      bot_username: this.#bot?.username ?? null,
      queued_replies: this.#context?.waiting() ?? 0,
      ...this.#counts,
    };
  }

  /** Replies can go unless the last poll failed to reach Telegram (then they wait in the IO queue). */
  canSend(_event: OutputEvent): boolean {
    return !this.#unreachable;
  }

  /** Replies wait for Telegram in the channel's queue, at most `telegram.queue_limit`. */
  get hold(): { limit: number; setting: string } {
    return { limit: this.#options.settings.queueLimit, setting: "telegram.queue_limit" };
  }

  /** Typing stops when the turn it was for ends. */
  onTurnEvent(event: TurnEvent): void {
    if (event.type === "done") this.#typing.end(event.eventId);
  }

  // --- Polling -------------------------------------------------------------------------------------------------------

  async #poll(signal: AbortSignal, settled: () => void): Promise<void> {
    const { clock, random, settings } = this.#options;
    const backoff = new Backoff(this.#options.backoff ?? { minMs: 1_000, maxMs: 60_000, jitter: 0.2 }, random);
    const stored = await this.#store.read();
    if (stored.offset !== undefined) this.#offset = stored.offset;
    else if (stored.problem) {
      this.#log.warning("Telegram: {problem}; starting from Telegram's own unconfirmed updates", {
        problem: stored.problem,
      });
    }
    let prepared = false, polled = false;
    while (!signal.aborted) {
      let wait = 0;
      try {
        if (!prepared) {
          await this.#prepare(signal);
          prepared = true;
        }
        // The first poll is answered at once (timeout 0): start waits for it, and a quiet bot's long poll is held
        // for the whole poll timeout — homed's listener would open that much later.
        const updates = await this.#api.call("getUpdates", {
          ...(this.#offset === undefined ? {} : { offset: this.#offset }),
          timeout: polled ? Math.round(settings.pollTimeoutMs / 1000) : 0,
          allowed_updates: ["message", "callback_query"],
        }, { signal, timeoutMs: settings.pollTimeoutMs + 15_000 });
        polled = true;
        this.#reached();
        backoff.reset();
        settled();
        await this.#handle(Array.isArray(updates) ? updates : [], signal);
      } catch (error) {
        if (signal.aborted) break;
        settled();
        wait = this.#failed(error, backoff);
      }
      if (wait > 0) await clock.sleep(wait, signal).catch(() => {});
    }
  }

  /** Once per start: who the bot is (its @username marks mentions), and no webhook in the way of getUpdates. */
  async #prepare(signal: AbortSignal): Promise<void> {
    const me = (await this.#api.call("getMe", {}, { signal, timeoutMs: 15_000 })) as
      | { id?: unknown; username?: unknown }
      | null;
    if (typeof me?.id !== "number" || typeof me.username !== "string") {
      throw new TelegramError("getMe", 0, "answered without the bot's id and username");
    }
    this.#bot = { id: String(me.id), username: me.username };
    // A webhook set elsewhere makes every getUpdates fail with 409; pending updates are kept. Best effort: a Bot API
    // server without the method (a local one, a proxy) still takes getUpdates, and a 409 later says what is wrong.
    try {
      await this.#api.call("deleteWebhook", { drop_pending_updates: false }, { signal, timeoutMs: 15_000 });
    } catch (error) {
      if (signal.aborted || (error instanceof TelegramError && error.code === 401)) throw error;
      this.#log.warning("Telegram: could not remove a webhook ({error}); polling anyway", {
        error: error instanceof Error ? error.message : String(error),
      });
    }
    this.#log.info("Telegram bot @{username} is polling for messages", { username: me.username });
  }

  /** A poll answered: the connection is up (again), and replies that waited go. */
  #reached(): void {
    const was = this.#connected;
    const held = this.#unreachable;
    this.#unreachable = false;
    if (was !== true || held) {
      if (was !== true) this.#connectedSince = this.#options.clock.now();
      this.#connected = true;
      this.#lastError = undefined;
      if (was === false) this.#log.info("Telegram is reachable again");
      this.#context?.readyAgain();
    }
  }

  /** Notes a failed poll; the wait before the next, ms. */
  #failed(error: unknown, backoff: Backoff): number {
    const failure = error instanceof TelegramError ? error : new TelegramError("getUpdates", 0, String(error));
    if (failure.code === 401) {
      this.#connected = false;
      this.#lastError = "Telegram refuses telegram.token (401 Unauthorized): the token was revoked or is wrong. Get " +
        "the bot's current token from @BotFather (/token), set telegram.token and restart homed";
      this.#log.error("{error}", { error: this.#lastError });
      return this.#options.unauthorizedWaitMs ?? 60_000;
    }
    if (failure.code === 429) return Math.max(1, failure.retryAfterS ?? 1) * 1000;
    if (failure.code === 409) {
      this.#lastError = `${failure.description}: another program polls with this bot's token (telegram.token), or ` +
        "set a webhook; stop it, or give homed a bot of its own";
    } else {
      this.#lastError = failure.transient
        ? `cannot reach Telegram at telegram.api_url (${this.#options.settings.apiUrl}): ${failure.message}`
        : failure.message;
    }
    if (failure.transient) this.#connected = false;
    this.#unreachable ||= failure.transient;
    const wait = backoff.next();
    const summary = (count: number, seconds: number) =>
      this.#log.warning("{count} more Telegram polls failed in the last {seconds} s", { count, seconds });
    if (this.#limiter.allow("poll", summary)) {
      this.#log.warning("Telegram polling failed: {error}; trying again in {seconds} s", {
        error: this.#lastError,
        seconds: Math.round(wait / 100) / 10,
      });
    }
    return wait;
  }

  /** One answer's updates: handed in, then the offset kept, then their side effects. */
  async #handle(updates: unknown[], signal: AbortSignal): Promise<void> {
    const bot = this.#bot!;
    const after: Array<() => Promise<unknown>> = [];
    let next = this.#offset;
    for (const raw of updates) {
      const update = readUpdate(raw, bot);
      if (!update) continue;
      next = Math.max(next ?? 0, update.updateId + 1);
      if (this.#handled.has(update.updateId)) continue;
      this.#handled.set(update.updateId, true);
      if (update.kind === "message") this.#onMessage(update, after);
      else if (update.kind === "callback") this.#onCallback(update, after);
    }
    if (next !== undefined && next !== this.#offset) {
      try {
        await this.#store.write(next);
      } catch (error) {
        // The next poll still confirms them to Telegram; only a restart before the next write could repeat them.
        this.#log.error("Telegram: cannot keep the update offset in {path}: {error}", {
          path: this.#store.path,
          error: (error as Error).message,
        });
      }
      this.#offset = next;
    }
    for (const effect of after) {
      if (signal.aborted) break;
      await effect().catch((error: unknown) =>
        this.#log.info("Telegram: {error}", { error: error instanceof Error ? error.message : String(error) })
      );
    }
  }

  #onMessage(message: IncomingMessage, after: Array<() => Promise<unknown>>): void {
    const context = this.#context;
    if (!context || message.fromBot || message.userId === this.#bot?.id) return;
    const { conversation, userId } = message;
    const trust = this.#allow.trustOf(userId, conversation);
    if (!trust) return this.#ignored(message);
    if (!message.addressed) return; // group chatter not addressed to the butler
    if (message.text === "" && message.attachments.length === 0) return;
    this.#lastMessageAt = this.#options.clock.now();
    const input = context.emit({
      source: channelOf(conversation),
      sender: userId,
      trust,
      type: "message",
      payload: {
        text: message.text === "" ? "(sent an attachment)" : message.text,
        ...(message.display ? { display: message.display } : {}),
        message_id: message.messageId,
        ...(message.attachments.length ? { attachments: message.attachments } : {}),
      },
      handle: { message_id: message.messageId, chat_id: message.chatId },
    });
    this.#counts.inputs++;
    // Not awaited: the next poll never waits for "typing…" (a burst of a hundred chats used to wait for each).
    after.push(() => Promise.resolve(this.#typing.begin(input.id, message.chatId)));
  }

  #ignored(message: IncomingMessage): void {
    this.#counts.ignored++;
    const summary = (count: number, seconds: number) =>
      this.#log.info("Ignored {count} more Telegram messages like this in the last {seconds} s", { count, seconds });
    if (!this.#limiter.allow("ignored", summary)) return;
    this.#log.info("Ignored a Telegram {kind} message from {userId}{where}: not the owner, a listed user or group", {
      kind: message.conversation.kind,
      userId: message.userId,
      where: message.conversation.kind === "group" ? ` in group ${message.chatId}` : "",
    });
  }

  /**
   * A button pressed: answered exactly once; the owner's Approve / Deny becomes their `/confirm <id>` or `/deny <id>`
   * in that chat, and the buttons go; anyone else's press decides nothing.
   */
  #onCallback(callback: IncomingCallback, after: Array<() => Promise<unknown>>): void {
    const decision = DECISION.exec(callback.data);
    const owner = this.#options.settings.owner;
    const answer = (text: string) => () =>
      this.#api.call("answerCallbackQuery", { callback_query_id: callback.callbackId, text, show_alert: false }, {
        ...(this.#stop ? { signal: this.#stop.signal } : {}),
        timeoutMs: 15_000,
      });
    if (!decision || !callback.chatId || !this.#context) return void after.push(answer("This button does nothing now"));
    if (owner === "" || callback.userId !== owner) {
      this.#log.info("Telegram: {userId} pressed {data}; only the owner decides", {
        userId: callback.userId,
        data: callback.data,
      });
      return void after.push(answer("Only the owner decides"));
    }
    const [, verb, id] = decision;
    const conversation: Conversation = { kind: callback.chatKind ?? "private", id: callback.chatId };
    this.#lastMessageAt = this.#options.clock.now();
    this.#context.emit({
      source: channelOf(conversation),
      sender: owner,
      trust: "owner",
      type: "message",
      payload: { text: `/${verb} ${id}` },
      handle: { chat_id: callback.chatId, ...(callback.messageId ? { message_id: callback.messageId } : {}) },
    });
    this.#counts.inputs++;
    after.push(answer(verb === "confirm" ? "Approved" : "Denied"));
    const pressed = `${callback.chatId}:${callback.messageId}`;
    if (callback.messageId && !this.#unbuttoned.has(pressed)) {
      this.#unbuttoned.set(pressed, true);
      const messageId = Number(callback.messageId);
      after.push(() =>
        this.#api.call("editMessageReplyMarkup", { chat_id: callback.chatId, message_id: messageId }, {
          ...(this.#stop ? { signal: this.#stop.signal } : {}),
          timeoutMs: 15_000,
        })
      );
    }
  }

  // --- Sending -------------------------------------------------------------------------------------------------------

  /**
   * Sends one output; resolves once Telegram accepted every piece. A failure to reach Telegram half-way rejects with
   * `SendInterrupted`, the pieces left kept for the next call; Telegram's refusal of a piece rejects with its reason.
   */
  async send(event: OutputEvent): Promise<void> {
    const conversation = conversationOf(event.target);
    if (!conversation) {
      throw new TypeError(
        `Telegram channels are telegram:private:<chat id> or telegram:group:<chat id>, got ${
          JSON.stringify(event.target)
        }`,
      );
    }
    const pieces = this.#left.get(event) ?? await this.#pieces(event, conversation);
    this.#left.delete(event);
    for (let i = 0; i < pieces.length; i++) {
      try {
        await this.#sender.send(conversation.id, pieces[i]!);
      } catch (error) {
        if (error instanceof TelegramError && error.transient && !this.#stop?.signal.aborted) {
          this.#left.set(event, pieces.slice(i));
          this.#unreachable = true;
          this.#lastError =
            `cannot reach Telegram at telegram.api_url (${this.#options.settings.apiUrl}): ${error.message}`;
          throw new SendInterrupted(`Telegram went away after ${i} of ${pieces.length} pieces: ${error.message}`);
        }
        if (error instanceof TelegramError && error.code === 401) {
          this.#lastError = "Telegram refuses telegram.token (401 Unauthorized): get the bot's current token from " +
            "@BotFather (/token), set telegram.token and restart homed";
        }
        throw error;
      }
    }
  }

  /** The output as pieces: text split and quoted in a group; media as an upload with its caption or a text after. */
  async #pieces(event: OutputEvent, conversation: Conversation): Promise<Piece[]> {
    const text = typeof event.payload.text === "string" ? event.payload.text : "";
    const answered = event.replyTo;
    const quote = conversation.kind === "group" && answered?.source === channelOf(conversation)
      ? answered.handle?.message_id
      : undefined;
    const { splitAt } = this.#options.settings;
    if (event.type === "image" || event.type === "audio" || event.type === "file") {
      const bytes = await this.#mediaBytes(event);
      const name = typeof event.payload.name === "string" ? event.payload.name : undefined;
      const { method, upload } = mediaUpload(event.type, bytes, name);
      const fits = text !== "" && text.length <= CAPTION_LIMIT;
      const media: Piece = {
        kind: "media",
        method,
        upload,
        ...(fits ? { caption: text } : {}),
        ...(quote ? { replyTo: quote } : {}),
      };
      return [media, ...(text !== "" && !fits ? textPieces(text, splitAt) : [])];
    }
    const body = event.type === "structured" ? (text || JSON.stringify(event.payload.data ?? null)) : text;
    return textPieces(body, splitAt, quote);
  }

  /** The bytes of held media (`payload.media`): homed uploads them; a URL is never handed to Telegram to fetch. */
  async #mediaBytes(event: OutputEvent): Promise<Uint8Array> {
    const id = event.payload.media;
    if (typeof id !== "string") {
      throw new TypeError(
        `Telegram sends only media homed holds (payload.media, an id of the media cache); this ${event.type} output names none`,
      );
    }
    const held = await this.#options.media?.read(id);
    if (!held || held.length === 0) {
      throw new TypeError(`The media ${JSON.stringify(id)} is not held by homed (any more)`);
    }
    return held;
  }

  /**
   * An attachment's bytes: `getFile`, then the download (the token is in that URL, so it is fetched here and never
   * handed on), at most 20 MB (the Bot API's own limit) and within a minute.
   */
  async locate(_input: InputRef, attachment: MessageAttachment): Promise<Uint8Array | undefined> {
    if (!attachment.file) return undefined;
    const signal = this.#stop?.signal;
    const file = (await this.#api.call("getFile", { file_id: attachment.file }, {
      ...(signal ? { signal } : {}),
      timeoutMs: 15_000,
    })) as { file_path?: unknown; file_size?: unknown } | null;
    if (typeof file?.file_path !== "string") return undefined;
    if (typeof file.file_size === "number" && file.file_size > MAX_DOWNLOAD_BYTES) {
      throw new RangeError(
        `The Telegram file is ${file.file_size} bytes, over the ${MAX_DOWNLOAD_BYTES} a bot may fetch`,
      );
    }
    return await this.#api.download(file.file_path, MAX_DOWNLOAD_BYTES, {
      ...(signal ? { signal } : {}),
      timeoutMs: 60_000,
    });
  }
}
