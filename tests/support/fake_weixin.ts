/**
 * A strict fake of Tencent's personal-WeChat iLink bot API ("ClawBot", the protocol of npm
 * `@tencent-weixin/openclaw-weixin`) on loopback, for homed's WeChat channel tests. Real HTTP and JSON; the protocol
 * summary it follows, with what is documented, observed and only assumed, is `/work/shared/reference/weixin-ilink.md`.
 *
 * One server holds the API base ({@link FakeWeixin.baseUrl}, `POST ilink/bot/<name>`) and the CDN base
 * ({@link FakeWeixin.cdnBaseUrl}, `/download`, `/upload`, {@link ./fake_weixin_media.ts}). The test plays the WeChat
 * users ({@link FakeWeixin.userSends}), the phone that scans the QR code ({@link FakeWeixin.login},
 * {@link ./fake_weixin_login.ts}) and the service's moods ({@link FakeWeixin.expireSession}, {@link FakeWeixin.outage}).
 *
 * Strict where the live service is unknown or lenient: every header on every call; the long-poll cursor answered from
 * exactly where the client is, delivery consuming, an older or empty cursor after a newer one, or two polls at once,
 * a violation; `sendmessage` refused (`{"ret":-2}`) for everything the service refuses or is reported to refuse — a
 * reused `client_id`, ≠ 1 item, a token of another user or past its ~10 sends, text over 2000 characters, a third send
 * within a second. What breaks the protocol is answered as the service answers it and recorded; {@link FakeWeixin.close}
 * fails the test on any, unless the test took them with {@link FakeWeixin.takeViolations}.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import { waitFor } from "./wait.ts";
import { WeixinCdnStore, type WeixinMediaKind } from "./fake_weixin_media.ts";
import { FakeWeixinLogin, Wakeup } from "./fake_weixin_login.ts";
import { baseInfoProblems, botHeaderProblems, checkSendMessage, type IssuedContextToken } from "./fake_weixin_rules.ts";

/** Options of {@link FakeWeixin.start}. */
export interface FakeWeixinOptions {
  /** The bot token accepted from the start (default `"fake-weixin-bot-token"`). */
  botToken?: string;
  /** The bot's id (default `"fakebot0001@im.bot"`). */
  botId?: string;
  /** False: no token is accepted until a QR login confirms (default true). */
  loggedIn?: boolean;
  /** How long `getupdates` is held without news, also sent as `longpolling_timeout_ms` (default 1500; live 35000). */
  longPollTimeoutMs?: number;
  /** How long `get_qrcode_status` is held while the status stays (default 500). */
  qrPollMs?: number;
  /** Longest text of one send, in characters (default 2000). */
  textLimit?: number;
  /** Sends one inbound message's `context_token` carries (default 10). */
  sendsPerContextToken?: number;
  /** At most `sends` accepted sends within any `windowMs` (default 2 per 1000 ms); more: `prepare failed`. */
  pacing?: { sends: number; windowMs: number };
  /** The answer to an accepted send: `{}` (default) or `{"ret":0,"errmsg":""}` — both are seen live. */
  sendSuccess?: "empty" | "ret0";
  /** `getuploadurl` also answers `upload_full_url` (default false: the client builds the URL from `upload_param`). */
  uploadFullUrl?: boolean;
}

/** A message a fake WeChat user sends the bot: exactly one of `text`, `image`, `voice`, `file`. */
export interface WeixinUserMessage {
  /** The user's id, `…@im.wechat`. */
  from: string;
  text?: string;
  /** Image bytes (any; the fake does not decode them). */
  image?: Uint8Array;
  /** A voice note: SILK bytes, and WeChat's own transcript when `text` is given. */
  voice?: { silk: Uint8Array; text?: string; playtimeMs?: number };
  file?: { name: string; bytes: Uint8Array };
  /** The media item also carries `full_url` (default false: the client builds the download URL). */
  fullUrl?: boolean;
}

/** A send the fake accepted. */
export interface WeixinSent {
  to: string;
  kind: "text" | WeixinMediaKind;
  text?: string;
  /** The media's plaintext, decrypted from what the client uploaded. */
  bytes?: Uint8Array;
  fileName?: string;
  clientId: string;
  contextToken: string;
  /** `performance.now()` when it arrived. */
  at: number;
}

