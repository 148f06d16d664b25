/**
 * The reverse-WebSocket endpoint implementations dial (`onebot.path`, with or without a trailing slash), on the
 * daemon's one listener but outside `/api/*`: it checks its own token. Everything is decided from the handshake
 * headers before the upgrade. The socket is homed's own (`net/ws_server.ts`): a frame over `onebot.max_frame_bytes`
 * is refused at its header, before its payload is read. Every refused handshake — a missing or wrong token, a bad
 * `X-Self-ID` or role, a web page's Origin, and a OneBot implementation dialling another path (the app's 404 for an
 * upgrade that carries `X-Self-ID` or names onebot) — is counted and logged by the QQ device's
 * `OneBotRefusals` (`refusals.ts`).
 *
 * @module
 */

import type { Hono } from "hono";
import { upgradeWebSocket } from "../../net/ws_server.ts";
import { peerAddressOf } from "../../net/raw_upgrade.ts";
import { frameTooBig, type OneBotConnection, type Role } from "./connection.ts";
import type { QqDevice } from "./qq_device.ts";
import { sameSecret } from "../../identity/secret.ts";
import { type RefusalReason, shownPeerText } from "./refusals.ts";

/** Options of {@link onebotRoutes}. */
export interface ReverseWsOptions {
  /** `onebot.path`. */
  path: string;
  /** `onebot.access_token`; empty: no check at all (a bare `Bearer ` from NapCat passes). */
  accessToken: string;
  /** The QQ device, or where to find it now (a plugin may provide it, or not, after a reload). */
  device: QqDevice | (() => QqDevice | undefined);
  /** Seconds the socket may stay quiet: a ping at half of it, the connection dropped at the whole (default 60). */
  idleTimeoutSeconds?: number;
}

/**
 * The credential an implementation sent: `Authorization: Bearer <t>` (SPEC, NapCat, Lagrange), `Token <t>`
 * (go-cqhttp), or `?access_token=<t>`; empty when none.
 *
 * @example
 * ```ts
 * credentialOf(new Request("http://h/onebot/v11/ws", { headers: { authorization: "Token abc" } })); // "abc"
 * ```
 */
export function credentialOf(request: Request): string {
  const header = request.headers.get("authorization") ?? "";
  const match = /^(bearer|token)\s*(.*)$/i.exec(header.trim());
  if (match && match[2]!.trim() !== "") return match[2]!.trim();
  return new URL(request.url).searchParams.get("access_token") ?? "";
}

const ROLES: Record<string, Role> = { universal: "universal", api: "api", event: "event" };

/** The API's error code for each status the endpoint refuses with; 503: no QQ device is there to take the call. */
const CODES: Record<number, string> = { 400: "bad_request", 401: "unauthorized", 403: "forbidden", 503: "unavailable" };

function refuse(status: number, message: string): Response {
  return Response.json({ error: { code: CODES[status] ?? "bad_request", message } }, { status });
}

/** The path of a request, without its query (which may hold `access_token`). */
const pathOf = (request: Request): string => new URL(request.url).pathname;

/**
 * Whether an upgrade request no route took looks like a OneBot implementation's: it sends `X-Self-ID` or
 * `X-Client-Role` (every implementation does), or its path names onebot or ends as `onebot.path` does.
 */
