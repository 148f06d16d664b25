/**
 * The WeChat kind's owner-only API routes, which the console's login uses:
 *
 * - `POST /api/weixin/login` starts a QR login (one at a time: 409 while one waits) and answers its state once the
 *   first code is there; `GET /api/weixin/login` is that state — `waiting` (with the code as SVG and as the link it
 *   encodes; `refreshes` counts renewed codes), `scanned`, `confirmed` (the token kept 0600 and the device told to
 *   re-check; `user_id` is who scanned), `expired` (too often) or `failed` (`error` says why).
 * - `POST /api/weixin/recheck` makes the running device look for a new token now (what `homed weixin login` asks
 *   after a login on the terminal).
 *
 * The login runs in the daemon, beside the device: {@link WeixinConsoleLogin} is also the service whose stop ends a
 * login still waiting. The token is in no answer and no log line.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Context, Hono } from "hono";
import type { Clock } from "../../clock.ts";
import type { Identity } from "../../identity/identity.ts";
import type { Service } from "../../service/service.ts";
import type { KindRoute } from "../kind.ts";
import { weixinLogin, WeixinLoginError, type WeixinLoginStep } from "./weixin_login.ts";
import { loadWeixinLogin, saveWeixinLogin } from "./weixin_state.ts";

/** A console login's state, as `GET /api/weixin/login` answers it. */
export interface WeixinLoginBody {
  state: "waiting" | "scanned" | "confirmed" | "expired" | "failed";
  /** When it was started (ISO). */
  started_at: string;
  /** The QR code to scan, as an SVG document (while `waiting` or `scanned`). */
  qr_svg?: string;
  /** What the code encodes: a link the WeChat app opens (while `waiting` or `scanned`). */
  qr_text?: string;
  /** Codes renewed after one expired unscanned. */
  refreshes?: number;
  /** Why it ended without a login (`expired`, `failed`). */
  error?: string;
  /** Who scanned (`…@im.wechat`), once `confirmed`. */
  user_id?: string;
  /** The bot's id (`…@im.bot`), once `confirmed`. */
  bot_id?: string;
  /** Once `confirmed`: `weixin.owner` is empty, so `user_id` is worth setting there. */
  owner_unset?: boolean;
}

/** What {@link WeixinConsoleLogin} needs. */
export interface WeixinConsoleLoginOptions {
  /** `weixin.base_url`. */
  baseUrl: string;
  /** `daemon.data_dir`: where the login is kept. */
  dataDir: string;
  /** `weixin.owner` (empty: none yet). */
  owner: string;
  clock: Clock;
  logger: Logger;
  /** The device that picks the new token up. */
  device: { recheckLogin(): void };
  /** New codes after the first expires (default 3). */
  maxRefreshes?: number;
  /** Shortest time between two status polls (default 1 s). */
  pollEveryMs?: number;
  /** How long one login may take (default 8 minutes). */
  timeoutMs?: number;
}

type Running = { body: WeixinLoginBody; stop: AbortController; done: Promise<void> };

/** The caller the API's token check set (`identity`); the kind's routes are mounted on the API's app. */
function identityOf(c: Context): Identity | undefined {
  return (c as unknown as { get(key: "identity"): Identity | undefined }).get("identity");
}

/** An API error in the API's shape (`{"error": {"code", "message"}}`). */
function refuse(c: Context, status: 403 | 404 | 409 | 503, code: string, message: string): Response {
  return c.json({ error: { code, message } }, status);
}

/** A 403 unless the caller is the owner, worded as the API's other owner-only routes. */
function ownerOnly(c: Context, what: string): Response | undefined {
  const identity = identityOf(c);
  if (identity?.trust === "owner") return undefined;
  return refuse(
    c,
    403,
    "forbidden",
    `${what} needs trust owner; this request came from ${JSON.stringify(identity?.name ?? "nobody")} (trust ${
      identity?.trust ?? "none"
    })`,
  );
}

/**
 * The console's WeChat login (one at a time) and the routes that reach it and the device.
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 * import { log } from "../../log/logging.ts";
 *
 * const login = new WeixinConsoleLogin({
 *   baseUrl: "https://ilinkai.weixin.qq.com",
 *   dataDir: "/var/lib/homed",
 *   owner: "",
 *   clock: systemClock,
 *   logger: log("weixin"),
 *   device: { recheckLogin: () => {} },
 * });
 * const parts = { http: [login.route()], services: [login] };
 * ```
 */
export class WeixinConsoleLogin implements Service {
  readonly name = "weixin_login";
  readonly #options: WeixinConsoleLoginOptions;
  #current: Running | undefined;
  #stopped = false;

  constructor(options: WeixinConsoleLoginOptions) {
    this.#options = options;
  }

  start(): Promise<void> {
    this.#stopped = false;
    return Promise.resolve();
  }