/** A send the fake refused with `{"ret":-2}`. */
export interface WeixinRefusal {
  reasons: string[];
  to: unknown;
  clientId: unknown;
  at: number;
}

/** A typing indicator the fake accepted (`status` 1 typing, 2 cancel). */
export interface WeixinTyping {
  user: string;
  status: 1 | 2;
  at: number;
}

/**
 * The `message_id` numbers of a JSON text, digit for digit (a plain `JSON.parse` rounds uint64 ids beyond 2^53), to
 * compare against what a client made of them.
 *
 * @example
 * ```ts
 * messageIdsOf('{"msgs":[{"message_id":7350000000000000001},{"message_id":7350000000000000002}]}');
 * // ["7350000000000000001", "7350000000000000002"]
 * ```
 */
export function messageIdsOf(jsonText: string): string[] {
  return [...jsonText.matchAll(/"message_id"\s*:\s*(\d+)/g)].map((match) => match[1]!);
}

/** Ids beyond 2^53 where neighbours collide as doubles (spacing 1024 there). */
const MESSAGE_ID_BASE = 7_350_000_000_000_000_000n;
const SESSION_TIMEOUT = { errcode: -14, errmsg: "session timeout" };
const BOT_CALLS = [
  "getupdates",
  "sendmessage",
  "getconfig",
  "sendtyping",
  "getuploadurl",
  "msg/notifystart",
  "msg/notifystop",
];

interface Queued {
  position: number;
  json: string;
  contextToken?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The fake server. */
export class FakeWeixin {
  /** What broke the protocol, each naming its call. */
  readonly violations: string[] = [];
  /** Accepted sends, in order. */
  readonly sent: WeixinSent[] = [];
  /** Refused sends, in order. */
  readonly refusals: WeixinRefusal[] = [];
  /** Accepted typing indicators, in order. */
  readonly typing: WeixinTyping[] = [];
  /** `msg/notifystart` and `msg/notifystop` calls, in order. */
  readonly notifications: Array<"start" | "stop"> = [];
  /** The QR login; the test scans, confirms and expires codes through it. */
  readonly login: FakeWeixinLogin;
  /** Bot calls answered -14 because the session was expired or the token retired by a later login. */
  callsWhileExpired = 0;
  /** Requests answered 503 during {@link FakeWeixin.outage}. */
  callsDuringOutage = 0;
  /** `getupdates` requests received. */
  polls = 0;
  /** The raw text of the last `getupdates` answer that delivered messages (ids in it are exact). */
  lastUpdatesText = "";
  /** The answer to an accepted send (changeable mid-test). */
  sendSuccess: "empty" | "ret0";
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #cdn: WeixinCdnStore;
  readonly #wake = new Wakeup();
  readonly #botId: string;
  readonly #longPollMs: number;
  readonly #textLimit: number;
  readonly #tokenLimit: number;
  readonly #pacing: { sends: number; windowMs: number };
  readonly #uploadFullUrl: boolean;
  #token: string | undefined;
  readonly #retired = new Set<string>();
  #expired = false;
  #closing = false;
  #outageUntil = 0;
  #lastUin = "";
  readonly #queue: Queued[] = [];
  #position = 0;
  #consumed = 0;
  #shown = 0;
  #pollHeld = false;
  readonly #cursorNonce = Buffer.from(randomBytes(6)).toString("hex");
  readonly #cursors = new Map<string, number>();
  readonly #tokens = new Map<string, IssuedContextToken>();
  readonly #writers = new Set<string>();
  readonly #sessions = new Map<string, string>();
  readonly #clientIds = new Set<string>();
  readonly #tickets = new Map<string, string>();
  readonly #acceptedAt: number[] = [];

