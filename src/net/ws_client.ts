/**
 * The WebSocket client of the forward connection: dials, does the opening handshake, then reads frames as a
 * {@link WsPeer}, so a message whose frame header declares more than `maxMessageBytes` is refused — close 1009 —
 * before any of its payload is read or kept (Deno's own WebSocket hands over only whole messages, up to 64 MiB).
 *
 * @module
 */

import { WsPeer, type WsPeerOptions } from "./ws_peer.ts";

/** Options of {@link WsClient}. */
export interface WsClientOptions extends WsPeerOptions {
  /** Sent with the handshake (e.g. `authorization`); names and values may not hold line breaks. */
  headers?: Record<string, string>;
}

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const HEAD_LIMIT = 16 * 1024;
const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/**
 * The `Sec-WebSocket-Accept` a server must answer a key with.
 *
 * @example
 * ```ts
 * await acceptFor("dGhlIHNhbXBsZSBub25jZQ=="); // "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" (RFC 6455, section 1.3)
 * ```
 */
export async function acceptFor(key: string): Promise<string> {
  return base64(new Uint8Array(await crypto.subtle.digest("SHA-1", encoder.encode(`${key}${GUID}`))));
}

/**
 * Whether a `Connection` header lists `Upgrade` (a comma-separated list, any case) — both handshake sides check it.
 *
 * @example
 * ```ts
 * connectionUpgrades("keep-alive, Upgrade"); // true
 * ```
 */
export function connectionUpgrades(header: string): boolean {
  return /(^|,)\s*upgrade\s*(,|$)/i.test(header);
}

/** A WebSocket client connection with a byte limit per message, checked at each frame header. */
export class WsClient extends WsPeer {
  readonly url: string;
  #headers: Record<string, string>;

  /**
   * Dials `url` (`ws://` or `wss://`) at once; listen for `open`, `message`, `error` and `close`.
   *
   * @example
   * ```ts
   * const socket = new WsClient("ws://127.0.0.1:3001/", {
   *   headers: { authorization: `Bearer ${Deno.env.get("ONEBOT_ACCESS_TOKEN") ?? ""}` },
   *   maxMessageBytes: 1_048_576,
   *   onTooBig: (bytes) => `Frame of ${bytes} bytes is over onebot.max_frame_bytes (1048576)`,
   * });
   * socket.addEventListener("message", (event) => console.log(event.data));
   * ```
   */
  constructor(url: string, options: WsClientOptions) {
    const parsed = new URL(url);
    if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:") {
      throw new SyntaxError(`A WebSocket URL starts with ws:// or wss://, got ${JSON.stringify(url)}`);
    }
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(value)) {
        throw new TypeError(`The WebSocket header ${JSON.stringify(name)} is not a valid header name and value`);
      }
    }
    super("client", options);
    this.url = url;
    this.#headers = options.headers ?? {};
    void this.#run(parsed);
  }

  async #run(url: URL): Promise<void> {
    try {
      const hostname = url.hostname.replace(/^\[|\]$/g, "");
      const secure = url.protocol === "wss:";
      const port = Number(url.port) || (secure ? 443 : 80);
      const conn = secure ? await Deno.connectTls({ hostname, port }) : await Deno.connect({ hostname, port });
      if (this.finished) return void conn.close();
      this.adopt(conn);
      const rest = await this.#handshake(conn, url);
      if (this.finished) return;
      this.open(conn, rest);
    } catch {
      if (this.finished) return;
      this.finish(1006, "", false, this.readyState === WsPeer.CONNECTING);
    }
  }

  /** Sends the opening handshake and checks the answer; the bytes read past it. */
  async #handshake(conn: Deno.Conn, url: URL): Promise<Uint8Array> {
    const key = base64(crypto.getRandomValues(new Uint8Array(16)));
    const headers = Object.entries(this.#headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
    this.write(
      encoder.encode(
        `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${headers}\r\n`,
      ),
    );
    const buffer = new Uint8Array(HEAD_LIMIT);
    let filled = 0;
    let end = -1;
    while (end < 0) {
      if (filled === buffer.length) throw new Error(`The WebSocket handshake answer is over ${HEAD_LIMIT} bytes`);
      const read = await conn.read(buffer.subarray(filled));
      if (read === null) throw new Error("The server closed the connection during the WebSocket handshake");
      filled += read;
      end = latin1.decode(buffer.subarray(0, filled)).indexOf("\r\n\r\n");
    }
    const [status, ...lines] = latin1.decode(buffer.subarray(0, end)).split("\r\n");
    const fields = new Map(lines.map((line) => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
    }));
    if (!/^HTTP\/1\.1 101\b/.test(status ?? "")) {
      throw new Error(`The server answered the WebSocket handshake with ${JSON.stringify(status?.slice(0, 80))}`);
    }
    if (
      fields.get("upgrade")?.toLowerCase() !== "websocket" ||
      !connectionUpgrades(fields.get("connection") ?? "") ||
      fields.get("sec-websocket-accept") !== await acceptFor(key) ||
      fields.has("sec-websocket-extensions") || fields.has("sec-websocket-protocol")
    ) {
      throw new Error("The server's WebSocket handshake answer is not valid");
    }
    return buffer.slice(end + 4, filled);
  }
}