function looksLikeOneBot(request: Request, path: string): boolean {
  if ((request.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") return false;
  if (request.headers.has("x-self-id") || request.headers.has("x-client-role")) return true;
  const asked = pathOf(request).toLowerCase();
  const last = path.toLowerCase().split("/").filter(Boolean).at(-1);
  return asked.includes("onebot") || (last !== undefined && asked.split("/").includes(last));
}

/**
 * Mounts the endpoint.
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "../../api/app.ts";
 * import type { QqDevice } from "./qq_device.ts";
 *
 * declare const options: ApiOptions;
 * declare const qq: QqDevice;
 * const accessToken = Deno.env.get("ONEBOT_ACCESS_TOKEN") ?? "";
 * const app = createApi({ ...options, routes: [onebotRoutes({ path: "/onebot/v11/ws", accessToken, device: qq })] });
 * ```
 */
export function onebotRoutes<Variables extends object>(
  options: ReverseWsOptions,
): (app: Hono<{ Variables: Variables }>) => void {
  const current = typeof options.device === "function" ? options.device : () => options.device as QqDevice;
  const mounted = options.path.replace(/\/+$/, "") || "/";
  const handle = (request: Request): Response => {
    const device = current();
    if (!device) {
      return refuse(503, 'QQ is not on: set onebot.enabled: true, or add a plugin with native: "onebot" (plugins/qq)');
    }
    const rawSelfId = request.headers.get("x-self-id")?.trim() ?? "";
    const refused = (reason: RefusalReason, status: number, message: string): Response => {
      device.refusals.refuse(reason, {
        peer: peerAddressOf(request),
        path: pathOf(request),
        selfId: /^\d{1,20}$/.test(rawSelfId) ? rawSelfId : undefined,
        message,
      });
      return refuse(status, message);
    };
    // Browsers always send Origin on a WebSocket handshake and let any page open one cross-site; QQ implementations
    // never send it. Without this, a web page could pose as an implementation on a token-less loopback setup.
    const origin = request.headers.get("origin");
    if (origin !== null) {
      return refused(
        "web_origin",
        403,
        `OneBot connections come from QQ implementations, not web pages (Origin ${
          JSON.stringify(origin.slice(0, 80))
        })`,
      );
    }
    if (options.accessToken !== "") {
      const given = credentialOf(request);
      if (given === "") {
        return refused(
          "missing_token",
          401,
          "The OneBot connection needs onebot.access_token (Authorization: Bearer/Token, or ?access_token=)",
        );
      }
      if (!sameSecret(given, options.accessToken)) {
        return refused("wrong_token", 403, "The OneBot access token is not onebot.access_token");
      }
    }
    const selfId = rawSelfId;
    if (!/^\d{1,20}$/.test(selfId)) {
      return refused(
        "bad_self_id",
        400,
        `X-Self-ID must be the bot's QQ number, got ${JSON.stringify(selfId.slice(0, 40))}`,
      );
    }
    const rawRole = (request.headers.get("x-client-role") ?? "universal").trim().toLowerCase();
    const role = ROLES[rawRole];
    if (!role) {
      return refused(
        "bad_role",
        400,
        `X-Client-Role must be Universal, API or Event, got ${JSON.stringify(rawRole.slice(0, 40))}`,
      );
    }
    if ((request.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") {
      return refused(
        "not_websocket",
        400,
        "This is homed's OneBot V11 reverse WebSocket: connect with a WebSocket client",
      );
    }
    // Frames are read only after attach() returns, so the connection words the refusal; the fallback says the same.
    const attached: { connection?: OneBotConnection } = {};
    const peer = peerAddressOf(request); // read before the connection is taken
    const limit = device.maxFrameBytes;
    let upgraded: ReturnType<typeof upgradeWebSocket>;
    try {
      upgraded = upgradeWebSocket(request, {
        maxMessageBytes: limit,
        idleTimeoutMs: (options.idleTimeoutSeconds ?? 60) * 1_000,
        onTooBig: (bytes) => attached.connection?.tooBig(bytes) ?? frameTooBig(bytes, limit),
      });
    } catch (error) {
      return refused("not_websocket", 400, `Not a WebSocket handshake homed can take: ${(error as Error).message}`);
    }
    attached.connection = device.attach(upgraded.socket, selfId, role, peer);
    return upgraded.response;
  };
  return (app) => {
    for (const route of new Set([mounted, `${mounted}/`])) app.get(route, (c) => handle(c.req.raw));
    // Mounted after every route, so it sees only what none took: an implementation dialling another path gets the
    // app's 404 as before, and the refusal is counted and logged.
    app.use("*", async (c, next) => {
      const request = c.req.raw;
      const peer = peerAddressOf(request);
      await next();
      if (c.res.status !== 404 || !looksLikeOneBot(request, mounted)) return;
      const rawSelfId = request.headers.get("x-self-id")?.trim() ?? "";
      current()?.refusals.refuse("wrong_path", {
        peer,
        path: pathOf(request),
        selfId: /^\d{1,20}$/.test(rawSelfId) ? rawSelfId : undefined,
        message: `${shownPeerText(pathOf(request))} is not onebot.path (${JSON.stringify(mounted)})`,
      });
    });
  };
}
