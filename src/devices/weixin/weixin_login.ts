/**
 * WeChat's QR login, as one function a CLI (`homed weixin login`: print the code, wait for the scan) and the console
 * (show the code and its state) both call: `get_bot_qrcode` issues a code, `get_qrcode_status` long-polls it through
 * `wait` → `scaned` → `confirmed` (the credentials), `expired` (a new code, at most 3 times), or a redirect to another
 * host. Each step goes to a callback; every wait has a deadline. The caller keeps the credentials
 * (`saveWeixinLogin`, `weixin_state.ts`).
 *
 * @module
 */

import { type Clock, sleepWith } from "../../clock.ts";
import { IlinkClient, IlinkTransportError } from "./ilink_client.ts";
import type { WeixinCredentials } from "./weixin_state.ts";

/** A step of the login, for the person watching. */
export type WeixinLoginStep =
  /** A code to show: `content` is what the QR code encodes (a URL the WeChat app opens). */
  | { state: "qrcode"; qrcode: string; content: string; attempt: number }
  | { state: "wait" }
  | { state: "scanned" }
  /** The code expired; a new one follows (`refreshes` so far). */
  | { state: "expired"; refreshes: number }
  /** The service moved the polling to another host. */
  | { state: "redirect"; host: string }
  | { state: "confirmed"; botId: string; userId: string };

/** Options of {@link weixinLogin}. */
export interface WeixinLoginOptions {
  /** The API base (`weixin.base_url`). */
  baseUrl: string;
  clock: Pick<Clock, "after" | "monotonic">;
  /** Each step, as it happens. */
  onStep(step: WeixinLoginStep): void;
  /** Earlier bot tokens (at most 10 are sent), so the service can retire them. */
  localTokens?: readonly string[];
  /** Cancels the login. */
  signal?: AbortSignal;
  /** How long the whole login may take (default 8 minutes). */
  timeoutMs?: number;
  /** New codes after the first expires (default 3). */
  maxRefreshes?: number;
  /** Shortest time between two status polls (default 1 s, as the official client). */
  pollEveryMs?: number;
}

