/**
 * The wire of Tencent's iLink bot API (personal WeChat, the protocol of npm `@tencent-weixin/openclaw-weixin`): every
 * header and `base_info` built in one place — a missing `iLink-App-*` header is answered with the same -14 as a stale
 * token, so a header mistake would look like an expired session — each call with the official client's timeout, the
 * answer parsed without losing uint64 ids, and success read as "no non-zero `ret` and no non-zero `errcode`" (the
 * service answers both `{}` and `{"ret":0}`, and -14 sometimes without `ret`). The protocol, with what is documented
 * and what only observed: `/work/shared/reference/weixin-ilink.md`.
 *
 * @module
 */

import type { Clock } from "../../clock.ts";
import { encodeBase64 } from "../../text/base64.ts";
import { VERSION } from "../../version.ts";

/** The official client's version homed speaks as (its protocol, 2.4.9), and its `0x00MMNNPP` decimal form. */
export const ILINK_CHANNEL_VERSION = "2.4.9";
const CLIENT_VERSION = String((2 << 16) | (4 << 8) | 9); // "132105"
const APP_ID = "bot";
const BOT_AGENT = `homed/${VERSION}`;

/** The official client's timeouts (ms): getupdates is the server's long-poll time plus this margin. */
export const ILINK_TIMEOUTS = { pollMargin: 5_000, send: 15_000, upload: 15_000, config: 10_000, typing: 10_000 };

/** The errcode/ret of a stale session (or of headers the service does not accept). */
export const SESSION_EXPIRED = -14;

/**
 * An answer that says no (HTTP 200 with a non-zero `ret` or `errcode`): `code` is that number (-14 session expired,
 * -2 a send refused).
 */
export class IlinkApiError extends Error {
  readonly code: number;
  readonly call: string;
  /**
   * @example
   * ```ts
   * const error = new IlinkApiError("sendmessage", -2, "");
   * error.message; // "iLink sendmessage answered ret -2"
   * ```
   */
  constructor(call: string, code: number, errmsg: string) {
    super(`iLink ${call} answered ret ${code}${errmsg ? ` (${errmsg})` : ""}`);
    this.name = "IlinkApiError";
    this.code = code;
    this.call = call;
  }
}

/** No usable answer: a network error, an HTTP status other than 2xx, a body that is not JSON, or the call's timeout. */
export class IlinkTransportError extends Error {
  /** True when the client's own timeout ended the call (for getupdates, the normal end of an empty long poll). */
  readonly timedOut: boolean;
  /**
   * @example
   * ```ts
   * new IlinkTransportError("getupdates: HTTP 503", false).timedOut; // false
   * ```
   */
  constructor(message: string, timedOut: boolean) {
    super(message);
    this.name = "IlinkTransportError";
    this.timedOut = timedOut;
  }
}

/**
 * Whether `error` says the session expired (-14): a new QR login is needed.
 *
 * @example
 * ```ts
 * isSessionExpired(new IlinkApiError("getupdates", -14, "session timeout")); // true
 * ```
 */
export function isSessionExpired(error: unknown): boolean {
  return error instanceof IlinkApiError && error.code === SESSION_EXPIRED;
}

/** The uint64 id fields, quoted before parsing: a plain `JSON.parse` rounds neighbouring ids beyond 2^53 together. */
const BIG_IDS = /((?<!\\)"(?:message_id|msg_id|svr_id)"\s*:\s*)(-?\d+)(?=\s*[,}\]])/g;

/**
 * Parses an iLink answer with `message_id`, `msg_id` and `svr_id` kept as decimal strings, digit for digit.
 *
 * @example
 * ```ts
 * const parsed = parseIlinkJson('{"msgs":[{"message_id":7350000000000000001}]}') as { msgs: { message_id: string }[] };
 * parsed.msgs[0]!.message_id; // "7350000000000000001"
 * ```
 */
export function parseIlinkJson(text: string): unknown {
  return JSON.parse(text.replace(BIG_IDS, '$1"$2"'));
}

/** One `WeixinMessage` item as it arrives (only the parts homed reads). */
export interface WireMedia {
  encrypt_query_param?: string;
  aes_key?: string;
  encrypt_type?: number;
  full_url?: string;
}

/** An item of a message's `item_list`. */
export interface WireItem {
  type?: number;
  text_item?: { text?: string };
  image_item?: { aeskey?: string; media?: WireMedia; mid_size?: number };
  voice_item?: { media?: WireMedia; text?: string; encode_type?: number; playtime?: number };
  file_item?: { media?: WireMedia; file_name?: string; len?: string };
  video_item?: { media?: WireMedia };
}

