/**
 * The WebSocket client (RFC 6455) of the forward connection. It reads frames itself, so a message whose frame header
 * declares more than `maxMessageBytes` is refused — close 1009, Message Too Big — before any of its payload is read or
 * kept: Deno's own WebSocket hands over only whole messages (up to 64 MiB each). Text and binary messages,
 * fragmentation, ping and pong, the close handshake; no extensions and no subprotocols (OneBot uses neither).
 *
 * Its events and `readyState` are those of a WebSocket (`open`, `message` with string or ArrayBuffer data, `error`,
 * `close` with code and reason), so the QQ device's connections take it like Deno's.
 *
 * @module
 */

import { type Clock, systemClock } from "../clock.ts";

/** Options of {@link WsClient}. */
export interface WsClientOptions {
  /** Sent with the handshake (e.g. `authorization`); names and values may not hold line breaks. */
  headers?: Record<string, string>;
  /** The largest message taken, in bytes, all its fragments together. */
  maxMessageBytes: number;
  /** A message declared larger than `maxMessageBytes`: returns the reason sent in the close frame (≤ 123 bytes). */
  onTooBig?: (bytes: number) => string;
  /** How long the closing handshake may take before the TCP connection is dropped (default 5 s). */
  closeTimeoutMs?: number;
  clock?: Pick<Clock, "after">;
}

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const HEAD_LIMIT = 16 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true });
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

/** The protocol was broken, or a message was too big: the connection ends with `code`. */
class Failure extends Error {
  constructor(readonly code: number, reason: string) {
    super(reason);
  }
}

