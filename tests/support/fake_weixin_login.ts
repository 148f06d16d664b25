/**
 * The QR-login half of the fake WeChat iLink bot API ({@link ./fake_weixin.ts}): `POST ilink/bot/get_bot_qrcode?bot_type=3`
 * issues a code, `GET ilink/bot/get_qrcode_status?qrcode=…` long-polls its status, and the test plays the person with
 * the phone ({@link FakeWeixinLogin.scan}, {@link FakeWeixinLogin.confirm}, {@link FakeWeixinLogin.expire}).
 *
 * Read from `@tencent-weixin/openclaw-weixin` (`src/auth/login-qr.ts`, `src/api/api.ts`); written anew. The live
 * service's pair-code and redirect statuses (`need_verifycode`, `scaned_but_redirect`, `binded_redirect`) are not
 * modelled.
 *
 * @module
 */

/** The QR statuses the fake gives (the service spells `scaned` so). */
export type WeixinQrStatus = "wait" | "scaned" | "confirmed" | "expired";

/** The credentials a confirmed login carries. */
export interface WeixinLoginCredentials {
  bot_token: string;
  ilink_bot_id: string;
  baseurl: string;
  ilink_user_id: string;
}

/**
 * Parked long polls, woken together when anything they may wait for changes (a message queued, a status changed, the
 * session expired, the fake closing).
 *
 * @example
 * ```ts
 * const wake = new Wakeup();
 * const parked = wake.wait(1_000, new AbortController().signal);
 * wake.wakeAll(); // `parked` resolves now, not after a second
 * await parked;
 * ```
 */
export class Wakeup {
  readonly #waiters = new Set<() => void>();

  /** Resolves after `ms`, on {@link Wakeup.wakeAll}, or when `signal` aborts — whichever is first. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done);
      this.#waiters.add(done);
    });
  }

  /** Wakes every parked poll. */
  wakeAll(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/**
 * What is wrong with the headers every iLink call carries, token or not (`iLink-App-Id: bot`, a decimal
 * `iLink-App-ClientVersion`); empty when nothing.
 *
 * @example
 * ```ts
 * commonHeaderProblems(new Headers({ "iLink-App-Id": "bot" })); // ["header iLink-App-ClientVersion is missing …"]
 * ```
 */
export function commonHeaderProblems(headers: Headers): string[] {
  const problems: string[] = [];
  const appId = headers.get("ilink-app-id");
  if (appId !== "bot") {
    problems.push(`header iLink-App-Id is ${appId === null ? "missing" : JSON.stringify(appId)}, not "bot"`);
  }
  const version = headers.get("ilink-app-clientversion");
  if (version === null || !/^(0|[1-9]\d{0,9})$/.test(version) || Number(version) > 0xffffffff) {
    problems.push(
      `header iLink-App-ClientVersion is ${
        version === null ? "missing" : JSON.stringify(version)
      }, not a decimal uint32 (0x00MMNNPP)`,
    );
  }
  return problems;
}

interface QrCode {
  status: WeixinQrStatus;
  /** The status the last answer for this code carried: a poll is held until the status differs from it. */
  reported: WeixinQrStatus | undefined;
  credentials?: WeixinLoginCredentials;
}

/** How {@link FakeWeixinLogin} reaches the fake it belongs to. */
export interface FakeWeixinLoginHost {
  /** How long a status poll is held while nothing changes. */
  holdMs: number;
  /** True once the fake is closing: held polls answer at once. */
  closing(): boolean;
  wake: Wakeup;
  violation(text: string): void;
  /** A login was confirmed: the fake takes `botToken` as its token; returns the credentials to answer with. */
  confirmed(userId: string, botToken: string): WeixinLoginCredentials;
}

const SESSION_TIMEOUT = { errcode: -14, errmsg: "session timeout" };

/**
 * The QR login of a {@link FakeWeixin} (its `login` field); the test drives the latest code issued.
 *
 * @example
 * ```ts
 * import { FakeWeixin } from "./fake_weixin.ts";
 *
 * await using fake = FakeWeixin.start({ loggedIn: false });
 * // … the client fetches a code with get_bot_qrcode and polls get_qrcode_status …
 * fake.login.scan();
 * fake.login.confirm({ userId: "wxid_owner@im.wechat" });
 * ```
 */
export class FakeWeixinLogin {
  /** The codes issued, oldest first. */
  readonly codes: string[] = [];
  /** `get_qrcode_status` requests received (to assert a client polls calmly). */
  statusPolls = 0;
  readonly #codes = new Map<string, QrCode>();
  readonly #host: FakeWeixinLoginHost;
  #tokens = 0;

  constructor(host: FakeWeixinLoginHost) {
    this.#host = host;
  }

  /** The latest code's status; undefined before any code was issued. */
  get status(): WeixinQrStatus | undefined {
    return this.#latest(false)?.status;
  }

  /** The person scanned the latest code (`wait` → `scaned`). */
  scan(): void {
    this.#move(["wait"], "scaned");
  }

  /** The person confirmed on the phone: the code answers `confirmed` with credentials; returns the new bot token. */
  confirm(options: { userId: string; botToken?: string }): string {
    const code = this.#move(["wait", "scaned"], "confirmed");
    const token = options.botToken ?? `fake-weixin-login-token-${++this.#tokens}`;
    code.credentials = this.#host.confirmed(options.userId, token);
    return token;
  }

  /** The latest code expired (polls of it keep answering `expired`; the client must fetch a new one). */
  expire(): void {
    this.#move(["wait", "scaned"], "expired");
  }

  #latest(required: true): QrCode;
  #latest(required: false): QrCode | undefined;
  #latest(required: boolean): QrCode | undefined {
    const code = this.codes.at(-1);
    if (code === undefined && required) throw new Error("fake WeChat login: no QR code was issued yet");
    return code === undefined ? undefined : this.#codes.get(code);
  }

  #move(from: WeixinQrStatus[], to: WeixinQrStatus): QrCode {
    const code = this.#latest(true);
    if (!from.includes(code.status)) throw new Error(`fake WeChat login: cannot go from ${code.status} to ${to}`);
    code.status = to;
    this.#host.wake.wakeAll();
    return code;
  }