/** A `WeixinMessage` as `getupdates` delivers it; `message_id` as decimal text (lossless). */
export interface WireMessage {
  message_id?: string;
  from_user_id?: string;
  to_user_id?: string;
  message_type?: number;
  create_time_ms?: number;
  item_list?: WireItem[];
  context_token?: string;
}

/** `getupdates`' answer. */
export interface Updates {
  msgs: WireMessage[];
  /** The cursor to send back next ("" or absent: keep the one held). */
  get_updates_buf?: string;
  longpolling_timeout_ms?: number;
}

/** What `getuploadurl` answers. */
export interface UploadUrl {
  upload_param?: string;
  upload_full_url?: string;
}

/** Options of {@link IlinkClient}. */
export interface IlinkClientOptions {
  /** The API base (`https://ilinkai.weixin.qq.com`). */
  baseUrl: string;
  /** The bot token now (it may change after a login); undefined: only the QR calls work. */
  token(): string | undefined;
  clock: Pick<Clock, "after">;
  /** Optional `SKRouteTag` header (a deployment route tag). */
  routeTag?: string;
}

/** Options of one call. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * The iLink calls homed makes, each checked and parsed the same way.
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 *
 * const client = new IlinkClient({
 *   baseUrl: "https://ilinkai.weixin.qq.com",
 *   token: () => "a-bot-token-from-login",
 *   clock: systemClock,
 * });
 * const updates = await client.getUpdates("", 35_000);
 * updates.msgs.length; // messages since the cursor
 * ```
 */
export class IlinkClient {
  readonly #options: IlinkClientOptions;

  constructor(options: IlinkClientOptions) {
    this.#options = options;
  }

  /** The API base. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /** Long-polls for messages after `cursor`; `serverTimeoutMs` is how long the server holds the poll. */
  async getUpdates(cursor: string, serverTimeoutMs: number, signal?: AbortSignal): Promise<Updates> {
    const timeoutMs = serverTimeoutMs + ILINK_TIMEOUTS.pollMargin;
    const answer = await this.#bot("getupdates", { get_updates_buf: cursor }, { timeoutMs, ...opt(signal) });
    return {
      msgs: Array.isArray(answer.msgs) ? answer.msgs as WireMessage[] : [],
      ...(typeof answer.get_updates_buf === "string" ? { get_updates_buf: answer.get_updates_buf } : {}),
      ...(typeof answer.longpolling_timeout_ms === "number"
        ? { longpolling_timeout_ms: answer.longpolling_timeout_ms }
        : {}),
    };
  }

  /** Sends one message (one item); rejects with {@link IlinkApiError} when refused (`ret` -2). */
  async sendMessage(msg: Record<string, unknown>, signal?: AbortSignal): Promise<void> {
    await this.#bot("sendmessage", { msg }, { timeoutMs: ILINK_TIMEOUTS.send, ...opt(signal) });
  }