  /** Ends a login still waiting for the scan. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#current?.stop.abort(new Error("homed is stopping"));
    await this.#current?.done;
  }

  status(): Record<string, unknown> {
    return { login: this.#current?.body.state ?? "none" };
  }

  /** The latest login's state (a copy); undefined before the first. */
  view(): WeixinLoginBody | undefined {
    return this.#current ? { ...this.#current.body } : undefined;
  }

  /**
   * Starts a login and resolves once its first QR code is there (or it ended); "busy" while another one waits.
   *
   * @example
   * ```ts
   * declare const login: WeixinConsoleLogin;
   * const body = await login.begin();
   * if (body !== "busy") console.log(body.state, body.qr_text);
   * ```
   */
  async begin(): Promise<WeixinLoginBody | "busy"> {
    const state = this.#current?.body.state;
    if (state === "waiting" || state === "scanned") return "busy";
    const options = this.#options;
    // The QR encoder is loaded when a login first needs it, not at every start of homed.
    const { qrSvg } = await import("../../text/qr_code.ts");
    const body: WeixinLoginBody = { state: "waiting", started_at: new Date(options.clock.now()).toISOString() };
    const stop = new AbortController();
    let shown!: () => void;
    const first = new Promise<void>((resolve) => shown = resolve);
    let exhausted = false;
    const onStep = (step: WeixinLoginStep) => {
      if (step.state === "qrcode") {
        body.state = "waiting";
        body.qr_text = step.content;
        if (step.content !== "") body.qr_svg = qrSvg(step.content);
        else delete body.qr_svg;
        shown();
      } else if (step.state === "scanned") {
        body.state = "scanned";
      } else if (step.state === "expired") {
        body.refreshes = Math.min(step.refreshes, options.maxRefreshes ?? 3);
        exhausted = step.refreshes > (options.maxRefreshes ?? 3);
      }
    };
    const earlier = await loadWeixinLogin(options.dataDir).catch(() => undefined);
    const done = weixinLogin({
      baseUrl: options.baseUrl,
      clock: options.clock,
      onStep,
      signal: stop.signal,
      localTokens: earlier ? [earlier.botToken] : [],
      ...(options.maxRefreshes === undefined ? {} : { maxRefreshes: options.maxRefreshes }),
      ...(options.pollEveryMs === undefined ? {} : { pollEveryMs: options.pollEveryMs }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    }).then(async (credentials) => {
      // Kept before it is said to be confirmed: a console that sees "confirmed" finds the token in place.
      await saveWeixinLogin(options.dataDir, credentials);
      options.device.recheckLogin();
      Object.assign(body, {
        state: "confirmed",
        user_id: credentials.userId,
        bot_id: credentials.botId,
        owner_unset: options.owner === "",
      });
      delete body.qr_svg;
      delete body.qr_text;
      options.logger.info("WeChat: the console's login was confirmed by {user}; the device re-checks its token", {
        user: credentials.userId,
      });
    }).catch((error: unknown) => {
      const message = stop.signal.aborted
        ? "the login was stopped (homed is stopping)"
        : error instanceof WeixinLoginError
        ? error.message
        : `the login failed: ${(error as Error).message ?? String(error)}`;
      Object.assign(body, { state: exhausted ? "expired" : "failed", error: message });
      delete body.qr_svg;
      delete body.qr_text;
      options.logger.warning("WeChat: the console's login ended without a token: {error}", { error: message });
    }).finally(() => shown());
    this.#current = { body, stop, done };
    await first;
    return { ...body };
  }

  /**
   * The routes (`/api/weixin/login`, `/api/weixin/recheck`), for the kind's `http`.
   *
   * @example
   * ```ts
   * import { Hono } from "hono";
   *
   * declare const login: WeixinConsoleLogin;
   * login.route().mount(new Hono<{ Variables: Record<string, unknown> }>());
   * ```
   */
  route(): KindRoute {
    return {
      mount: <Variables extends object>(app: Hono<{ Variables: Variables }>) => {
        app.post("/api/weixin/login", async (c) => {
          const refused = ownerOnly(c, "The WeChat login");
          if (refused) return refused;
          if (this.#stopped) return refuse(c, 503, "unavailable", "homed is stopping; log in to WeChat once it runs");
          const body = await this.begin();
          if (body === "busy") {
            return refuse(
              c,
              409,
              "conflict",
              "A WeChat login is already waiting for its scan: GET /api/weixin/login shows its QR code",
            );
          }
          return c.json(body, 200);
        });
        app.get("/api/weixin/login", (c) => {
          const refused = ownerOnly(c, "The WeChat login");
          if (refused) return refused;
          const body = this.view();
          if (!body) {
            return refuse(c, 404, "not_found", "No WeChat login was started: POST /api/weixin/login starts one");
          }
          return c.json(body, 200);
        });
        app.post("/api/weixin/recheck", (c) => {
          const refused = ownerOnly(c, "Re-checking the WeChat login");
          if (refused) return refused;
          this.#options.device.recheckLogin();
          return c.json({ rechecking: true }, 200);
        });
      },
    };
  }
}
