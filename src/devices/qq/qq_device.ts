/**
 * QQ through OneBot V11, as one Device (`qq`) — the seed's OneBot client, with `connection.ts` and
 * `forward_client.ts`. Implementations connect to it (reverse WebSocket, on the daemon's listener) or it dials them
 * (forward WebSocket); either way each socket becomes a {@link OneBotConnection} filed under its bot's QQ number and
 * role. Messages from the owner, listed users and listed groups become InputEvents with the sender's trust level;
 * everyone else is ignored and logged (at most 10 lines per 10 s, then one with the count). A message delivered twice
 * (one bot on a forward and a reverse socket) becomes one input (`chat/seen_messages.ts`); each input's `handle` names
 * the account that received it and its message id, and comes back on the reply. Replies go out as segment arrays (so
 * nothing a user wrote can become a CQ code), split at `onebot.split_at`, at most one per `onebot.min_send_interval`
 * per conversation; while no connection is up they wait in the channel's one IO queue (at most `onebot.queue_limit`,
 * {@link QqDevice.canSend}) and go out, in order and once, on reconnect.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import { type Device, type DeviceContext, SendInterrupted } from "../../io/device.ts";
import { Capability, type InputRef, type OutputEvent } from "../../io/event.ts";
import type { MessageAttachment } from "../../io/message_payload.ts";
import { decodeBase64, encodeBase64 } from "../../text/base64.ts";
import { LogLimiter } from "../../log/rate_limit.ts";
import { statusTool } from "../../tools/status_tool.ts";
import type { Tool } from "../../tools/tool.ts";
import { ActionError, OneBotConnection, type OneBotSocket, type Role } from "./connection.ts";
import { normalizeMessage, readSegments, type Segment, textSegment } from "./segments.ts";
import { AllowList, type Conversation } from "../../chat_policy/allow_list.ts";
import { Pacer } from "../../chat_policy/pacer.ts";
import { RecentMap } from "../../chat_policy/recent.ts";
import { SeenMessages } from "../../chat_policy/seen_messages.ts";
import { splitText } from "../../chat_policy/split_text.ts";
import { type OneBotEvent, readMessageEvent } from "./frames.ts";
import { OneBotRefusals } from "./refusals.ts";

/** The `onebot.*` settings the device uses. */
export interface QqSettings {
  owner: string;
  allowUsers: readonly string[];
  allowGroups: readonly string[];
  approveFriends: readonly string[];
  groupPrefix: string;
  actionTimeoutMs: number;
  splitAt: number;
  minSendIntervalMs: number;
  queueLimit: number;
  maxFrameBytes: number;
}

/** What the device needs of homed's media, injected: the bytes of media the butler sends, and QQ's voice format. */
export interface QqMedia {
  /** Bytes held in the media cache under `id` (a spoken reply, a tool's picture). */
  read(id: string): Promise<Uint8Array | undefined>;
  /** Audio (WAV, or already SILK) as the SILK QQ plays as a voice message. */
  voice(audio: Uint8Array): Promise<Uint8Array>;
}

/** Options of {@link QqDevice}. */
export interface QqDeviceOptions {
  settings: QqSettings;
  clock: Clock;
  logger: Logger;
  /** Without it, no image, voice or file can be sent (QQ sends only media homed holds). */
  media?: QqMedia;
  /**
   * Where refused reverse connections are counted and logged; shared by every QQ device of a daemon (a plugin's is
   * made again at a reload) so the counts live as long as homed. By default one of its own.
   */
  refusals?: OneBotRefusals;
}

/** A connection that ended, for status: who, which role, from when to when. */
interface Ended {
  self_id: string;
  role: Role;
  connected_at: string;
  closed_at: string;
}

/** Ended connections kept for status. */
const ENDED_KEPT = 5;

interface Bot {
  selfId: string;
  connections: Map<Role, OneBotConnection>;
  /** Where the implementation connects from (or the forward URL's host): its own media URLs may be on the LAN. */
  address: string | undefined;
  /** From `get_login_info` and `get_version_info` when the bot connected (best effort). */
  info: Record<string, unknown>;
}

interface Queued {
  event: OutputEvent;
  conversation: Conversation;
  selfId: string | undefined;
}

