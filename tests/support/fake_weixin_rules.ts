/**
 * The request rules of the fake WeChat iLink bot API ({@link ./fake_weixin.ts}) that need no server: the headers every
 * bot call carries, `base_info`, and what a `sendmessage` body must be. Each returns the problems it found, worded for
 * a violation; the fake decides how to answer.
 *
 * Read from `@tencent-weixin/openclaw-weixin` (`src/api/api.ts`, `src/api/types.ts`, `src/messaging/send.ts`) and the
 * integrators' reports in `/work/shared/reference/weixin-ilink.md`; written anew.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { commonHeaderProblems } from "./fake_weixin_login.ts";
import type { WeixinCdnStore, WeixinMediaKind } from "./fake_weixin_media.ts";

/** Item `type` → the media kind (and `<kind>_item` field) it carries; 1 is text. */
const ITEM_KINDS: Record<number, WeixinMediaKind> = { 2: "image", 3: "voice", 4: "file", 5: "video" };

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * What is wrong with a bot call's headers (Content-Type, AuthorizationType, Authorization, X-WECHAT-UIN and the common
 * iLink-App-* ones); `previousUin` is the last request's X-WECHAT-UIN, which must not repeat (it is random per request).
 *
 * @example
 * ```ts
 * const problems = botHeaderProblems(new Headers({ "Content-Type": "application/json" }), "");
 * problems[0]; // "header AuthorizationType is missing, not ilink_bot_token"
 * ```
 */
export function botHeaderProblems(headers: Headers, previousUin: string): string[] {
  const problems: string[] = [];
  const contentType = headers.get("content-type");
  if (contentType?.split(";")[0]?.trim() !== "application/json") {
    problems.push(`header Content-Type is ${contentType ?? "missing"}, not application/json`);
  }
  const authorizationType = headers.get("authorizationtype");
  if (authorizationType !== "ilink_bot_token") {
    problems.push(`header AuthorizationType is ${authorizationType ?? "missing"}, not ilink_bot_token`);
  }
  const authorization = headers.get("authorization");
  if (!authorization?.startsWith("Bearer ") || authorization.length === "Bearer ".length) {
    problems.push(`header Authorization is ${authorization === null ? "missing" : "not Bearer <token>"}`);
  }
  const uin = headers.get("x-wechat-uin");
  const decoded = uin === null ? "" : Buffer.from(uin, "base64").toString("latin1");
  if (uin === null || !/^(0|[1-9]\d{0,9})$/.test(decoded) || Number(decoded) > 0xffffffff) {
    problems.push(`header X-WECHAT-UIN is ${uin ?? "missing"}, not base64 of a decimal uint32`);
  } else if (uin === previousUin) {
    problems.push("header X-WECHAT-UIN repeats the previous request's (it is random per request)");
  }
  return [...problems, ...commonHeaderProblems(headers)];
}

/**
 * What is wrong with a bot call's `base_info` (`channel_version`, `bot_agent` of at most 256 bytes). The live service
 * uses it for observability only, so the fake records these without refusing the call.
 *
 * @example
 * ```ts
 * baseInfoProblems({ base_info: { channel_version: "2.4.9", bot_agent: "homed/1.0" } }); // []
 * ```
 */
export function baseInfoProblems(body: Record<string, unknown>): string[] {
  const info = isRecord(body.base_info) ? body.base_info : undefined;
  if (!info) return ["body has no base_info"];
  const problems: string[] = [];
  if (typeof info.channel_version !== "string" || info.channel_version === "") {
    problems.push("base_info.channel_version is missing");
  }
  const agent = info.bot_agent;
  if (typeof agent !== "string" || agent === "") problems.push("base_info.bot_agent is missing");
  else if (new TextEncoder().encode(agent).length > 256) problems.push("base_info.bot_agent is over 256 bytes");
  return problems;
}

/** A `context_token` the fake issued with an inbound message. */
export interface IssuedContextToken {
  user: string;
  /** Sends accepted with it. */
  sends: number;
  /** The cursor position of the answer that delivered it; undefined while queued. */
  deliveredAt?: number;
}

/** What {@link checkSendMessage} checks a send against; `clientIds` gains the send's id. */
export interface SendState {
  textLimit: number;
  tokenLimit: number;
  /** Users who wrote to the bot. */
  writers: ReadonlySet<string>;
  /** Every `client_id` seen so far. */
  clientIds: Set<string>;
  tokens: ReadonlyMap<string, IssuedContextToken>;
  cdn: WeixinCdnStore;
}

