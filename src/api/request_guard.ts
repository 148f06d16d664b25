/**
 * What a browser or a rebinding DNS name can do to a daemon on loopback: send a "simple" cross-site POST (text/plain,
 * a form; no preflight), or reach homed under an attacker's host name and read the answers. The guard refuses both, and
 * oversize requests, before any route runs — and before any token is looked at, so the rules hold with tokens or
 * without. A request that carries a token is no simple request (a page cannot add the header without a preflight):
 * its body rule waits for who the token says it is and for its route's trust ({@link bodyRuleAfterAuth}), so a guest
 * is told a route is the owner's before being told how to send a body.
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { isLoopback } from "../config/listen_addr.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { deferUntilTrusted } from "./require_trust.ts";

/** Longest request target (path and query) accepted, in characters. */
export const MAX_URL_CHARS = 8_192;
/** Most header bytes (names and values) accepted. */
export const MAX_HEADER_BYTES = 16_384;

/** Options of {@link requestGuard}. */
export interface RequestGuardOptions {
  /** The port homed listens on (the real one when `listen_addr` asked for port 0). */
  port: () => number;
  /** `daemon.public_hosts`: names (any port) or `name:port` homed is reached as beyond loopback. */
  publicHosts: readonly string[];
  /** `daemon.allowed_origins`: web origins allowed to call `/api/*`, `/v1/*` and `/mcp` besides homed's own pages. */
  allowedOrigins: readonly string[];
}

function splitHost(host: string): { name: string; port: string | undefined } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  return match ? { name: match[1]!, port: match[2] } : { name: host, port: undefined };
}

const IP_LITERAL = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/;

/**
 * True when `host` (a Host header, lower case) is a name homed may be reached as: a loopback name or an IP address
 * on homed's port (DNS rebinding needs a host *name*), or one of `daemon.public_hosts`.
 *
 * @example
 * ```ts
 * hostAllowed("localhost:8080", 8080, []); // true
 * hostAllowed("attacker.example:8080", 8080, []); // false
 * ```
 */
export function hostAllowed(host: string, port: number, publicHosts: readonly string[]): boolean {
  const { name, port: given } = splitHost(host);
  const portOk = given === undefined || Number(given) === port;
  if (portOk && (name === "localhost" || IP_LITERAL.test(name) || isLoopback(name.replace(/^\[|\]$/g, "")))) {
    return true;
  }
  return publicHosts.some((entry) => {
    const allowed = splitHost(entry.toLowerCase());
    // A listed name is the owner's own (a reverse proxy may add any port); a listed name:port must match exactly.
    return allowed.name === name && (allowed.port === undefined || allowed.port === given);
  });
}

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
}

/** The API, the OpenAI-compatible door and MCP: their every request is a program's, never a page a browser shows. */
const API_PATH = /^\/(?:api|v1|mcp)(?:\/|$)/;
/** The methods a page load or a link uses, which change nothing (a state-changing route never answers them). */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Which cross-site rules a request is under: the Origin rule on any method to the API's paths (MCP: "every incoming
 * connection", its event-stream GET included), and on any path to a method that may change state; the JSON-only body
 * rule to every method that may change state, whatever its path — a route added later is covered without a list.
 * Plain page GETs (the console, `/healthz`, the OneBot handshake, which refuses any Origin itself) are under neither.
 *
 * @example
 * ```ts
 * crossSiteRules("POST", "/v1/chat/completions"); // { origin: true, body: true }
 * crossSiteRules("GET", "/mcp"); // { origin: true, body: false }
 * crossSiteRules("GET", "/console/app.js"); // { origin: false, body: false }
 * ```
 */
export function crossSiteRules(method: string, path: string): { origin: boolean; body: boolean } {
  const changes = !SAFE_METHODS.has(method.toUpperCase());
  return { origin: changes || API_PATH.test(path), body: changes };
}

/**
 * The guard, for every route: 414/431 for oversize requests, 421 for a Host homed is not known as, then the
 * {@link crossSiteRules}: 403 for an `Origin` other than homed's own or one of `daemon.allowed_origins`, 415 for a body
 * that is not JSON (on `/api/*`, `/v1/*` and `/mcp` with an `Authorization` header: after the token and the route's
 * trust, {@link bodyRuleAfterAuth}). Requests without an `Origin` (curl, `homed chat`, the `openai` client) and homed's
 * own pages pass.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 *
 * const app = new Hono();
 * app.use("*", requestGuard({ port: () => 8080, publicHosts: [], allowedOrigins: [] }));
 * ```
 */