const REMEMBERED = 1_000;

/**
 * Parses a `qq:private:<id>` / `qq:group:<id>` channel; `undefined` for anything else.
 *
 * @example
 * ```ts
 * conversationOf("qq:group:123456"); // { kind: "group", id: "123456" }
 * ```
 */
export function conversationOf(channel: string): Conversation | undefined {
  const match = /^qq:(private|group):(\d{5,12})$/.exec(channel);
  return match ? { kind: match[1] as Conversation["kind"], id: match[2]! } : undefined;
}

/**
 * The channel of a conversation — {@link conversationOf}'s inverse, so a QQ address is written in one place.
 *
 * @example
 * ```ts
 * channelOf({ kind: "private", id: "10001" }); // "qq:private:10001"
 * ```
 */
export function channelOf(conversation: Conversation): string {
  return `qq:${conversation.kind}:${conversation.id}`;
}

/** The `qq` channel. */
export class QqDevice implements Device {
  readonly name = "qq";
  /** People send several short lines in a row: a burst waiting together is answered in one turn. */
  readonly coalesces = true;
  readonly type = "onebot";
  readonly description =
    "QQ via OneBot V11: qq:private:<QQ number> for a person, qq:group:<group number> for a group; text, images, voice and files";
  #options: QqDeviceOptions;
  #context: DeviceContext | undefined;
  #bots = new Map<string, Bot>();
  #sentIds = new RecentMap<string, true>(REMEMBERED);
  /** Pieces not sent yet of outputs whose send lost its connection half-way, for their next send. */
  #left = new WeakMap<OutputEvent, Segment[][]>();
  /** Messages already turned into inputs: an implementation on two sockets delivers each twice. */
  #seen: SeenMessages;
  #counts = { inputs: 0, ignored: 0, repeated: 0, sent: 0, failed: 0 };
  /** Lines a peer can cause at will (ignored messages, dropped frames): at most 10 of a kind per 10 s, then a count. */
  #limiter: LogLimiter;
  #allow: AllowList;
  #pacer: Pacer;
  #ended: Ended[] = [];
  /** The reverse endpoint's refused handshakes (`reverse_ws.ts`): counted, logged once a minute per reason. */
  readonly refusals: OneBotRefusals;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../../clock.ts";
   * import { log } from "../../log/logging.ts";
   *
   * const qq = new QqDevice({
   *   settings: {
   *     owner: "10001",
   *     allowUsers: [],
   *     allowGroups: ["123456"],
   *     approveFriends: [],
   *     groupPrefix: "",
   *     actionTimeoutMs: 30_000,
   *     splitAt: 1_500,
   *     minSendIntervalMs: 1_000,
   *     queueLimit: 100,
   *     maxFrameBytes: 1_048_576,
   *   },
   *   clock: systemClock,
   *   logger: log("qq"),
   * });
   * ```
   */
  constructor(options: QqDeviceOptions) {
    this.#options = options;
    this.#limiter = new LogLimiter({ clock: options.clock });
    const { owner, allowUsers, allowGroups, minSendIntervalMs } = options.settings;
    this.#allow = new AllowList({ owner, users: allowUsers, groups: allowGroups });
    this.#pacer = new Pacer(options.clock, minSendIntervalMs);
    this.#seen = new SeenMessages({ clock: options.clock });
    this.refusals = options.refusals ?? new OneBotRefusals({ clock: options.clock, logger: options.logger });
  }

  /** `onebot.max_frame_bytes`: the forward client refuses a larger frame at its header. */
  get maxFrameBytes(): number {
    return this.#options.settings.maxFrameBytes;
  }

  get #log(): Logger {
    return this.#options.logger;
  }

  /** The device's tools, made once so every device-table change registers the same objects. */
  #tools: readonly Tool[] = [
    statusTool(
      "qq_status",
      "Which QQ accounts are connected (self ids, roles, last heartbeat, whether QQ is online) and how many replies wait for a connection.",
      () => this.status(),
    ),
    {
      name: "qq_delete_message",
      effect: "act",
      description: "Recall (delete) a QQ message the butler sent, by its message_id.",
      parameters: {
        type: "object",
        properties: { message_id: { type: "string", pattern: "^-?\\d{1,12}$" } },
        required: ["message_id"],
        additionalProperties: false,
      },
      allow: "household",
      execute: (args) => this.#deleteMessage(String(args.message_id)),
    },
  ];

  tools(): readonly Tool[] {
    return this.#tools;
  }

  /** `qq_delete_message`: only a message the butler sent recently, so nobody can recall someone else's words. */
  async #deleteMessage(id: string): Promise<string> {
    if (!this.#sentIds.has(id)) throw new Error(`message ${id} is not one the butler sent (recently)`);
    const connection = this.#actions(undefined);
    if (!connection) throw new Error("no QQ connection is up");
    await connection.call("delete_msg", { message_id: Number(id) });
    return `Recalled message ${id}`;
  }

  start(context: DeviceContext): Promise<void> {
    this.#context = context;
    return Promise.resolve();
  }

  stop(): Promise<void> {
    for (const bot of this.#bots.values()) {
      for (const connection of bot.connections.values()) connection.close(1001, "homed stopping");
    }
    this.#bots.clear();
    this.#limiter.flush();
    this.refusals.flush();
    this.#context = undefined;
    return Promise.resolve();
  }

  outputCapabilities(): number {
    return Capability.Text | Capability.Image | Capability.Audio | Capability.File;
  }

  /** Closes connections that went quiet (3× their heartbeat interval); their implementations redial. */
  heartbeat(): void {
    const now = this.#options.clock.now();
    for (const bot of this.#bots.values()) {
      for (const connection of bot.connections.values()) connection.closeIfStale(now);
    }
  }

  /**
   * For `/api/status`: each bot with its connections (role, since when, last frame, event and heartbeat, where it
   * connects from), the connections that ended lately, and the refused handshakes by reason.
   */
  status(): Record<string, unknown> {
    return {
      bots: [...this.#bots.values()].map((bot) => ({
        self_id: bot.selfId,
        nickname: bot.info.nickname ?? null,
        app: bot.info.app_name ? `${bot.info.app_name} ${bot.info.app_version ?? ""}`.trim() : null,
        address: bot.address ?? null,
        connections: [...bot.connections.values()].map((connection) => connection.status()),
      })),
      ended: [...this.#ended].reverse(),
      refused: this.refusals.status(),
      queued_replies: this.#context?.waiting() ?? 0,
      inputs: this.#counts.inputs,
      ignored: this.#counts.ignored,
      repeated: this.#counts.repeated,
      sent: this.#counts.sent,
      failed: this.#counts.failed,
    };
  }

  /**
   * Files a new socket under its bot. A socket with the same QQ number and role replaces the old one, which is
   * closed; replies waiting for a connection go out once the bot can take actions.
   */
  attach(socket: OneBotSocket, selfId: string, role: Role, address?: string): OneBotConnection {
    const { settings, clock } = this.#options;
    const bot = this.#bots.get(selfId) ?? { selfId, connections: new Map(), info: {}, address };
    if (address) bot.address = address;
    this.#bots.set(selfId, bot);
    const connection = new OneBotConnection({
      socket,
      selfId,
      role,
      clock,
      logger: this.#log,
      actionTimeoutMs: settings.actionTimeoutMs,
      maxFrameBytes: settings.maxFrameBytes,
      limiter: this.#limiter,
      onEvent: (event, from) => this.#onEvent(event, from),
      onClose: (closed) => {
        this.#ended.push({
          self_id: selfId,
          role: closed.role,
          connected_at: new Date(closed.connectedAt).toISOString(),
          closed_at: new Date(clock.now()).toISOString(),
        });
        if (this.#ended.length > ENDED_KEPT) this.#ended.shift();
        if (bot.connections.get(closed.role) === closed) bot.connections.delete(closed.role);
        if (bot.connections.size === 0 && this.#bots.get(selfId) === bot) this.#bots.delete(selfId);
        this.#log.info("QQ {selfId} ({role}) disconnected", { selfId, role: closed.role });
      },
    });
    const stale = bot.connections.get(role);
    bot.connections.set(role, connection);
    if (stale) stale.close(1000, "replaced by a new connection");
    const open = () => {
      this.#log.info("QQ {selfId} connected ({role})", { selfId, role });
      if (role === "event") return;
      // Replies that waited in the QQ channel's queue for a connection go now.
      this.#context?.readyAgain();
      void this.#learn(bot, connection);
    };
    if (socket.readyState === WebSocket.OPEN) open();
    else socket.addEventListener("open", open, { once: true });
    return connection;
  }

  /** Asks a newly connected bot who it is and what runs it, for status; a failure is only logged. */
  async #learn(bot: Bot, connection: OneBotConnection): Promise<void> {
    for (const action of ["get_login_info", "get_version_info"]) {
      try {
        const data = await connection.call(action, {});
        if (data && typeof data === "object") Object.assign(bot.info, data);
      } catch (error) {
        this.#log.info("QQ {selfId}: {action} failed: {error}", {
          selfId: bot.selfId,
          action,
          error: (error as Error).message,
        });
      }
    }
  }

  /** The connection that carries actions for `selfId` (or any bot when none is named). */
  #actions(selfId: string | undefined): OneBotConnection | undefined {
    const bots = selfId && this.#bots.has(selfId) ? [this.#bots.get(selfId)!] : [...this.#bots.values()];
    for (const bot of bots) {
      for (const role of ["universal", "api"] as const) {
        const connection = bot.connections.get(role);
        if (connection?.open) return connection;
      }
    }
    return undefined;
  }

  #onEvent(event: OneBotEvent, from: OneBotConnection): void {
    const context = this.#context;
    if (!context) return;
    const selfId = event.self_id === undefined ? from.selfId : String(event.self_id);
    switch (event.post_type) {
      case "message":
        return this.#onMessage(event, selfId, context);
      case "notice":
        return this.#onNotice(event, selfId, context);
      case "request":
        return this.#onRequest(event, selfId, context, from);
      default:
        return; // meta events (lifecycle, heartbeat) are the connection's; message_sent and unknown types ignored
    }
  }

  #onMessage(event: OneBotEvent, selfId: string, context: DeviceContext): void {
    const incoming = readMessageEvent(event);
    if (typeof incoming === "string") return this.#malformed(incoming);
    const { kind, userId, messageId, displayName: display } = incoming;
    if (userId === "" || userId === selfId) return; // the bot's own messages
    const conversation: Conversation = { kind, id: kind === "group" ? incoming.groupId ?? "" : userId };
    const trust = this.#allow.trustOf(userId, conversation);
    if (!trust) {
      this.#counts.ignored++;
      const summary = (count: number, seconds: number) =>
        this.#log.info("Ignored {count} more QQ messages like this in the last {seconds} s", { count, seconds });
      if (!this.#limiter.allow("ignored", summary)) return;
      this.#log.info("Ignored a QQ {kind} message from {userId}{where}: not the owner, a listed user or group", {
        kind,
        userId,
        where: kind === "group" ? ` in group ${conversation.id}` : "",
      });
      return;
    }
    const delivery = [selfId, channelOf(conversation), userId, messageId ?? ""];
    if (messageId !== undefined && !this.#seen.firstTime(delivery, JSON.stringify(incoming.message))) {
      this.#counts.repeated++;
      this.#log.debug("Dropped a repeated delivery of QQ message {messageId} in {channel}", {
        messageId,
        channel: channelOf(conversation),
      });
      return;
    }
    const segments = normalizeMessage(incoming.message);
    if (!segments) return this.#malformed("a message whose `message` is neither a CQ string nor segments");
    const read = readSegments(segments, selfId);
    const via = this.#bots.get(selfId)?.address;
    const attachments = via ? read.attachments.map((attachment) => ({ ...attachment, via })) : read.attachments;
    let text = read.text;
    if (kind === "group") {
      const prefix = this.#options.settings.groupPrefix;
      const mentioned = read.mentions.includes(selfId);
      const repliedTo = read.replyTo !== undefined && this.#sentIds.has(read.replyTo);
      const prefixed = prefix !== "" && text.startsWith(prefix);
      if (!mentioned && !repliedTo && !prefixed) return; // group chatter not addressed to the butler
      if (prefixed) text = text.slice(prefix.length).trim();
    }
    if (text === "" && attachments.length === 0) return;
    context.emit({
      source: channelOf(conversation),
      sender: userId,
      trust,
      type: "message",
      payload: {
        text: text === "" ? "(sent an attachment)" : text,
        ...(display ? { display } : {}),
        ...(attachments.length ? { attachments } : {}),
        ...(messageId ? { message_id: messageId } : {}),
      },
      // Handed back on the reply: the account that got the message answers it, quoting it in a group.
      handle: { self_id: selfId, ...(messageId ? { message_id: messageId } : {}) },
    });
    this.#counts.inputs++;
  }

  #onNotice(event: OneBotEvent, selfId: string, context: DeviceContext): void {
    const group = event.group_id === undefined ? undefined : String(event.group_id);
    const user = event.user_id === undefined ? undefined : String(event.user_id);
    if (!this.#allow.knows(group, user)) return;
    const { post_type: _post, time: _time, self_id: _self, ...payload } = event;
    context.emit({
      source: channelOf(group ? { kind: "group", id: group } : { kind: "private", id: user ?? "" }),
      sender: user ?? selfId,
      trust: "guest",
      type: `qq.notice.${String(event.notice_type)}`,
      payload,
    });
  }

  #onRequest(event: OneBotEvent, selfId: string, context: DeviceContext, from: OneBotConnection): void {
    const user = String(event.user_id);
    if (event.request_type === "friend" && this.#options.settings.approveFriends.includes(user)) {
      this.#actions(selfId)?.call("set_friend_add_request", { flag: event.flag, approve: true }).then(
        () => this.#log.info("Approved the QQ friend request of {user} (onebot.approve_friends)", { user }),
        (error) =>
          this.#log.warning("Approving the friend request of {user} failed: {error}", { user, error: error.message }),
      );
      return;
    }
    // Left for the owner: recorded, shown to the butler as a device event.
    context.emit({
      source: channelOf({ kind: "private", id: user }),
      sender: user,
      trust: "guest",
      type: `qq.request.${String(event.request_type)}`,
      payload: { user_id: user, comment: event.comment ?? "", group_id: event.group_id ?? null, via: from.selfId },
    });
  }

  #malformed(what: string): void {
    const summary = (count: number, seconds: number) =>
      this.#log.warning("Dropped {count} more QQ events like this in the last {seconds} s", { count, seconds });
    if (this.#limiter.allow("malformed", summary)) this.#log.warning("Dropped a QQ event: {what}", { what });
  }

  /** Whether a bot can take `event` now: a connection that takes actions is up (the bot it came through, or any). */
  canSend(event: OutputEvent): boolean {
    return this.#actions(event.replyTo?.handle?.self_id) !== undefined;
  }

  /** Replies wait for a connection in the QQ channel's queue, at most `onebot.queue_limit`. */
  get hold(): { limit: number; setting: string } {
    return { limit: this.#options.settings.queueLimit, setting: "onebot.queue_limit" };
  }

  /**
   * Sends one output; resolves once QQ accepted every piece. The IO queue calls it when {@link QqDevice.canSend}
   * says yes; a connection lost between pieces rejects with `SendInterrupted`, and the next call for the same output
   * sends only the pieces left. An action that may have been carried out (written, then no answer) is never sent again.
   */
  send(event: OutputEvent): Promise<void> {
    const conversation = conversationOf(event.target);
    if (!conversation) {
      return Promise.reject(
        new TypeError(
          `QQ channels are qq:private:<QQ number> or qq:group:<group number>, got ${JSON.stringify(event.target)}`,
        ),
      );
    }
    return this.#deliver({ event, conversation, selfId: event.replyTo?.handle?.self_id });
  }

  /**
   * Where an attachment without a URL is: asked of the bot that received it — `get_image`, or `get_record` as WAV
   * (NapCat converts QQ's SILK) — as the URL it gives or the base64 it sends; a path on the implementation's machine
   * is not read.
   */
  async locate(input: InputRef, attachment: MessageAttachment): Promise<string | Uint8Array | undefined> {
    if (!attachment.file || (attachment.kind !== "image" && attachment.kind !== "audio")) return undefined;
    const connection = this.#actions(input.handle?.self_id);
    if (!connection) return undefined;
    const data = attachment.kind === "image"
      ? await connection.call("get_image", { file: attachment.file })
      : await connection.call("get_record", { file: attachment.file, out_format: "wav" });
    const { url, base64 } = (data ?? {}) as { url?: unknown; base64?: unknown };
    if (typeof url === "string" && /^https?:\/\//i.test(url)) return url;
    if (typeof base64 === "string") return decodeBase64(base64.replace(/^base64:\/\//, ""));
    return undefined;
  }

  async #deliver(item: Queued): Promise<void> {
    const pieces = this.#left.get(item.event) ?? await this.#messages(item);
    this.#left.delete(item.event);
    const key = `${item.conversation.kind}:${item.conversation.id}`;
    for (let i = 0; i < pieces.length; i++) {
      await this.#pacer.wait(key);
      const connection = this.#actions(item.selfId);
      if (!connection) {
        // The connection went away between pieces: what is left is kept for this output's next send.
        this.#left.set(item.event, pieces.slice(i));
        throw new SendInterrupted(`The QQ connection went away after ${i} of ${pieces.length} pieces`);
      }
      const action = item.conversation.kind === "group" ? "send_group_msg" : "send_private_msg";
      const params = item.conversation.kind === "group"
        ? { group_id: Number(item.conversation.id), message: pieces[i] }
        : { user_id: Number(item.conversation.id), message: pieces[i] };
      try {
        const data = await connection.call(action, params);
        const id = (data as { message_id?: unknown } | null)?.message_id;
        if (id !== undefined) this.#sentIds.set(String(id), true);
        this.#counts.sent++;
      } catch (error) {
        this.#counts.failed++;
        throw error instanceof ActionError ? error : new ActionError(String(error));
      } finally {
        this.#pacer.sent(key);
      }
    }
  }

  /**
   * The `file` of a media segment: held media (`payload.media`) as `base64://` — voice as SILK — so the
   * implementation needs no access to homed's files. Never a URL: the implementation would fetch it (or upload a
   * `file:` path) from where it runs, unchecked — `output_send` has homed fetch a URL itself and sends the id.
   */
  async #mediaFile(event: OutputEvent): Promise<string> {
    const id = event.payload.media;
    if (typeof id !== "string") {
      const url = typeof event.payload.url === "string"
        ? ` (its url ${JSON.stringify(event.payload.url)} is not` +
          " handed to the implementation)"
        : "";
      throw new TypeError(
        `QQ sends only media homed holds (payload.media, an id of the media cache); this ${event.type} output names ` +
          `none${url}`,
      );
    }
    const media = this.#options.media;
    const held = await media?.read(id);
    if (!media || !held) throw new TypeError(`The media ${JSON.stringify(id)} is not held by homed (any more)`);
    return `base64://${encodeBase64(event.type === "audio" ? await media.voice(held) : held)}`;
  }

  /**
   * The output as QQ messages (segment arrays): text split at `onebot.split_at`; the first piece of a reply in a group
   * quotes the message it answers and @-mentions its sender; images, voice and files as their segments.
   */
  async #messages(item: Queued): Promise<Segment[][]> {
    const { event, conversation } = item;
    const text = typeof event.payload.text === "string" ? event.payload.text : "";
    const answered = event.replyTo;
    const lead: Segment[] = [];
    if (answered?.source === channelOf(conversation) && conversation.kind === "group") {
      const quoted = answered.handle?.message_id;
      if (quoted) lead.push({ type: "reply", data: { id: quoted } });
      lead.push({ type: "at", data: { qq: answered.address ?? answered.sender } }, textSegment(" "));
    }
    const media: Record<string, string> = { image: "image", audio: "record", file: "file" };
    const pieces: Segment[][] = [];
    if (event.type in media) {
      pieces.push([...lead, { type: media[event.type]!, data: { file: await this.#mediaFile(event) } }]);
      if (text) pieces.push([textSegment(text)]);
      return pieces;
    }
    const body = event.type === "structured" ? (text || JSON.stringify(event.payload.data)) : text;
    splitText(body, this.#options.settings.splitAt).forEach((piece, index) =>
      pieces.push(index === 0 ? [...lead, textSegment(piece)] : [textSegment(piece)])
    );
    return pieces.length ? pieces : [[...lead, textSegment("(empty)")]];
  }
}
