/**
 * Personal WeChat through Tencent's iLink bot API, as one Device (`weixin`): private chats only, channel
 * `weixin:private:<user id>`. One long poll at a time (`getupdates`); each answer's messages from the owner and listed
 * users become inputs, and only then is the answer's cursor kept on disk (a restart neither loses nor repeats; a
 * message id seen again is dropped). Replies go out one item per `sendmessage`, split at `weixin.split_at`, paced at
 * `weixin.min_send_interval`, each with the `context_token` of the message it answers or the person's latest — the
 * only way the service lets a bot write, about ten sends per token. A message homed starts itself when no token is
 * left fails with {@link WeixinUndeliverable} naming the person and why, never silently. The typing indicator runs
 * while a turn does. A stale session (-14) pauses the channel (one check per `expiredRecheckMs`) until a new login;
 * network failures back off; replies wait in the IO queue meanwhile.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { OwnerNotice } from "../kind.ts";
import { type Clock, sleepWith } from "../../clock.ts";
import { AllowList } from "../../chat_policy/allow_list.ts";
import { Pacer } from "../../chat_policy/pacer.ts";
import { RecentMap } from "../../chat_policy/recent.ts";
import { SeenMessages } from "../../chat_policy/seen_messages.ts";
import { splitText } from "../../chat_policy/split_text.ts";
import { type Device, type DeviceContext, SendInterrupted, type TurnEvent, Undeliverable } from "../../io/device.ts";
import { Capability, type InputRef, type OutputEvent } from "../../io/event.ts";
import type { MessageAttachment } from "../../io/message_payload.ts";
import { LogLimiter } from "../../log/rate_limit.ts";
import { Backoff, type BackoffPolicy } from "../../service/backoff.ts";
import { statusTool } from "../../tools/status_tool.ts";
import type { Tool } from "../../tools/tool.ts";
import { IlinkApiError, IlinkClient, IlinkTransportError, isSessionExpired, type WireMessage } from "./ilink_client.ts";
import { plainText, readInbound } from "./weixin_messages.ts";
import { downloadMedia, type InboundMedia, uploadMedia } from "./weixin_media.ts";
import { loadWeixinLogin, WeixinState } from "./weixin_state.ts";
import { WeixinTyping } from "./weixin_typing.ts";

/** The `weixin.*` settings the device uses, and where its state lives. */
export interface WeixinSettings {
  /** `weixin.token`; "" to use the one a login stored. */
  token: string;
  baseUrl: string;
  cdnUrl: string;
  owner: string;
  allowUsers: readonly string[];
  splitAt: number;
  minSendIntervalMs: number;
  /** How long the server is asked to hold a poll until it says (`longpolling_timeout_ms`). */
  pollTimeoutMs: number;
  queueLimit: number;
  /** `daemon.data_dir`: the state is in its `weixin/`. */
  dataDir: string;
}

/** What the device needs of homed's media, injected: the bytes of media the butler sends. */
export interface WeixinMedia {
  read(id: string): Promise<Uint8Array | undefined>;
}

/** Options of {@link WeixinDevice}. */
export interface WeixinDeviceOptions {
  settings: WeixinSettings;
  clock: Clock;
  logger: Logger;
  /** Without it no image or file can be sent. */
  media?: WeixinMedia;
  /** In [0, 1), for the backoff's jitter. */
  random?: () => number;
  /** The retry policy for network errors and 5xx (default 2 s growing to 30 s, as the official client). */
  retry?: BackoffPolicy;
  /** How often a stale session or a missing login is checked again (default 10 minutes). */
  recheckMs?: number;
  /** Sends one context token carries (default {@link SENDS_PER_CONTEXT_TOKEN}, as reported of the live service). */
  sendsPerToken?: number;
  /** Tells the owner on another chat (the session expired: WeChat cannot carry that news itself). */
  tellOwner?: (notice: OwnerNotice) => void;
}

/** A message could not be delivered because WeChat gives the butler no way to write to that person now. */
export class WeixinUndeliverable extends Undeliverable {
  readonly user: string;
  /**
   * @example
   * ```ts
   * const error = new WeixinUndeliverable("o9cq80abc@im.wechat", "they have not written yet");
   * error.message.includes("o9cq80abc@im.wechat"); // true
   * ```
   */
  constructor(user: string, why: string) {
    super(
      `Could not deliver to WeChat user ${user}: WeChat lets the butler write only within a while after the ` +
        `person's last message, and ${why}. Tell them another way, or ask them to write to the butler on WeChat.`,
    );
    this.name = "WeixinUndeliverable";
    this.user = user;
  }
}