/** The login ended without credentials; the message says why and what to do. */
export class WeixinLoginError extends Error {
  /**
   * @example
   * ```ts
   * new WeixinLoginError("the QR code expired 4 times").name; // "WeixinLoginError"
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "WeixinLoginError";
  }
}

/** The client side of one status poll: the server holds it up to ~35 s. */
const STATUS_TIMEOUT_MS = 35_000;

/**
 * Runs the QR login to its end: the credentials of the account that scanned and confirmed, or a
 * {@link WeixinLoginError} (expired too often, the deadline, a pair-code challenge homed cannot answer yet).
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 *
 * const credentials = await weixinLogin({
 *   baseUrl: "https://ilinkai.weixin.qq.com",
 *   clock: systemClock,
 *   onStep: (step) => console.log(step.state === "qrcode" ? `scan: ${step.content}` : step.state),
 * });
 * credentials.userId; // who scanned: "o9cq80abc@im.wechat"
 * ```
 */
export async function weixinLogin(options: WeixinLoginOptions): Promise<WeixinCredentials> {
  const { clock, onStep } = options;
  const timeoutMs = options.timeoutMs ?? 8 * 60_000;
  const maxRefreshes = options.maxRefreshes ?? 3;
  const pollEveryMs = options.pollEveryMs ?? 1_000;
  const client = new IlinkClient({ baseUrl: options.baseUrl, token: () => undefined, clock });
  // One signal for the whole login: the caller's, or the deadline.
  const stop = new AbortController();
  const onAbort = () => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let late = false;
  const cancelDeadline = clock.after(timeoutMs, () => {
    late = true;
    stop.abort(new WeixinLoginError(`the login took longer than ${timeoutMs / 1000} s: run it again`));
  });
  const signal = stop.signal;
  try {
    let refreshes = 0;
    for (;;) {
      const code = await client.qr(
        "POST",
        "ilink/bot/get_bot_qrcode?bot_type=3",
        { local_token_list: (options.localTokens ?? []).slice(-10) },
        { signal, timeoutMs: 15_000 },
      );
      const qrcode = typeof code.qrcode === "string" ? code.qrcode : "";
      const content = typeof code.qrcode_img_content === "string" ? code.qrcode_img_content : "";
      if (qrcode === "") throw new WeixinLoginError("iLink get_bot_qrcode gave no QR code");
      onStep({ state: "qrcode", qrcode, content, attempt: refreshes + 1 });
      const outcome = await pollCode(client, qrcode, { clock, onStep, signal, pollEveryMs });
      if (outcome !== "expired") return outcome;
      refreshes++;
      onStep({ state: "expired", refreshes });
      if (refreshes > maxRefreshes) {
        throw new WeixinLoginError(
          `the QR code expired ${refreshes} times without a scan: run \`homed weixin login\` again when the phone is at hand`,
        );
      }
    }
  } catch (error) {
    if (late) throw signal.reason;
    throw error;
  } finally {
    cancelDeadline();
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/** Polls one code until it is confirmed (the credentials) or expired. */
async function pollCode(
  client: IlinkClient,
  qrcode: string,
  options: Pick<WeixinLoginOptions, "clock" | "onStep" | "pollEveryMs"> & { signal: AbortSignal },
): Promise<WeixinCredentials | "expired"> {
  let base: string | undefined;
  let last = "";
  for (;;) {
    const started = options.clock.monotonic();
    let answer: Record<string, unknown>;
    try {
      answer = await client.qr("GET", `ilink/bot/get_qrcode_status?qrcode=${encodeURIComponent(qrcode)}`, undefined, {
        signal: options.signal,
        timeoutMs: STATUS_TIMEOUT_MS,
        ...(base ? { base } : {}),
      });
    } catch (error) {
      // A poll the client timed out is the normal end of a long poll that saw no change.
      if (error instanceof IlinkTransportError && error.timedOut) continue;
      throw error;
    }
    const status = typeof answer.status === "string" ? answer.status : "";
    switch (status) {
      case "wait":
      case "scaned":
        if (status !== last) options.onStep(status === "wait" ? { state: "wait" } : { state: "scanned" });
        break;
      case "confirmed":
        return confirmed(answer, options.onStep);
      case "expired":
        return "expired";
      case "scaned_but_redirect": {
        const host = typeof answer.redirect_host === "string" ? answer.redirect_host : "";
        if (!/^[A-Za-z0-9.-]+(:\d+)?$/.test(host)) {
          throw new WeixinLoginError(`iLink redirected the login to ${JSON.stringify(host)}, which is not a host`);
        }
        base = `https://${host}`;
        options.onStep({ state: "redirect", host });
        break;
      }
      case "binded_redirect":
        throw new WeixinLoginError(
          "this WeChat account is already bound to this bot: keep the stored token (or unbind it in WeChat first)",
        );
      case "need_verifycode":
      case "verify_code_blocked":
        throw new WeixinLoginError(
          `WeChat asks for a pair code (${status}), which homed cannot enter yet: log in from the phone again later`,
        );
      default:
        throw new WeixinLoginError(`iLink get_qrcode_status answered the unknown status ${JSON.stringify(status)}`);
    }
    last = status;
    // About once a second, as the official client: a server that answers at once is not asked in a tight loop.
    const wait = (options.pollEveryMs ?? 1_000) - (options.clock.monotonic() - started);
    if (wait > 0) await sleepWith(options.clock, wait, options.signal);
  }
}

function confirmed(answer: Record<string, unknown>, onStep: (step: WeixinLoginStep) => void): WeixinCredentials {
  const text = (key: string) => typeof answer[key] === "string" ? answer[key] as string : "";
  const credentials = {
    botToken: text("bot_token"),
    botId: text("ilink_bot_id"),
    baseUrl: text("baseurl"),
    userId: text("ilink_user_id"),
  };
  if (credentials.botToken === "") throw new WeixinLoginError("iLink confirmed the login but gave no bot_token");
  onStep({ state: "confirmed", botId: credentials.botId, userId: credentials.userId });
  return credentials;
}