  /** The typing ticket for a user (`getconfig`); no context token is given (typing must not consume one). */
  async getTypingTicket(userId: string, signal?: AbortSignal): Promise<string> {
    const answer = await this.#bot("getconfig", { ilink_user_id: userId }, {
      timeoutMs: ILINK_TIMEOUTS.config,
      ...opt(signal),
    });
    if (typeof answer.typing_ticket !== "string" || answer.typing_ticket === "") {
      throw new IlinkTransportError("iLink getconfig answered no typing_ticket", false);
    }
    return answer.typing_ticket;
  }

  /** The typing indicator: 1 typing, 2 cancel. */
  async sendTyping(userId: string, ticket: string, status: 1 | 2, signal?: AbortSignal): Promise<void> {
    await this.#bot("sendtyping", { ilink_user_id: userId, typing_ticket: ticket, status }, {
      timeoutMs: ILINK_TIMEOUTS.typing,
      ...opt(signal),
    });
  }

  /** Where to upload a file (`getuploadurl`; its answer has no `ret`). */
  async getUploadUrl(body: Record<string, unknown>, signal?: AbortSignal): Promise<UploadUrl> {
    const answer = await this.#bot("getuploadurl", body, { timeoutMs: ILINK_TIMEOUTS.upload, ...opt(signal) });
    return {
      ...(typeof answer.upload_param === "string" ? { upload_param: answer.upload_param } : {}),
      ...(typeof answer.upload_full_url === "string" && answer.upload_full_url !== ""
        ? { upload_full_url: answer.upload_full_url }
        : {}),
    };
  }

  /**
   * A QR call (no token; the common `iLink-App-*` headers): `POST get_bot_qrcode` or `GET get_qrcode_status`, against
   * `base` (a redirect may name another host).
   */
  async qr(
    method: "GET" | "POST",
    pathAndQuery: string,
    body: Record<string, unknown> | undefined,
    options: CallOptions & { base?: string },
  ): Promise<Record<string, unknown>> {
    const headers = this.#headers(false);
    return await this.#call(pathAndQuery, method, headers, body, options, options.base);
  }

  /** Every header of a call, in this one place: random X-WECHAT-UIN per request, the app id and client version. */
  #headers(withToken: boolean): Headers {
    const headers = new Headers({ "iLink-App-Id": APP_ID, "iLink-App-ClientVersion": CLIENT_VERSION });
    if (this.#options.routeTag) headers.set("SKRouteTag", this.#options.routeTag);
    if (!withToken) return headers;
    const token = this.#options.token();
    if (!token) throw new IlinkTransportError("no WeChat bot token: run `homed weixin login`", false);
    const uin = crypto.getRandomValues(new Uint32Array(1))[0]!;
    headers.set("Content-Type", "application/json");
    headers.set("AuthorizationType", "ilink_bot_token");
    headers.set("Authorization", `Bearer ${token}`);
    headers.set("X-WECHAT-UIN", encodeBase64(new TextEncoder().encode(String(uin))));
    return headers;
  }

  async #bot(name: string, body: Record<string, unknown>, options: CallOptions): Promise<Record<string, unknown>> {
    const full = { ...body, base_info: { channel_version: ILINK_CHANNEL_VERSION, bot_agent: BOT_AGENT } };
    return await this.#call(`ilink/bot/${name}`, "POST", this.#headers(true), full, options);
  }

  async #call(
    pathAndQuery: string,
    method: "GET" | "POST",
    headers: Headers,
    body: Record<string, unknown> | undefined,
    options: CallOptions,
    base = this.#options.baseUrl,
  ): Promise<Record<string, unknown>> {
    const name = pathAndQuery.replace(/^ilink\/bot\//, "").replace(/\?.*$/, "");
    const url = `${base.replace(/\/+$/, "")}/${pathAndQuery}`;
    const timeoutMs = options.timeoutMs ?? ILINK_TIMEOUTS.config;
    const abort = new AbortController();
    let timedOut = false;
    const cancelTimer = this.#options.clock.after(timeoutMs, () => {
      timedOut = true;
      abort.abort(new Error("timeout"));
    });
    const onAbort = () => abort.abort(options.signal?.reason);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (body !== undefined) headers.set("Content-Type", "application/json");
      const response = await fetch(url, {
        method,
        headers,
        signal: abort.signal,
        // Bytes: the Content-Type above is the only one sent.
        ...(body === undefined ? {} : { body: new TextEncoder().encode(JSON.stringify(body)) }),
      });
      const text = await response.text();
      if (!response.ok) {
        throw new IlinkTransportError(`iLink ${name}: HTTP ${response.status}${brief(text)}`, false);
      }
      let parsed: unknown;
      try {
        parsed = parseIlinkJson(text);
      } catch {
        throw new IlinkTransportError(`iLink ${name}: the answer is not JSON${brief(text)}`, false);
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new IlinkTransportError(`iLink ${name}: the answer is not a JSON object`, false);
      }
      const answer = parsed as Record<string, unknown>;
      const code = nonZero(answer.ret) ?? nonZero(answer.errcode);
      if (code !== undefined) {
        throw new IlinkApiError(name, code, typeof answer.errmsg === "string" ? answer.errmsg : "");
      }
      return answer;
    } catch (error) {
      if (error instanceof IlinkApiError || error instanceof IlinkTransportError) throw error;
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      if (timedOut) throw new IlinkTransportError(`iLink ${name}: no answer within ${timeoutMs / 1000} s`, true);
      throw new IlinkTransportError(`iLink ${name} failed: ${(error as Error).message ?? String(error)}`, false);
    } finally {
      cancelTimer();
      options.signal?.removeEventListener("abort", onAbort);
    }
  }
}

function opt(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal ? { signal } : {};
}

/** A non-zero number (or numeric string) of `ret`/`errcode`; undefined for 0 or absent. */
function nonZero(value: unknown): number | undefined {
  const number = typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value;
  return typeof number === "number" && number !== 0 ? number : undefined;
}

/** The start of a body for an error message (a proxy's HTML page says what went wrong). */
function brief(text: string): string {
  const line = text.replace(/\s+/g, " ").trim().slice(0, 120);
  return line ? `: ${line}` : "";
}