  /** `POST ilink/bot/get_bot_qrcode?bot_type=3`. */
  async handleQrCode(request: Request, url: URL): Promise<Response> {
    const text = await request.text();
    const route = "POST ilink/bot/get_bot_qrcode";
    const problems = commonHeaderProblems(request.headers);
    if (request.headers.get("content-type")?.split(";")[0]?.trim() !== "application/json") {
      problems.push(`header Content-Type is ${request.headers.get("content-type")}, not application/json`);
    }
    if (url.searchParams.get("bot_type") !== "3") {
      problems.push(`bot_type is ${JSON.stringify(url.searchParams.get("bot_type"))}, not "3"`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push("body is not JSON");
    }
    const list = (body as { local_token_list?: unknown } | undefined)?.local_token_list;
    if (list !== undefined && (!Array.isArray(list) || list.length > 10 || list.some((t) => typeof t !== "string"))) {
      problems.push("local_token_list is not a list of at most 10 tokens");
    }
    if (problems.length) {
      for (const problem of problems) this.#host.violation(`${route}: ${problem}`);
      return Response.json(SESSION_TIMEOUT);
    }
    const code = `fakeqr${crypto.randomUUID().replaceAll("-", "")}`;
    this.codes.push(code);
    this.#codes.set(code, { status: "wait", reported: undefined });
    return Response.json({
      qrcode: code,
      qrcode_img_content: `https://liteapp.weixin.qq.com/q/fake?qrcode=${code}&bot_type=3`,
    });
  }

  /** `GET ilink/bot/get_qrcode_status?qrcode=…`, held while the status stays what this code last answered. */
  async handleStatus(request: Request, url: URL): Promise<Response> {
    this.statusPolls++;
    const route = "GET ilink/bot/get_qrcode_status";
    const problems = commonHeaderProblems(request.headers);
    const code = this.#codes.get(url.searchParams.get("qrcode") ?? "");
    if (!code) problems.push(`qrcode ${JSON.stringify(url.searchParams.get("qrcode"))} was never issued`);
    if (problems.length || !code) {
      for (const problem of problems) this.#host.violation(`${route}: ${problem}`);
      return Response.json(SESSION_TIMEOUT);
    }
    const deadline = performance.now() + this.#host.holdMs;
    while (
      code.status === code.reported && performance.now() < deadline && !request.signal.aborted && !this.#host.closing()
    ) {
      await this.#host.wake.wait(deadline - performance.now(), request.signal);
    }
    code.reported = code.status;
    return Response.json({ status: code.status, ...(code.status === "confirmed" ? code.credentials : {}) });
  }
}