/** Sends one inbound message's context token carries on the live service (reported). */
export const SENDS_PER_CONTEXT_TOKEN = 10;
const DEFAULT_RETRY: BackoffPolicy = { minMs: 2_000, maxMs: 30_000, multiplier: 2, jitter: 0.1 };
/** A WeChat user id as `weixin.owner` takes it (`config/schema_people.ts`): anything before `@im.wechat`. */
const USER_ID = /^[^\s@]{1,128}@im\.wechat$/;
/** One key: the service throttles the bot as a whole, not per conversation. */
const PACE_KEY = "bot";

/**
 * The WeChat user of a `weixin:private:<id>` channel; undefined for anything else.
 *
 * @example
 * ```ts
 * conversationOf("weixin:private:o9cq80abc@im.wechat"); // { kind: "private", id: "o9cq80abc@im.wechat" }
 * ```
 */
export function conversationOf(channel: string): { kind: "private"; id: string } | undefined {
  const match = /^weixin:private:(.+)$/.exec(channel);
  return match && USER_ID.test(match[1]!) ? { kind: "private", id: match[1]! } : undefined;
}

/**
 * The channel of a WeChat user — {@link conversationOf}'s inverse.
 *
 * @example
 * ```ts
 * channelOf({ kind: "private", id: "o9cq80abc@im.wechat" }); // "weixin:private:o9cq80abc@im.wechat"
 * ```
 */
export function channelOf(conversation: { kind: "private"; id: string }): string {
  return `weixin:private:${conversation.id}`;
}

/** One piece of an output: a text, or media homed holds. */
type Piece = { text: string } | { media: string; kind: "image" | "file"; name?: string };