  private constructor(options: FakeWeixinOptions) {
    this.#botId = options.botId ?? "fakebot0001@im.bot";
    this.#token = options.loggedIn === false ? undefined : options.botToken ?? "fake-weixin-bot-token";
    this.#longPollMs = options.longPollTimeoutMs ?? 1_500;
    this.#textLimit = options.textLimit ?? 2_000;
    this.#tokenLimit = options.sendsPerContextToken ?? 10;
    this.#pacing = options.pacing ?? { sends: 2, windowMs: 1_000 };
    this.#uploadFullUrl = options.uploadFullUrl ?? false;
    this.sendSuccess = options.sendSuccess ?? "empty";
    this.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (r) => this.#handle(r));
    this.#cdn = new WeixinCdnStore((text) => this.violations.push(text), this.cdnBaseUrl);
    this.login = new FakeWeixinLogin({
      holdMs: options.qrPollMs ?? 500,
      wake: this.#wake,
      closing: () => this.#closing,
      violation: (text) => this.violations.push(text),
      confirmed: (userId, botToken) => {
        if (this.#token !== undefined && this.#token !== botToken) this.#retired.add(this.#token);
        this.#token = botToken;
        this.#expired = false;
        this.#wake.wakeAll();
        return { bot_token: botToken, ilink_bot_id: this.#botId, baseurl: this.baseUrl, ilink_user_id: userId };
      },
    });
  }

  /**
   * Starts a fake on a free loopback port.
   *
   * @example
   * ```ts
   * await using fake = FakeWeixin.start({ longPollTimeoutMs: 1_000 });
   * fake.baseUrl; // "http://127.0.0.1:<port>", the account's base URL
   * fake.userSends({ from: "wxid_alice@im.wechat", text: "hello" });
   * ```
   */
  static start(options: FakeWeixinOptions = {}): FakeWeixin {
    return new FakeWeixin(options);
  }

  /** `http://127.0.0.1:<port>`: the API base (paths `ilink/bot/<name>` below it). */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** `http://127.0.0.1:<port>/c2c`: the CDN base (`/download`, `/upload` below it). */
  get cdnBaseUrl(): string {
    return `${this.baseUrl}/c2c`;
  }

  /** The bot token accepted now (after a QR login, the confirmed one); undefined before any login. */
  get botToken(): string | undefined {
    return this.#token;
  }

  /** The bot's id. */
  get botId(): string {
    return this.#botId;
  }

  /** True while a `getupdates` long poll is held. */
  get polling(): boolean {
    return this.#pollHeld;
  }

  /** Messages queued and not yet delivered. */
  get pending(): number {
    return this.#queue.length;
  }

  /**
   * Queues a message from a WeChat user (a fresh `context_token` issued to them) for the next `getupdates`; returns its
   * `message_id` (a uint64 beyond 2^53) as decimal text.
   */
  userSends(message: WeixinUserMessage): string {
    const given = (["text", "image", "voice", "file"] as const).filter((key) => message[key] !== undefined);
    if (given.length !== 1) throw new Error(`userSends: give exactly one of text, image, voice, file (got ${given})`);
    if (!message.from.endsWith("@im.wechat")) throw new Error(`userSends: ${message.from} is not a user id`);
    const contextToken = Buffer.from(randomBytes(24)).toString("base64");
    this.#tokens.set(contextToken, { user: message.from, sends: 0 });
    this.#writers.add(message.from);
    if (!this.#sessions.has(message.from)) this.#sessions.set(message.from, `fake-session-${this.#sessions.size + 1}`);
    return this.#enqueue({
      from_user_id: message.from,
      to_user_id: this.#botId,
      message_type: 1,
      item: this.#item(message),
      context_token: contextToken,
    });
  }

  /** Queues a message of the bot's own (`message_type` 2, as the service echoes them), which a client must ignore. */
  botMessage(to: string, text: string): string {
    return this.#enqueue({ from_user_id: this.#botId, to_user_id: to, message_type: 2, item: textItem(text) });
  }

  /** The next getupdates answers -14, and every bot call after it, until a QR login confirms a new token. */
  expireSession(): void {
    this.#expired = true;
    this.#wake.wakeAll();
  }

  /** For `ms`, every request (API, CDN, login) is answered HTTP 503 and counted in `callsDuringOutage`. */
  outage(ms: number): void {
    this.#outageUntil = performance.now() + ms;
    this.#wake.wakeAll();
  }

  /** An inbound file the CDN held is gone (its download answers 404, as expired media does; not a violation). */
  forgetMedia(encryptQueryParam: string): void {
    this.#cdn.forget(encryptQueryParam);
  }

  /** Resolves once a `getupdates` long poll is held. */
  waitForPoll(limitMs = 5_000): Promise<void> {
    return waitFor(() => this.#pollHeld, "a held getupdates long poll", { limitMs, everyMs: 5 });
  }

  /** Resolves once `count` sends were accepted; fails after `limitMs` saying how many were. */
  waitForSent(count: number, limitMs = 10_000): Promise<void> {
    return waitFor(() => this.sent.length >= count, `${count} accepted send(s) (got ${this.sent.length})`, {
      limitMs,
      everyMs: 5,
    });
  }

  /** The violations so far, taken (so `close()` does not fail on those the test provoked on purpose). */
  takeViolations(): string[] {
    return this.violations.splice(0);
  }

  /** Releases held polls, stops the server, and fails when any violation was recorded. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#wake.wakeAll();
    await this.#server.shutdown();
    assert.deepEqual(this.violations, [], "the fake WeChat iLink server saw requests that break the protocol");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #item(message: WeixinUserMessage): Record<string, unknown> {
    const fullUrl = message.fullUrl ?? false;
    if (message.text !== undefined) return textItem(message.text);
    if (message.image) {
      const stored = this.#cdn.storeInbound("image", message.image);
      const hexKey = Buffer.from(stored.key).toString("hex");
      const media = this.#cdn.mediaObject(stored, "image", fullUrl);
      return { type: 2, image_item: { aeskey: hexKey, media, mid_size: stored.size } };
    }
    if (message.voice) {
      const stored = this.#cdn.storeInbound("voice", message.voice.silk);
      const voice_item = {
        media: this.#cdn.mediaObject(stored, "voice", fullUrl),
        encode_type: 6,
        sample_rate: 24_000,
        playtime: message.voice.playtimeMs ?? 1_000,
        ...(message.voice.text === undefined ? {} : { text: message.voice.text }),
      };
      return { type: 3, voice_item };
    }
    const file = message.file!;
    const stored = this.#cdn.storeInbound("file", file.bytes);
    const media = this.#cdn.mediaObject(stored, "file", fullUrl);
    return { type: 4, file_item: { media, file_name: file.name, len: String(file.bytes.length) } };
  }

  #enqueue(
    fields: { from_user_id: string; to_user_id: string; message_type: 1 | 2; item: object; context_token?: string },
  ): string {
    const position = ++this.#position;
    const id = (MESSAGE_ID_BASE + BigInt(position)).toString();
    const now = Date.now();
    const user = fields.message_type === 1 ? fields.from_user_id : fields.to_user_id;
    const message = {
      seq: position,
      from_user_id: fields.from_user_id,
      to_user_id: fields.to_user_id,
      create_time_ms: now,
      update_time_ms: now,
      session_id: this.#sessions.get(user) ?? "fake-session-0",
      message_type: fields.message_type,
      message_state: 2,
      item_list: [{ ...fields.item, create_time_ms: now, is_completed: true }],
      ...(fields.context_token === undefined ? {} : { context_token: fields.context_token }),
    };
    // Written by hand: a bare uint64 a JSON.stringify of a number could not carry.
    const json = `{"message_id":${id},${JSON.stringify(message).slice(1)}`;
    this.#queue.push({ position, json, ...(fields.context_token ? { contextToken: fields.context_token } : {}) });
    this.#wake.wakeAll();
    return id;
  }

  #cursorFor(position: number): string {
    const cursor = Buffer.from(`fake-weixin-sync:${this.#cursorNonce}:${position}`).toString("base64");
    this.#cursors.set(cursor, position);
    return cursor;
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (performance.now() < this.#outageUntil) {
      this.callsDuringOutage++;
      await request.body?.cancel();
      return new Response("fake outage", { status: 503 });
    }
    const path = url.pathname;
    if (path.startsWith("/c2c/")) return await this.#cdn.handle(request, path.slice("/c2c".length), url);
    if (request.method === "POST" && path === "/ilink/bot/get_bot_qrcode") return this.login.handleQrCode(request, url);
    if (request.method === "GET" && path === "/ilink/bot/get_qrcode_status") {
      return this.login.handleStatus(request, url);
    }
    const name = path.slice("/ilink/bot/".length);
    if (request.method !== "POST" || !path.startsWith("/ilink/bot/") || !BOT_CALLS.includes(name)) {
      await request.body?.cancel();
      this.violations.push(`${request.method} ${path}: no such iLink call`);
      return Response.json({ errcode: -1, errmsg: "not found" }, { status: 404 });
    }
    const route = `POST ilink/bot/${name}`;
    let body: unknown;
    try {
      body = JSON.parse(await request.text());
    } catch {
      body = undefined;
    }
    if (!isRecord(body)) {
      this.violations.push(`${route}: body is not a JSON object`);
      return Response.json({ errcode: -1, errmsg: "bad request" }, { status: 400 });
    }
    const problems = botHeaderProblems(request.headers, this.#lastUin);
    this.#lastUin = request.headers.get("x-wechat-uin") ?? this.#lastUin;
    if (problems.length) {
      this.violations.push(...problems.map((problem) => `${route}: ${problem}`));
      return Response.json(SESSION_TIMEOUT);
    }
    const token = request.headers.get("authorization")!.slice("Bearer ".length);
    if (token !== this.#token || this.#expired) {
      if (token === this.#token || this.#retired.has(token)) this.callsWhileExpired++;
      else this.violations.push(`${route}: header Authorization carries a token the fake never issued`);
      return Response.json(SESSION_TIMEOUT);
    }
    this.violations.push(...baseInfoProblems(body).map((problem) => `${route}: ${problem}`));
    switch (name) {
      case "getupdates":
        return await this.#getUpdates(request, body, token);
      case "sendmessage":
        return this.#sendMessage(body);
      case "getconfig":
        return this.#getConfig(route, body);
      case "sendtyping":
        return this.#sendTyping(route, body);
      case "getuploadurl": {
        const { problems, answer } = this.#cdn.uploadUrl(body, this.#uploadFullUrl);
        this.violations.push(...problems.map((problem) => `${route}: ${problem}`));
        return Response.json(answer ?? { ret: -1, errmsg: "invalid param" });
      }
      default:
        this.notifications.push(name === "msg/notifystart" ? "start" : "stop");
        return Response.json({ ret: 0, errmsg: "" });
    }
  }

  async #getUpdates(request: Request, body: Record<string, unknown>, token: string): Promise<Response> {
    this.polls++;
    const route = "POST ilink/bot/getupdates";
    const buf = body.get_updates_buf;
    let position = 0;
    if (typeof buf !== "string") {
      this.violations.push(`${route}: get_updates_buf is missing ("" only the first time)`);
    } else if (buf !== "") {
      const known = this.#cursors.get(buf);
      if (known === undefined) this.violations.push(`${route}: get_updates_buf ${buf} was never issued`);
      position = known ?? this.#shown;
    }
    if (position < this.#shown) {
      const sent = buf === "" ? "an empty get_updates_buf" : `an older get_updates_buf (position ${position})`;
      this.violations.push(
        `${route}: ${sent} after the client showed it holds position ${this.#shown} (a restart would see duplicates)`,
      );
    }
    this.#shown = Math.max(this.#shown, position);
    // A client that gave up on a poll and asks again may be a moment ahead of the server seeing the first one go.
    const grace = performance.now() + 100;
    while (this.#pollHeld && performance.now() < grace) await new Promise((resolve) => setTimeout(resolve, 5));
    if (this.#pollHeld) {
      this.violations.push(`${route}: a second long poll while one is held (one getupdates per bot at a time)`);
      return this.#updatesAnswer([]).response;
    }
    this.#pollHeld = true;
    try {
      // request.signal (Deno warns once that it also aborts after a successful answer): the only word that a client
      // gave up on its poll, so that its next poll is no second one and nothing is delivered into a closed socket.
      const deadline = performance.now() + this.#longPollMs;
      while (!this.#closing && !request.signal.aborted) {
        if (performance.now() < this.#outageUntil) return new Response("fake outage", { status: 503 });
        if (this.#expired || token !== this.#token) return Response.json(SESSION_TIMEOUT);
        if (this.#queue.length) return this.#deliver();
        const left = deadline - performance.now();
        if (left <= 0) break;
        await this.#wake.wait(left, request.signal);
      }
      return this.#updatesAnswer([]).response;
    } finally {
      this.#pollHeld = false;
    }
  }

  /** Delivery consumes: the batch is gone from the queue, and no cursor brings it back. */
  #deliver(): Response {
    const batch = this.#queue.splice(0);
    this.#consumed = batch.at(-1)!.position;
    for (const queued of batch) {
      const entry = queued.contextToken ? this.#tokens.get(queued.contextToken) : undefined;
      if (entry) entry.deliveredAt = this.#consumed;
    }
    const response = this.#updatesAnswer(batch.map((queued) => queued.json));
    this.lastUpdatesText = response.text;
    return response.response;
  }

  #updatesAnswer(messages: string[]): { response: Response; text: string } {
    const cursor = JSON.stringify(this.#cursorFor(this.#consumed));
    const text = `{"ret":0,"msgs":[${
      messages.join(",")
    }],"get_updates_buf":${cursor},"longpolling_timeout_ms":${this.#longPollMs}}`;
    return { response: new Response(text, { headers: { "content-type": "application/json" } }), text };
  }

  #sendMessage(body: Record<string, unknown>): Response {
    const at = performance.now();
    const checked = checkSendMessage(body, {
      textLimit: this.#textLimit,
      tokenLimit: this.#tokenLimit,
      writers: this.#writers,
      clientIds: this.#clientIds,
      tokens: this.#tokens,
      cdn: this.#cdn,
    });
    const { problems, to, clientId, token } = checked;
    let paced = false;
    if (!problems.length) {
      const recent = this.#acceptedAt.filter((time) => at - time < this.#pacing.windowMs);
      if (recent.length >= this.#pacing.sends) {
        paced = true;
        problems.push(
          `a send within ${this.#pacing.windowMs} ms of ${recent.length} others (prepare failed: pace sends)`,
        );
      }
    }
    if (problems.length || !token) {
      this.violations.push(...problems.map((problem) => `POST ilink/bot/sendmessage: ${problem}`));
      this.refusals.push({ reasons: problems, to, clientId, at });
      return Response.json(paced ? { ret: -2, errmsg: "prepare failed" } : { ret: -2 });
    }
    token.sends++;
    // Replying with a token shows the client holds the cursor that delivered it.
    this.#shown = Math.max(this.#shown, token.deliveredAt!);
    this.#acceptedAt.push(at);
    this.sent.push({
      to: to as string,
      kind: checked.kind,
      ...(checked.text === undefined ? {} : { text: checked.text }),
      ...(checked.bytes ? { bytes: checked.bytes } : {}),
      ...(checked.fileName === undefined ? {} : { fileName: checked.fileName }),
      clientId: clientId as string,
      contextToken: checked.contextToken as string,
      at,
    });
    return Response.json(this.sendSuccess === "empty" ? {} : { ret: 0, errmsg: "" });
  }