/** A client frame (always masked) with `opcode` and `payload`. */
function clientFrame(opcode: number, payload: Uint8Array): Uint8Array {
  const length = payload.length;
  const extra = length < 126 ? 0 : length < 65_536 ? 2 : 8;
  const frame = new Uint8Array(2 + extra + 4 + length);
  frame[0] = 0x80 | opcode;
  const view = new DataView(frame.buffer);
  if (extra === 0) frame[1] = 0x80 | length;
  else if (extra === 2) {
    frame[1] = 0x80 | 126;
    view.setUint16(2, length);
  } else {
    frame[1] = 0x80 | 127;
    view.setBigUint64(2, BigInt(length));
  }
  const maskAt = 2 + extra;
  const mask = crypto.getRandomValues(new Uint8Array(4));
  frame.set(mask, maskAt);
  for (let i = 0; i < length; i++) frame[maskAt + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return frame;
}

/** A close frame's payload: the code, then the reason cut to fit in 123 bytes. */
function closePayload(code: number, reason: string): Uint8Array {
  let text = encoder.encode(reason);
  if (text.length > 123) text = encoder.encode(decoder.decode(text.subarray(0, 120)).replace(/\uFFFD*$/, ""));
  const payload = new Uint8Array(2 + text.length);
  new DataView(payload.buffer).setUint16(0, code);
  payload.set(text, 2);
  return payload;
}

/** Bytes read from the connection and not yet taken. */
class Incoming {
  static readonly SIZE = 65_536;
  #buffer: Uint8Array;
  #start = 0;
  #end: number;

  constructor(private readonly conn: Deno.Conn, first: Uint8Array) {
    this.#buffer = new Uint8Array(Math.max(Incoming.SIZE, first.length));
    this.#buffer.set(first, 0);
    this.#end = first.length;
  }

  /** Reads until `count` bytes are available; false at the end of the stream. */
  async need(count: number): Promise<boolean> {
    while (this.#end - this.#start < count) {
      this.#room(count);
      const read = await this.conn.read(this.#buffer.subarray(this.#end));
      if (read === null) return false;
      this.#end += read;
    }
    return true;
  }

  peek(offset: number): number {
    return this.#buffer[this.#start + offset]!;
  }

  view(offset: number, length: number): DataView {
    return new DataView(this.#buffer.buffer, this.#buffer.byteOffset + this.#start + offset, length);
  }

  /** The next `count` bytes (a copy), taken. */
  take(count: number): Uint8Array {
    const bytes = this.#buffer.slice(this.#start, this.#start + count);
    this.skip(count);
    return bytes;
  }

  skip(count: number): void {
    this.#start += count;
    if (this.#start === this.#end && this.#buffer.length > Incoming.SIZE) {
      // A large message was taken: the buffer goes back to its usual size.
      this.#buffer = new Uint8Array(Incoming.SIZE);
      this.#start = this.#end = 0;
    }
  }

  /** Room to hold `count` bytes from the start and to read more: what waits moves to the front or a larger buffer. */
  #room(count: number): void {
    if (this.#start + count <= this.#buffer.length && this.#end < this.#buffer.length) return;
    const waiting = this.#end - this.#start;
    if (count <= this.#buffer.length && waiting < this.#buffer.length) {
      this.#buffer.copyWithin(0, this.#start, this.#end);
    } else {
      const larger = new Uint8Array(Math.max(count, 2 * this.#buffer.length));
      larger.set(this.#buffer.subarray(this.#start, this.#end), 0);
      this.#buffer = larger;
    }
    this.#start = 0;
    this.#end = waiting;
  }
}

/** A WebSocket client connection with a byte limit per message, checked at each frame header. */
export class WsClient {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readonly url: string;
  readyState: number = WsClient.CONNECTING;
  #events = new EventTarget();
  #options: WsClientOptions;
  #conn: Deno.Conn | undefined;
  #writes: Promise<void> = Promise.resolve();
  #finished = false;
  #ponging = false;
  #cancelCloseTimer: (() => void) | undefined;
  /** homed sent its close frame first. */
  #sentClose = false;

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
    this.url = url;
    this.#options = options;
    void this.#run(parsed);
  }

  /** Listens for `message` (data: a string, or an ArrayBuffer for a binary message), `open`, `error` or `close`. */
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  addEventListener(
    type: "open" | "close" | "error",
    listener: (event: Event) => void,
    options?: AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: (event: never) => void, options?: AddEventListenerOptions): void {
    this.#events.addEventListener(type, listener as EventListener, options);
  }

  /** Stops listening for messages. */
  removeEventListener(type: "message", listener: (event: MessageEvent) => void): void {
    this.#events.removeEventListener(type, listener as EventListener);
  }

  /**
   * Sends a text message. Throws while connecting (as WebSocket does); after closing, the message is dropped.
   */
  send(data: string): void {
    if (this.readyState === WsClient.CONNECTING) {
      throw new DOMException("The WebSocket is still connecting", "InvalidStateError");
    }
    if (this.readyState !== WsClient.OPEN) return;
    this.#write(clientFrame(1, encoder.encode(data)));
  }

  /** Starts the closing handshake (or gives up the dial); `close` follows. */
  close(code = 1000, reason = ""): void {
    if (this.readyState === WsClient.CLOSING || this.readyState === WsClient.CLOSED) return;
    if (this.readyState === WsClient.CONNECTING) {
      this.readyState = WsClient.CLOSING;
      this.#sentClose = true;
      this.#finish(1006, "", false);
      return;
    }
    this.readyState = WsClient.CLOSING;
    this.#sentClose = true;
    this.#write(clientFrame(8, closePayload(code, reason)));
    this.#armCloseTimer(code, reason);
  }

  async #run(url: URL): Promise<void> {
    try {
      const hostname = url.hostname.replace(/^\[|\]$/g, "");
      const secure = url.protocol === "wss:";
      const port = Number(url.port) || (secure ? 443 : 80);
      const conn = secure ? await Deno.connectTls({ hostname, port }) : await Deno.connect({ hostname, port });
      this.#conn = conn;
      if (this.#finished) return void conn.close();
      const incoming = await this.#handshake(conn, url);
      if (this.#finished) return;
      this.readyState = WsClient.OPEN;
      this.#events.dispatchEvent(new Event("open"));
      await this.#frames(incoming);
    } catch (error) {
      if (this.#finished) return;
      if (error instanceof Failure) return await this.#fail(error);
      if (this.readyState === WsClient.CONNECTING) this.#events.dispatchEvent(new Event("error"));
      this.#finish(1006, "", false);
    }
  }

  async #handshake(conn: Deno.Conn, url: URL): Promise<Incoming> {
    const key = base64(crypto.getRandomValues(new Uint8Array(16)));
    const extra = Object.entries(this.#options.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`);
    const headers = extra.join("");
    this.#write(
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
      !/(^|,)\s*upgrade\s*(,|$)/i.test(fields.get("connection") ?? "") ||
      fields.get("sec-websocket-accept") !== await acceptFor(key) ||
      fields.has("sec-websocket-extensions") || fields.has("sec-websocket-protocol")
    ) {
      throw new Error("The server's WebSocket handshake answer is not valid");
    }
    return new Incoming(conn, buffer.slice(end + 4, filled));
  }

  /** Reads frames until the connection ends; messages are dispatched whole. */
  async #frames(incoming: Incoming): Promise<void> {
    const limit = this.#options.maxMessageBytes;
    const parts: Uint8Array[] = [];
    let messageBytes = 0;
    let messageOpcode = 0;
    for (;;) {
      if (!(await incoming.need(2))) break;
      const first = incoming.peek(0);
      const second = incoming.peek(1);
      const fin = (first & 0x80) !== 0;
      const opcode = first & 0x0f;
      let length = second & 0x7f;
      const extra = length === 126 ? 2 : length === 127 ? 8 : 0;
      if (!(await incoming.need(2 + extra))) break;
      if (extra === 2) length = incoming.view(2, 2).getUint16(0);
      if (extra === 8) {
        const declared = incoming.view(2, 8).getBigUint64(0);
        length = declared > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(declared);
      }
      if ((first & 0x70) !== 0) throw new Failure(1002, "Reserved bits are set, but no extension was agreed");
      if ((second & 0x80) !== 0) throw new Failure(1002, "A frame from the server must not be masked");
      incoming.skip(2 + extra);
      if (opcode >= 8) {
        if (!fin || length > 125) throw new Failure(1002, "A control frame must be whole and at most 125 bytes");
        if (!(await incoming.need(length))) break;
        const payload = incoming.take(length);
        if (opcode === 8) return this.#closing(payload);
        if (opcode === 9) this.#pong(payload);
        else if (opcode !== 10) throw new Failure(1002, `Unknown control opcode ${opcode}`);
        continue;
      }
      if (opcode === 0 && messageOpcode === 0) throw new Failure(1002, "A continuation frame without a message");
      if (opcode !== 0 && messageOpcode !== 0) throw new Failure(1002, "A new message inside a fragmented one");
      if (opcode !== 0 && opcode !== 1 && opcode !== 2) throw new Failure(1002, `Unknown data opcode ${opcode}`);
      // The limit is checked here, at the header: nothing of a message over it is read or kept.
      if (messageBytes + length > limit) {
        const bytes = messageBytes + length;
        throw new Failure(1009, this.#options.onTooBig?.(bytes) ?? `Message of ${bytes} bytes is over ${limit}`);
      }
      if (opcode !== 0) messageOpcode = opcode;
      if (!(await incoming.need(length))) break;
      parts.push(incoming.take(length));
      messageBytes += length;
      if (!fin) continue;
      const whole = parts.length === 1 ? parts[0]! : new Uint8Array(messageBytes);
      if (parts.length > 1) {
        let at = 0;
        for (const part of parts) {
          whole.set(part, at);
          at += part.length;
        }
      }
      const kind = messageOpcode;
      parts.length = 0;
      messageBytes = 0;
      messageOpcode = 0;
      let data: string | ArrayBuffer;
      if (kind === 1) {
        try {
          data = strictDecoder.decode(whole);
        } catch {
          throw new Failure(1007, "A text message is not valid UTF-8");
        }
      } else data = whole.buffer.slice(whole.byteOffset, whole.byteOffset + whole.byteLength) as ArrayBuffer;
      if (this.readyState === WsClient.OPEN) this.#events.dispatchEvent(new MessageEvent("message", { data }));
    }
    this.#finish(1006, "", false);
  }

  /** The server's close frame: answered (unless homed closed first), then the connection ends. */
  async #closing(payload: Uint8Array): Promise<void> {
    const code = payload.length >= 2 ? new DataView(payload.buffer, payload.byteOffset).getUint16(0) : 1005;
    const reason = decoder.decode(payload.subarray(2));
    if (!this.#sentClose) {
      this.readyState = WsClient.CLOSING;
      this.#write(clientFrame(8, payload.length >= 2 ? payload.subarray(0, 2) : new Uint8Array(0)));
      await this.#settled();
    }
    this.#finish(code, reason, true);
  }

  /** Fails the connection: a close frame with the failure's code, then the TCP connection is closed. */
  async #fail(failure: Failure): Promise<void> {
    this.readyState = WsClient.CLOSING;
    this.#sentClose = true;
    this.#write(clientFrame(8, closePayload(failure.code, failure.message)));
    await this.#settled();
    try {
      await this.#conn?.closeWrite();
    } catch { /* already gone */ }
    this.#finish(failure.code, failure.message, false);
  }

  /** Waits for the writes queued so far, at most `closeTimeoutMs`. */
  async #settled(): Promise<void> {
    let cancel: (() => void) | undefined;
    const timeout = new Promise<void>((resolve) => {
      cancel = this.#afterCloseTimeout(resolve);
    });
    await Promise.race([this.#writes, timeout]);
    cancel?.();
  }

  #armCloseTimer(code: number, reason: string): void {
    this.#cancelCloseTimer = this.#afterCloseTimeout(() => this.#finish(code, reason, false));
  }

  /** Calls `callback` once `closeTimeoutMs` has passed; returns a function that cancels it. */
  #afterCloseTimeout(callback: () => void): () => void {
    return (this.#options.clock ?? systemClock).after(this.#options.closeTimeoutMs ?? 5_000, callback);
  }

  /** Answers a ping; while an answer is still being written, later pings get none (RFC 6455 5.5.3 allows it). */
  #pong(payload: Uint8Array): void {
    if (this.#ponging) return;
    this.#ponging = true;
    this.#write(clientFrame(10, payload));
    this.#writes = this.#writes.then(() => void (this.#ponging = false));
  }

  #write(bytes: Uint8Array): void {
    const conn = this.#conn;
    if (!conn) return;
    this.#writes = this.#writes.then(async () => {
      for (let offset = 0; offset < bytes.length;) offset += await conn.write(bytes.subarray(offset));
    }).catch(() => {});
  }

  /** Ends the connection once: the socket closed, then `close`. */
  #finish(code: number, reason: string, wasClean: boolean): void {
    if (this.#finished) return;
    this.#finished = true;
    this.readyState = WsClient.CLOSED;
    this.#cancelCloseTimer?.();
    try {
      this.#conn?.close();
    } catch { /* already closed */ }
    this.#events.dispatchEvent(new CloseEvent("close", { code, reason, wasClean }));
  }
}
