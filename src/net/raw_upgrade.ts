/**
 * The raw connection behind an HTTP upgrade request, for a route that speaks the upgraded protocol itself. The
 * listener ({@link serveHttp}) offers each upgrade request's connection here before the routes see the request; a
 * route that takes it owns the bytes from then on (and its answer is not sent), otherwise the listener writes the
 * route's response and closes the connection. It exists because `Deno.upgradeWebSocket` reads each message whole
 * before handing it over, so a limit could only be checked after the bytes were in memory.
 *
 * @module
 */

import type { Duplex } from "node:stream";
import type { ByteConn } from "./byte_conn.ts";
import { socketConn } from "./socket_conn.ts";

const offered = new WeakMap<Request, { socket: Duplex; head: Uint8Array }>();

/**
 * Offers `socket` (and the bytes read past the request head) for `request`; called by the listener only.
 *
 * @example
 * ```ts
 * import type { Duplex } from "node:stream";
 *
 * declare const socket: Duplex;
 * const request = new Request("http://127.0.0.1/onebot/v11/ws", { headers: { upgrade: "websocket" } });
 * offerConnection(request, socket, new Uint8Array());
 * takeConnection(request) !== undefined; // true
 * ```
 */
export function offerConnection(request: Request, socket: Duplex, head: Uint8Array): void {
  offered.set(request, { socket, head });
}

/**
 * Takes the raw connection of an upgrade request: at most once, and only while the request is being handled.
 * Undefined for a request that is no upgrade, or that came another way (a test calling `app.fetch`).
 *
 * @example
 * ```ts
 * const conn = takeConnection(new Request("http://127.0.0.1/")); // undefined: no upgrade
 * ```
 */
export function takeConnection(request: Request): ByteConn | undefined {
  const entry = offered.get(request);
  if (!entry) return undefined;
  offered.delete(request);
  return socketConn(entry.socket, entry.head);
}

/**
 * Whether the listener still holds the connection of `request` (no route took it); the listener's own check.
 *
 * @example
 * ```ts
 * stillOffered(new Request("http://127.0.0.1/")); // false
 * ```
 */
export function stillOffered(request: Request): boolean {
  return offered.delete(request);
}

/**
 * The address the upgrade request came from (the peer's IP), while its connection is still offered; undefined
 * otherwise. QQ uses it to know the implementation's own address, whose media URLs may be on the LAN.
 *
 * @example
 * ```ts
 * peerAddressOf(new Request("http://127.0.0.1/")); // undefined: not an offered upgrade
 * ```
 */
export function peerAddressOf(request: Request): string | undefined {
  const socket = offered.get(request)?.socket as { remoteAddress?: unknown } | undefined;
  return typeof socket?.remoteAddress === "string" ? socket.remoteAddress.replace(/^::ffff:/, "") : undefined;
}