/** The `weixin` channel. */
export class WeixinDevice implements Device {
  readonly name = "weixin";
  readonly type = "weixin";
  readonly coalesces = true;
  readonly description =
    "Personal WeChat (iLink bot API): weixin:private:<user id>, private chats only; text, images and files. " +
    "The butler can write to a person only for a while after their last message.";
  readonly #options: WeixinDeviceOptions;
  readonly #client: IlinkClient;
  readonly #state: WeixinState;
  readonly #allow: AllowList;
  readonly #pacer: Pacer;
  readonly #seen: SeenMessages;
  readonly #limiter: LogLimiter;
  readonly #backoff: Backoff;
  readonly #typing: WeixinTyping;
  /** Sends made per context token (the latest per user are also on disk). */
  readonly #tokenSends = new RecentMap<string, number>(1_000);
  /** Where each recent attachment is on the CDN, by the `file` name its input carries. */
  readonly #media = new RecentMap<string, InboundMedia>(500);
  /** Pieces not sent yet of outputs whose send was interrupted. */
  readonly #left = new WeakMap<OutputEvent, Piece[]>();
  #context: DeviceContext | undefined;
  #stop: AbortController | undefined;
  #run: Promise<void> | undefined;
  #wake: AbortController | undefined;
  #token: string | undefined;
  /** The token the service called stale, until another one is found. */
  #expiredToken: string | undefined;
  #expiredSince: number | undefined;
  #connected = false;
  /** A poll or send failed for the network: replies wait until a poll succeeds again. */
  #down = false;
  #connectedSince: number | undefined;
  #lastMessageAt: number | undefined;
  #lastError: string | undefined;
  #serverHoldMs: number;
  #warnedBase = false;
  #counts = { inputs: 0, ignored: 0, repeated: 0, sent: 0, failed: 0, undeliverable: 0 };

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   * import { log } from "../../log/logging.ts";
   *
   * const weixin = new WeixinDevice({
   *   settings: {
   *     token: "",
   *     baseUrl: "https://ilinkai.weixin.qq.com",
   *     cdnUrl: "https://novac2c.cdn.weixin.qq.com/c2c",
   *     owner: "o9cq80abc@im.wechat",
   *     allowUsers: [],
   *     splitAt: 2_000,
   *     minSendIntervalMs: 1_000,
   *     pollTimeoutMs: 35_000,
   *     queueLimit: 100,
   *     dataDir: "/var/lib/homed",
   *   },
   *   clock: systemClock,
   *   logger: log("weixin"),
   * });
   * ```
   */
  constructor(options: WeixinDeviceOptions) {
    this.#options = options;
    const { settings, clock } = options;
    this.#client = new IlinkClient({ baseUrl: settings.baseUrl, token: () => this.#token, clock });
    this.#state = new WeixinState(settings.dataDir);
    this.#allow = new AllowList({ owner: settings.owner, users: settings.allowUsers, groups: [] });
    this.#pacer = new Pacer(clock, settings.minSendIntervalMs);
    this.#seen = new SeenMessages({ clock });
    this.#limiter = new LogLimiter({ clock });
    this.#backoff = new Backoff(options.retry ?? DEFAULT_RETRY, options.random ?? Math.random);
    this.#typing = new WeixinTyping(this.#client, options.logger);
    this.#serverHoldMs = settings.pollTimeoutMs;
  }

  get #sendsPerToken(): number {
    return this.#options.sendsPerToken ?? SENDS_PER_CONTEXT_TOKEN;
  }

  get #log(): Logger {
    return this.#options.logger;
  }

  #tools: readonly Tool[] = [statusTool(
    "weixin_status",
    "Whether WeChat is logged in and connected, since when, the last message, the last error, whether the session " +
      "expired (then the owner must run `homed weixin login`), and counts of messages and undeliverable sends.",
    () => this.status(),
  )];

  tools(): readonly Tool[] {
    return this.#tools;
  }

  outputCapabilities(): number {
    return Capability.Text | Capability.Image | Capability.File;
  }

  async start(context: DeviceContext): Promise<void> {
    this.#context = context;
    if (this.#run) return;
    const stop = this.#stop = new AbortController();
    try {
      await this.#state.load();
    } catch (error) {
      this.#lastError = `cannot read the WeChat state in ${this.#state.dir}: ${(error as Error).message}`;
      this.#log.error("{error}", { error: this.#lastError });
    }
    for (const user of this.#state.users()) {
      const entry = this.#state.token(user)!;
      this.#tokenSends.set(entry.token, entry.sends);
    }
    this.#run = this.#loop(stop.signal).catch((error) => {
      this.#log.error("The WeChat poll loop ended: {error}", { error: (error as Error).message });
    });
  }

  async stop(): Promise<void> {
    this.#stop?.abort(new Error("homed stopping"));
    await this.#run;
    await this.#typing.settled();
    await this.#state.flushed();
    this.#limiter.flush();
    this.#run = undefined;
    this.#stop = undefined;
    this.#context = undefined;
    this.#connected = false;
  }

  /** A login stored a new token (or it may have): check now instead of at the next re-check. */
  recheckLogin(): void {
    this.#wake?.abort();
  }

  /** Replies wait while there is no token, the session is stale or the network failed, until a poll succeeds. */
  canSend(_event: OutputEvent): boolean {
    return this.#token !== undefined && this.#expiredSince === undefined && !this.#down;
  }

  get hold(): { limit: number; setting: string } {
    return { limit: this.#options.settings.queueLimit, setting: "weixin.queue_limit" };
  }

  status(): Record<string, unknown> {
    const iso = (ms: number | undefined) => ms === undefined ? null : new Date(ms).toISOString();
    const problem = this.#token === undefined
      ? "not logged in: run `homed weixin login`"
      : this.#expiredSince !== undefined
      ? "not connected: the WeChat session expired: run `homed weixin login` again"
      : this.#down
      ? `not connected: ${this.#lastError ?? "the last poll failed"}`
      : null;
    return {
      logged_in: this.#token !== undefined,
      connected: this.#connected,
      connected_since: iso(this.#connectedSince),
      last_message_at: iso(this.#lastMessageAt),
      last_error: this.#lastError ?? null,
      session_expired: this.#expiredSince !== undefined,
      session_expired_since: iso(this.#expiredSince),
      problem,
      queued_replies: this.#context?.waiting() ?? 0,
      ...this.#counts,
    };
  }

  onTurnEvent(event: TurnEvent): void {
    if (event.type === "done") this.#typing.turnDone(event.eventId, this.#stop?.signal);
  }

  /** The bytes of an attachment of one of this channel's inputs: downloaded from the CDN and decrypted. */
  async locate(_input: InputRef, attachment: MessageAttachment): Promise<Uint8Array | undefined> {
    const media = attachment.file ? this.#media.get(attachment.file) : undefined;
    if (!media) return undefined;
    const { cdnUrl } = this.#options.settings;
    return await downloadMedia(media, { cdnUrl, clock: this.#options.clock, ...signal(this.#stop?.signal) });
  }

  send(event: OutputEvent): Promise<void> {
    const conversation = conversationOf(event.target);
    if (!conversation) {
      return Promise.reject(
        new TypeError(`WeChat channels are weixin:private:<user id …@im.wechat>, got ${JSON.stringify(event.target)}`),
      );
    }
    if (this.#token === undefined) {
      return Promise.reject(new Error("WeChat is not logged in: run `homed weixin login` (or set weixin.token)"));
    }
    return this.#deliver(event, conversation.id);
  }

  /** The poll loop: one `getupdates` at a time until stopped. */
  async #loop(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      // The stored login is read at start, while none is found, and while the session is stale.
      const looking = this.#token === undefined || this.#expiredSince !== undefined;
      if (looking && !await this.#findToken()) {
        await this.#pause(stop);
        continue;
      }
      try {
        const updates = await this.#client.getUpdates(this.#state.cursor, this.#serverHoldMs, stop);
        this.#polled();
        if (updates.longpolling_timeout_ms && updates.longpolling_timeout_ms > 0) {
          this.#serverHoldMs = updates.longpolling_timeout_ms;
        }
        await this.#take(updates.msgs);
        const cursor = updates.get_updates_buf;
        // After the messages are inputs: a crash before this repeats them (de-duplicated), never loses them.
        if (cursor && cursor !== this.#state.cursor) await this.#state.saveCursor(cursor);
      } catch (error) {
        if (stop.aborted) return;
        await this.#pollFailed(error, stop);
      }
    }
  }

  /** The token to use now: `weixin.token`, else the login's; one the service called stale only if nothing else. */
  async #findToken(): Promise<boolean> {
    const stored = await loadWeixinLogin(this.#options.settings.dataDir).catch(() => undefined);
    const candidates = [this.#options.settings.token, stored?.botToken ?? ""].filter((token) => token !== "");
    const token = candidates.find((candidate) => candidate !== this.#expiredToken) ?? candidates[0];
    if (token !== undefined && token !== this.#expiredToken && this.#expiredSince !== undefined) {
      this.#log.info("WeChat: a new login token was found; polling again");
      this.#expiredSince = undefined;
      this.#expiredToken = undefined;
    }
    this.#token = token;
    if (stored && stored.baseUrl !== "" && stored.baseUrl.replace(/\/+$/, "") !== this.#client.baseUrl) {
      if (!this.#warnedBase) {
        this.#warnedBase = true;
        this.#log.warning(
          "The WeChat login named the API base {base}, but weixin.base_url is {configured}: set weixin.base_url to it",
          { base: stored.baseUrl, configured: this.#client.baseUrl },
        );
      }
    }
    return token !== undefined;
  }

  /** A poll answered: the channel is up; replies that waited go. */
  #polled(): void {
    this.#backoff.reset();
    if (!this.#connected) this.#connectedSince = this.#options.clock.now();
    const wasDown = this.#down || !this.#connected;
    this.#connected = true;
    this.#down = false;
    if (wasDown) this.#context?.readyAgain();
  }

  async #pollFailed(error: unknown, stop: AbortSignal): Promise<void> {
    if (error instanceof IlinkTransportError && error.timedOut) return; // an empty long poll the client ended
    this.#connected = false;
    this.#connectedSince = undefined;
    if (isSessionExpired(error)) {
      this.#expire();
      await this.#pause(stop);
      return;
    }
    this.#down = true;
    this.#lastError = (error as Error).message ?? String(error);
    const wait = this.#backoff.next();
    if (this.#limiter.allow("poll", (count) => this.#log.warning("{count} more WeChat poll failures", { count }))) {
      this.#log.warning("WeChat poll failed: {error}; trying again in {seconds} s", {
        error: this.#lastError,
        seconds: Math.round(wait / 100) / 10,
      });
    }
    await sleepWith(this.#options.clock, wait, stop).catch(() => {});
  }

  /** The session is stale: said once (not per re-check), then the loop pauses until a new login. */
  #expire(): void {
    this.#expiredToken = this.#token;
    if (this.#expiredSince !== undefined) return;
    this.#expiredSince = this.#options.clock.now();
    this.#lastError = "the WeChat session expired (-14): run `homed weixin login` again";
    this.#log.error(
      "The WeChat session expired (the account was bound elsewhere, or idle too long): run `homed weixin login` " +
        "again; replies wait meanwhile",
    );
    this.#options.tellOwner?.({
      en: "The butler's WeChat session expired (the account was bound elsewhere, or idle too long): WeChat messages " +
        "wait until you log in again — run `homed weixin login`, or use Log in to WeChat in the console.",
      zh:
        "管家的微信登录已失效（账号在别处绑定，或太久没用）：微信消息会先等着，直到重新登录——运行 `homed weixin login`，" +
        "或在控制台点“登录微信”。",
    });
  }

  /** Waits for the next re-check, a {@link WeixinDevice.recheckLogin}, or the stop. */
  async #pause(stop: AbortSignal): Promise<void> {
    const wake = this.#wake = new AbortController();
    const both = AbortSignal.any([stop, wake.signal]);
    await sleepWith(this.#options.clock, this.#options.recheckMs ?? 10 * 60_000, both).catch(() => {});
    this.#wake = undefined;
  }

  /** Turns a poll's messages into inputs (the owner's and listed users'), keeping each sender's latest token. */
  async #take(messages: readonly WireMessage[]): Promise<void> {
    const context = this.#context;
    if (!context || messages.length === 0) return;
    let tokens = false;
    for (const message of messages) {
      if (message.message_type !== 1) continue; // the bot's own messages
      const user = message.from_user_id ?? "";
      const id = message.message_id ?? "";
      const trust = this.#allow.trustOf(user, { kind: "private", id: user });
      if (!trust) {
        this.#ignored(user);
        continue;
      }
      if (id !== "" && !this.#seen.firstTime([user, id], JSON.stringify(message.item_list ?? []))) {
        this.#counts.repeated++;
        continue;
      }
      this.#lastMessageAt = this.#options.clock.now();
      if (message.context_token) {
        this.#state.setToken(user, message.context_token, this.#lastMessageAt);
        this.#tokenSends.set(message.context_token, 0);
        tokens = true;
      }
      const read = readInbound(message);
      const attachments = read.attachments.map((attachment, index) => {
        const file = `${id}:${index}`;
        this.#media.set(file, attachment.media);
        const { media: _media, ...rest } = attachment;
        return { ...rest, file };
      });
      if (read.text === "" && attachments.length === 0) continue;
      const input = context.emit({
        source: channelOf({ kind: "private", id: user }),
        sender: user,
        trust,
        type: "message",
        payload: {
          text: read.text === "" ? "(sent an attachment)" : read.text,
          ...(attachments.length ? { attachments } : {}),
          ...(id ? { message_id: id } : {}),
        },
        // Handed back on the reply: the token of the message it answers.
        handle: { ...(message.context_token ? { context_token: message.context_token } : {}), message_id: id },
      });
      this.#counts.inputs++;
      this.#typing.turnStarted(input.id, user, this.#stop?.signal);
    }
    if (tokens) await this.#state.saveTokens().catch((error) => this.#writeFailed(error));
  }

  #ignored(user: string): void {
    this.#counts.ignored++;
    const summary = (count: number, seconds: number) =>
      this.#log.info("Ignored {count} more WeChat messages like this in the last {seconds} s", { count, seconds });
    if (!this.#limiter.allow("ignored", summary)) return;
    this.#log.info("Ignored a WeChat message from {user}: not weixin.owner or in weixin.allow_users", { user });
  }

  #writeFailed(error: unknown): void {
    this.#lastError = `cannot write the WeChat state in ${this.#state.dir}: ${(error as Error).message}`;
    this.#log.error("{error}", { error: this.#lastError });
  }

  async #deliver(event: OutputEvent, user: string): Promise<void> {
    const pieces = this.#left.get(event) ?? this.#pieces(event);
    this.#left.delete(event);
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      const token = this.#pickToken(event, user);
      try {
        const item = "text" in piece ? { type: 1, text_item: { text: piece.text } } : await this.#upload(piece, user);
        await this.#pacer.wait(PACE_KEY);
        try {
          await this.#client.sendMessage({
            from_user_id: "",
            to_user_id: user,
            client_id: `homed-${crypto.randomUUID()}`,
            message_type: 2,
            message_state: 2,
            item_list: [item],
            context_token: token,
          }, this.#stop?.signal);
        } finally {
          this.#pacer.sent(PACE_KEY);
        }
        this.#counts.sent++;
        this.#tokenSends.set(token, (this.#tokenSends.get(token) ?? 0) + 1);
        this.#state.countSend(user, token);
      } catch (error) {
        if (error instanceof IlinkApiError && error.code === -2 && !/prepare failed/i.test(error.message)) {
          // Refused on this token (used up or gone stale): never again. The piece goes again with another token of
          // the person's, or fails as undeliverable when none is left.
          this.#tokenSends.set(token, this.#sendsPerToken);
          this.#state.countSend(user, token);
          this.#log.info("WeChat refused a send to {user} on its context token (ret -2)", { user });
          i--;
          continue;
        }
        if (error instanceof IlinkTransportError || isSessionExpired(error)) {
          // Kept for this output's next send, once a poll succeeds again (or a new login).
          this.#left.set(event, pieces.slice(i));
          if (isSessionExpired(error)) this.#expire();
          else {
            this.#down = true;
            this.#lastError = (error as Error).message;
          }
        }
        throw this.#thrown(error, user, i, pieces.length);
      }
    }
    await this.#state.saveTokens().catch((error) => this.#writeFailed(error));
  }

  /** The token a piece goes with: the answered message's, else the person's latest, while it has sends left. */
  #pickToken(event: OutputEvent, user: string): string {
    const answered = event.replyTo?.source === channelOf({ kind: "private", id: user })
      ? event.replyTo.handle?.context_token
      : undefined;
    const candidates = [answered, this.#state.token(user)?.token].filter((token): token is string => !!token);
    const usable = candidates.find((token) => (this.#tokenSends.get(token) ?? 0) < this.#sendsPerToken);
    if (usable) return usable;
    this.#counts.undeliverable++;
    const why = candidates.length === 0
      ? "they have not written to the butler on WeChat yet"
      : "since their last message the butler has written as much as WeChat allows " +
        `(about ${this.#sendsPerToken} messages), or WeChat refused it as too long ago`;
    const error = new WeixinUndeliverable(user, why);
    this.#log.warning("{error}", { error: error.message });
    throw error;
  }

  /** What a failed send rejects with: interrupted (it goes again once ready) or failed, naming the piece. */
  #thrown(error: unknown, user: string, index: number, total: number): Error {
    const message = (error as Error).message ?? String(error);
    if (error instanceof IlinkTransportError || isSessionExpired(error)) {
      return new SendInterrupted(`WeChat send to ${user} stopped after ${index} of ${total} pieces: ${message}`);
    }
    this.#counts.failed++;
    const hint = /prepare failed/i.test(message) ? " (WeChat throttles the bot: weixin.min_send_interval)" : "";
    this.#log.warning("WeChat send to {user} failed: {error}", { user, error: message });
    return new Error(`WeChat send to ${user} failed after ${index} of ${total} pieces: ${message}${hint}`);
  }

  /** The output as pieces: media first (one send), then the text split at `weixin.split_at`, Markdown made plain. */
  #pieces(event: OutputEvent): Piece[] {
    const pieces: Piece[] = [];
    const payload = event.payload;
    if (event.type === "image" || event.type === "file" || event.type === "audio") {
      if (typeof payload.media !== "string") {
        throw new TypeError(
          `WeChat sends only media homed holds (payload.media, an id of the media cache); this ${event.type} names none`,
        );
      }
      const name = typeof payload.name === "string" ? payload.name : event.type === "audio" ? "voice.wav" : undefined;
      pieces.push({ media: payload.media, kind: event.type === "image" ? "image" : "file", ...(name ? { name } : {}) });
    }
    const text = typeof payload.text === "string"
      ? payload.text
      : event.type === "structured"
      ? JSON.stringify(payload.data)
      : "";
    for (const piece of splitText(plainText(text), this.#options.settings.splitAt)) pieces.push({ text: piece });
    if (pieces.length === 0) pieces.push({ text: "(empty)" });
    return pieces;
  }

  async #upload(piece: Extract<Piece, { media: string }>, user: string): Promise<Record<string, unknown>> {
    const bytes = await this.#options.media?.read(piece.media);
    if (!bytes) throw new TypeError(`The media ${JSON.stringify(piece.media)} is not held by homed (any more)`);
    const { cdnUrl } = this.#options.settings;
    return await uploadMedia(bytes, piece.kind, piece.name, {
      client: this.#client,
      cdnUrl,
      clock: this.#options.clock,
      to: user,
      ...signal(this.#stop?.signal),
    });
  }
}

function signal(value: AbortSignal | undefined): { signal?: AbortSignal } {
  return value ? { signal: value } : {};
}