/** A `sendmessage` body taken apart: its problems, and what it would send. */
export interface CheckedSend {
  problems: string[];
  to: unknown;
  clientId: unknown;
  contextToken: unknown;
  kind: "text" | WeixinMediaKind;
  text?: string;
  /** Uploaded media, decrypted. */
  bytes?: Uint8Array;
  fileName?: string;
  /** The token's record, when it is one the fake issued. */
  token?: IssuedContextToken;
}

/**
 * Checks a `sendmessage` body: `from_user_id` "", `message_type` 2, `message_state` 2, a recipient who wrote, a fresh
 * `client_id`, that recipient's delivered `context_token` within its send limit, exactly one item — text within the
 * limit, or media the client uploaded for that recipient. Pacing is the caller's (it needs the clock).
 *
 * @example
 * ```ts
 * import { WeixinCdnStore } from "./fake_weixin_media.ts";
 *
 * const cdn = new WeixinCdnStore(() => {}, "http://127.0.0.1:1/c2c");
 * const state = { textLimit: 2000, tokenLimit: 10, writers: new Set<string>(), clientIds: new Set<string>(), tokens: new Map(), cdn };
 * checkSendMessage({ msg: { to_user_id: "wxid_x@im.wechat" } }, state).problems.length > 0; // true
 * ```
 */
export function checkSendMessage(body: Record<string, unknown>, state: SendState): CheckedSend {
  const msg = isRecord(body.msg) ? body.msg : undefined;
  const to = msg?.to_user_id;
  const clientId = msg?.client_id;
  const contextToken = msg?.context_token;
  const token = typeof contextToken === "string" ? state.tokens.get(contextToken) : undefined;
  const checked: CheckedSend = { problems: [], to, clientId, contextToken, kind: "text", ...(token ? { token } : {}) };
  const problems = checked.problems;
  if (!msg) {
    problems.push("msg is missing");
    return checked;
  }
  if (msg.from_user_id !== "") problems.push(`msg.from_user_id is ${JSON.stringify(msg.from_user_id)}, not ""`);
  if (msg.message_type !== 2) problems.push(`msg.message_type is ${msg.message_type}, not 2 (bot)`);
  if (msg.message_state !== 2) problems.push(`msg.message_state is ${msg.message_state}, not 2 (finish)`);
  if (typeof to !== "string" || !state.writers.has(to)) {
    problems.push(`msg.to_user_id ${JSON.stringify(to)} never wrote to the bot`);
  }
  if (typeof clientId !== "string" || clientId === "") problems.push("msg.client_id is missing");
  else if (state.clientIds.has(clientId)) problems.push(`msg.client_id ${clientId} was used before`);
  else state.clientIds.add(clientId);
  if (contextToken === undefined) problems.push("msg.context_token is missing");
  else if (!token || token.deliveredAt === undefined) problems.push("msg.context_token was never issued");
  else if (token.user !== to) problems.push(`msg.context_token was issued to ${token.user}, not ${to}`);
  else if (token.sends >= state.tokenLimit) {
    problems.push(`msg.context_token already carried ${state.tokenLimit} sends (its limit)`);
  }
  const items = Array.isArray(msg.item_list) ? msg.item_list : [];
  const item: unknown = items[0];
  if (items.length !== 1) problems.push(`msg.item_list has ${items.length} items, not exactly 1`);
  else if (!isRecord(item)) problems.push("msg.item_list[0] is not an object");
  else if (item.type === 1) {
    const text = isRecord(item.text_item) ? item.text_item.text : undefined;
    if (typeof text !== "string" || text === "") problems.push("text_item.text is missing or empty");
    else if ([...text].length > state.textLimit) {
      problems.push(`text is ${[...text].length} characters, over the limit of ${state.textLimit} (split it)`);
    } else checked.text = text;
  } else if (typeof item.type === "number" && ITEM_KINDS[item.type]) {
    const kind = checked.kind = ITEM_KINDS[item.type]!;
    const kindItem = item[`${kind}_item`];
    if (!isRecord(kindItem)) problems.push(`item type ${item.type} without ${kind}_item`);
    else {
      const outbound = state.cdn.outbound(kind, kindItem, String(to));
      problems.push(...outbound.problems);
      if (outbound.bytes) checked.bytes = outbound.bytes;
      if (outbound.fileName !== undefined) checked.fileName = outbound.fileName;
    }
  } else problems.push(`msg.item_list[0].type is ${JSON.stringify(item.type)}, not a known item type`);
  return checked;
}