  #getConfig(route: string, body: Record<string, unknown>): Response {
    const user = body.ilink_user_id;
    if (typeof user !== "string" || !user.endsWith("@im.wechat")) {
      this.violations.push(`${route}: ilink_user_id is ${JSON.stringify(user)}, not a user id`);
      return Response.json({ ret: -1, errmsg: "invalid ilink_user_id" });
    }
    let ticket = this.#tickets.get(user);
    if (!ticket) this.#tickets.set(user, ticket = Buffer.from(randomBytes(18)).toString("base64"));
    return Response.json({ ret: 0, typing_ticket: ticket });
  }

  #sendTyping(route: string, body: Record<string, unknown>): Response {
    const problems: string[] = [];
    const user = body.ilink_user_id;
    const ticket = typeof user === "string" ? this.#tickets.get(user) : undefined;
    if (ticket === undefined || body.typing_ticket !== ticket) {
      problems.push(`typing_ticket is not the one getconfig gave for ${JSON.stringify(user)}`);
    }
    if (body.status !== 1 && body.status !== 2) problems.push(`status is ${JSON.stringify(body.status)}, not 1 or 2`);
    if ("context_token" in body) problems.push("carries a context_token (typing takes none; it would be consumed)");
    if (problems.length) {
      this.violations.push(...problems.map((problem) => `${route}: ${problem}`));
      return Response.json({ ret: -1, errmsg: "invalid typing request" });
    }
    this.typing.push({ user: user as string, status: body.status as 1 | 2, at: performance.now() });
    return Response.json({ ret: 0 });
  }
}

function textItem(text: string): Record<string, unknown> {
  return { type: 1, text_item: { text } };
}