export function requestGuard(options: RequestGuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const url = new URL(c.req.url);
    if (url.pathname.length + url.search.length > MAX_URL_CHARS) {
      throw new ApiError(414, "uri_too_long", `The request target is longer than ${MAX_URL_CHARS} characters`);
    }
    let headerBytes = 0;
    for (const [name, value] of c.req.raw.headers) headerBytes += name.length + value.length;
    if (headerBytes > MAX_HEADER_BYTES) {
      throw new ApiError(
        431,
        "headers_too_large",
        `The request headers have ${headerBytes} bytes; allowed: at most ${MAX_HEADER_BYTES}`,
      );
    }
    // Deno builds the URL from the Host header; a request made in-process (tests) has only the URL.
    const host = (c.req.header("host") ?? url.host).toLowerCase();
    if (!hostAllowed(host, options.port(), options.publicHosts)) {
      throw new ApiError(
        421,
        "unknown_host",
        `homed is not served as ${shown(host)}; if that is how you reach it, add it to daemon.public_hosts`,
      );
    }
    // The path the router matches: it decodes escapes ("/%61pi/chat" runs POST /api/chat), URL.pathname does not.
    const rules = crossSiteRules(c.req.method, c.req.path);
    const origin = c.req.header("origin");
    if (rules.origin && origin !== undefined) {
      const own = origin === `http://${host}` || origin === `https://${host}`;
      if (!own && !options.allowedOrigins.includes(origin)) {
        throw new ApiError(
          403,
          "origin_not_allowed",
          `Requests from the web page at ${shown(origin)} may not use homed's API; if you trust it, add it to ` +
            `daemon.allowed_origins`,
        );
      }
    }
    if (rules.body) {
      const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      // A form upload is a "simple" request a web page may send cross-site; one with an Authorization header is
      // not (a page cannot add one without a preflight), so uploads to the chat endpoints carry one.
      const upload = type === "multipart/form-data" && c.req.path.startsWith("/api/chat") &&
        c.req.header("authorization") !== undefined;
      if (type !== "application/json" && !upload) {
        const refusal = new ApiError(
          415,
          "unsupported_media_type",
          `The body must be sent as Content-Type: application/json, got ${shown(type || "no Content-Type")}` +
            (type === "multipart/form-data"
              ? " (multipart/form-data is taken by /api/chat with an Authorization: Bearer header)"
              : ""),
        );
        // A request with a token is no web page's simple request (that header needs a preflight): who it is and
        // what its route needs come first (bodyRuleAfterAuth). Without one, refused here, before any token is read.
        if (!API_PATH.test(c.req.path) || c.req.header("authorization") === undefined) throw refusal;
        pendingBody.set(c, refusal);
      }
    }
    await next();
  };
}

/** Body refusals of requests with a token, waiting for who the token says the caller is. */
const pendingBody = new WeakMap<object, ApiError>();

/**
 * Routes anyone with a token may use (chat, the OpenAI door, MCP): their body refusal comes right after the token.
 * Every other route of `/api/*` checks its trust with `requireTrust` before acting, and the refusal waits for that.
 */
const OPEN_ROUTES = /^\/(?:api\/chat(?:\/|$)|v1\/|mcp(?:\/|$))/;

/**
 * The body rule for requests that carry a token, after the API's auth (`/api/*`, `/v1/*`, `/mcp`): who before what.
 * The owner, and anyone on a route open to every token holder, gets the 415 now; anyone else at the route's trust
 * check, which refuses them with its 403 first when they are below it (`deferUntilTrusted`, `require_trust.ts`).
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { type ApiVariables, bearerAuth } from "./auth.ts";
 *
 * const app = new Hono<{ Variables: ApiVariables }>();
 * app.use("*", requestGuard({ port: () => 8080, publicHosts: [], allowedOrigins: [] }));
 * app.use("/api/*", bearerAuth({ ownerToken: "owner-token-0123456789", people: {} }), bodyRuleAfterAuth());
 * ```
 */
export function bodyRuleAfterAuth(): MiddlewareHandler<{ Variables: ApiVariables }> {
  return async (c, next) => {
    const refusal = pendingBody.get(c);
    if (refusal) {
      pendingBody.delete(c);
      const identity = c.get("identity");
      if (identity.trust === "owner" || OPEN_ROUTES.test(c.req.path)) throw refusal;
      c.set("identity", deferUntilTrusted(identity, refusal));
    }
    await next();
  };
}
