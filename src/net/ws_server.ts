/**
 * The server side of a WebSocket: like `Deno.upgradeWebSocket`, but on the raw connection {@link serveHttp} offers,
 * read frame by frame by a {@link WsPeer} — so a message over `maxMessageBytes` is refused at its frame header,
 * before its payload is read.
 *
 * @module
 */

import { takeConnection } from "./raw_upgrade.ts";
import { acceptFor, connectionUpgrades } from "./ws_client.ts";
import { WsPeer, type WsPeerOptions } from "./ws_peer.ts";

const encoder = new TextEncoder();

/**
 * Why `request` is no WebSocket opening handshake this server takes, or undefined when it is one.
 *
 * @example
 * ```ts
 * handshakeProblem(new Request("http://127.0.0.1/ws")); // "Upgrade: websocket is missing"
 * ```
 */
export function handshakeProblem(request: Request): string | undefined {
  const headers = request.headers;
  if (request.method !== "GET") return `A WebSocket handshake is a GET, got ${request.method}`;
  if ((headers.get("upgrade") ?? "").toLowerCase() !== "websocket") return "Upgrade: websocket is missing";
  if (!connectionUpgrades(headers.get("connection") ?? "")) return "Connection: Upgrade is missing";
  if ((headers.get("sec-websocket-version") ?? "").trim() !== "13") {
    return `Sec-WebSocket-Version must be 13, got ${
      JSON.stringify((headers.get("sec-websocket-version") ?? "").slice(0, 20))
    }`;
  }
  const key = (headers.get("sec-websocket-key") ?? "").trim();
  if (!/^[A-Za-z0-9+/]{22}==$/.test(key)) {
    return `Sec-WebSocket-Key must be 16 bytes in base64, got ${JSON.stringify(key.slice(0, 40))}`;
  }
  return undefined;
}

/**
 * Upgrades `request` to a WebSocket: the socket (open once the handshake answer is written) and a response for the
 * route to return, which the listener does not send — the socket's handshake answer is the response. Throws a
 * TypeError naming the problem for a request that is no valid handshake ({@link handshakeProblem}) or that did not
 * come through {@link serveHttp}; the connection is then left to the listener, which sends the route's answer.
 *
 * @example
 * ```ts
 * declare const request: Request; // from serveHttp
 * const { socket, response } = upgradeWebSocket(request, { maxMessageBytes: 1_048_576, idleTimeoutMs: 60_000 });
 * socket.addEventListener("message", (event) => socket.send(`echo: ${event.data}`));
 * ```
 */
export function upgradeWebSocket(request: Request, options: WsPeerOptions): { socket: WsPeer; response: Response } {
  const problem = handshakeProblem(request);
  if (problem) throw new TypeError(problem);
  const conn = takeConnection(request);
  if (!conn) throw new TypeError("This request has no connection to upgrade: it did not come through serveHttp");
  const socket = new WsPeer("server", options);
  const key = request.headers.get("sec-websocket-key")!.trim();
  void acceptFor(key).then((accept) => {
    const answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      `Sec-WebSocket-Accept: ${accept}\r\n\r\n`;
    socket.open(conn, new Uint8Array(), encoder.encode(answer));
  });
  // Never sent (the connection was taken); a 101 cannot be made as a fetch Response.
  return { socket, response: new Response(null, { status: 204 }) };
}
