/**
 * One side of a WebSocket connection (RFC 6455) once the handshake is done, read frame by frame, so a message whose
 * frame header declares more than `maxMessageBytes` is refused — close 1009, Message Too Big — before any of its
 * payload is read or kept (Deno's own WebSocket, client and server, hands over only whole messages, up to 64 MiB
 * each). Text and binary messages, fragmentation, ping and pong, the close handshake, optional pings when the peer
 * is quiet; no extensions and no subprotocols (OneBot uses neither). The client side masks what it sends and wants
 * unmasked frames; the server side the other way round.
 *
 * Its events and `readyState` are those of a WebSocket (`open`, `message` with string or ArrayBuffer data, `error`,
 * `close` with code and reason), so the QQ device's connections take it like Deno's.
 *
 * @module
 */

import type { TextSocket } from "./text_socket.ts";
import { type Clock, systemClock } from "../clock.ts";
import type { ByteConn } from "./byte_conn.ts";

/** Which end of the connection this is. */
export type WsRole = "client" | "server";

/** Options of {@link WsPeer}. */
export interface WsPeerOptions {
  /** The largest message taken, in bytes, all its fragments together. */
  maxMessageBytes: number;
  /** A message declared larger than `maxMessageBytes`: returns the reason sent in the close frame (≤ 123 bytes). */
  onTooBig?: (bytes: number) => string;
  /** How long the closing handshake may take before the TCP connection is dropped (default 5 s). */
  closeTimeoutMs?: number;
  /**
   * Quiet this long (no frame from the peer): a ping is sent at half of it, and the connection is dropped when the
   * whole passes without an answer. 0 or absent: never.
   */
  idleTimeoutMs?: number;
  clock?: Pick<Clock, "after">;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/** The protocol was broken, or a message was too big: the connection ends with `code`. */
class Failure extends Error {
  constructor(readonly code: number, reason: string) {
    super(reason);
  }
}

/** A frame with `opcode` and `payload`, masked (what a client sends) or not (what a server sends). */
function frame(opcode: number, payload: Uint8Array, masked: boolean): Uint8Array {
  const length = payload.length;
  const extra = length < 126 ? 0 : length < 65_536 ? 2 : 8;
  const maskBytes = masked ? 4 : 0;
  const bytes = new Uint8Array(2 + extra + maskBytes + length);
  bytes[0] = 0x80 | opcode;
  const maskBit = masked ? 0x80 : 0;
  const view = new DataView(bytes.buffer);
  if (extra === 0) bytes[1] = maskBit | length;
  else if (extra === 2) {
    bytes[1] = maskBit | 126;
    view.setUint16(2, length);
  } else {
    bytes[1] = maskBit | 127;
    view.setBigUint64(2, BigInt(length));
  }
  const at = 2 + extra;
  if (!masked) {
    bytes.set(payload, at);
    return bytes;
  }
  const mask = crypto.getRandomValues(new Uint8Array(4));
  bytes.set(mask, at);
  for (let i = 0; i < length; i++) bytes[at + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return bytes;
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

  constructor(private readonly conn: ByteConn, first: Uint8Array) {
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

/** One end of a WebSocket connection with a byte limit per message, checked at each frame header. */
export class WsPeer implements TextSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readyState: number = WsPeer.CONNECTING;
  #role: WsRole;
  #events = new EventTarget();
  #options: WsPeerOptions;
  #conn: ByteConn | undefined;
  #writes: Promise<void> = Promise.resolve();
  #finished = false;
  #ponging = false;
  #cancelCloseTimer: (() => void) | undefined;
  #cancelIdle: (() => void) | undefined;
  /** This side sent its close frame first. */
  #sentClose = false;

  /**
   * A peer that waits for {@link WsPeer.open}; listen for `open`, `message`, `error` and `close`.
   *
   * @example
   * ```ts
   * import type { ByteConn } from "./byte_conn.ts";
   *
   * declare const conn: ByteConn; // a connection whose handshake is done
   * const peer = new WsPeer("server", { maxMessageBytes: 1_048_576 });
   * peer.addEventListener("message", (event) => peer.send(`echo: ${event.data}`));
   * peer.open(conn, new Uint8Array());
   * ```
   */
  constructor(role: WsRole, options: WsPeerOptions) {
    this.#role = role;
    this.#options = options;
  }

  /** Listens for `message` (data: a string, or an ArrayBuffer for a binary message), `open`, `error` or `close`. */
  readonly addEventListener: TextSocket["addEventListener"] = (
    type: string,
    listener: (event: never) => void,
    options?: AddEventListenerOptions,
  ) => this.#events.addEventListener(type, listener as EventListener, options);

  /** Stops listening for messages. */
  removeEventListener(type: "message", listener: (event: MessageEvent) => void): void {
    this.#events.removeEventListener(type, listener as EventListener);
  }

  /** Sends a text message. Throws while connecting (as WebSocket does); after closing, the message is dropped. */
  send(data: string): void {
    if (this.readyState === WsPeer.CONNECTING) {
      throw new DOMException("The WebSocket is still connecting", "InvalidStateError");
    }
    if (this.readyState !== WsPeer.OPEN) return;
    this.#write(this.#frame(1, encoder.encode(data)));
  }

  /** Starts the closing handshake (or gives up a connection not open yet); `close` follows. */
  close(code = 1000, reason = ""): void {
    if (this.readyState === WsPeer.CLOSING || this.readyState === WsPeer.CLOSED) return;
    this.#sentClose = true;
    if (this.readyState === WsPeer.CONNECTING) {
      this.readyState = WsPeer.CLOSING;
      this.finish(1006, "", false);
      return;
    }
    this.readyState = WsPeer.CLOSING;
    this.#write(this.#frame(8, closePayload(code, reason)));
    this.#cancelCloseTimer = this.#afterCloseTimeout(() => this.finish(code, reason, false));
  }

  /**
   * Takes `conn` — the handshake done, `first` the bytes read past it — and reads frames until the connection ends.
   * `preamble` (the server's handshake answer) is written before anything else.
   */
  open(conn: ByteConn, first: Uint8Array, preamble?: Uint8Array): void {
    this.#conn = conn;
    if (preamble) this.#write(preamble);
    if (this.#finished) return void conn.close();
    this.readyState = WsPeer.OPEN;
    this.#events.dispatchEvent(new Event("open"));
    this.#heard();
    void this.#frames(new Incoming(conn, first)).catch(async (error) => {
      if (this.#finished) return;
      if (error instanceof Failure) return await this.#fail(error);
      this.finish(1006, "", false);
    });
  }

  /** Hands over a connection the caller opened before the handshake, so that {@link WsPeer.finish} closes it. */
  protected adopt(conn: ByteConn): void {
    this.#conn = conn;
  }

  /** Whether the connection has ended. */
  protected get finished(): boolean {
    return this.#finished;
  }

  /** Writes `bytes` after what is queued; a failed write ends nothing by itself (the read side sees the end). */
  protected write(bytes: Uint8Array): void {
    this.#write(bytes);
  }

  #frame(opcode: number, payload: Uint8Array): Uint8Array {
    return frame(opcode, payload, this.#role === "client");
  }

  /** Reads frames until the connection ends; messages are dispatched whole. */
  async #frames(incoming: Incoming): Promise<void> {
    const limit = this.#options.maxMessageBytes;
    const masked = this.#role === "server";
    const parts: Uint8Array[] = [];
    let messageBytes = 0;
    let messageOpcode = 0;
    for (;;) {
      if (!(await incoming.need(2))) break;
      this.#heard();
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
      if (((second & 0x80) !== 0) !== masked) {
        throw new Failure(
          1002,
          masked ? "A frame from a client must be masked" : "A frame from the server must not be masked",
        );
      }
      incoming.skip(2 + extra);
      let mask: Uint8Array | undefined;
      if (masked) {
        if (!(await incoming.need(4))) break;
        mask = incoming.take(4);
      }
      const payloadOf = (bytes: Uint8Array): Uint8Array => {
        if (mask) { for (let i = 0; i < bytes.length; i++) bytes[i]! ^= mask[i & 3]!; }
        return bytes;
      };
      if (opcode >= 8) {
        if (!fin || length > 125) throw new Failure(1002, "A control frame must be whole and at most 125 bytes");
        if (!(await incoming.need(length))) break;
        const payload = payloadOf(incoming.take(length));
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
      parts.push(payloadOf(incoming.take(length)));
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
      if (this.readyState === WsPeer.OPEN) this.#events.dispatchEvent(new MessageEvent("message", { data }));
    }
    this.finish(1006, "", false);
  }

  /** The other side's close frame: answered (unless this side closed first), then the connection ends. */
  async #closing(payload: Uint8Array): Promise<void> {
    const code = payload.length >= 2 ? new DataView(payload.buffer, payload.byteOffset).getUint16(0) : 1005;
    const reason = decoder.decode(payload.subarray(2));
    if (!this.#sentClose) {
      this.readyState = WsPeer.CLOSING;
      this.#write(this.#frame(8, payload.length >= 2 ? payload.subarray(0, 2) : new Uint8Array(0)));
      await this.#settled();
    }
    this.finish(code, reason, true);
  }

  /** Fails the connection: a close frame with the failure's code, then the TCP connection is closed. */
  async #fail(failure: Failure): Promise<void> {
    this.readyState = WsPeer.CLOSING;
    this.#sentClose = true;
    this.#write(this.#frame(8, closePayload(failure.code, failure.message)));
    await this.#settled();
    try {
      await this.#conn?.closeWrite();
    } catch { /* already gone */ }
    this.finish(failure.code, failure.message, false);
  }

  /** A frame came: the quiet-connection timers start again. */
  #heard(): void {
    const idle = this.#options.idleTimeoutMs ?? 0;
    if (idle <= 0 || this.#finished) return;
    this.#cancelIdle?.();
    const clock = this.#options.clock ?? systemClock;
    const cancelPing = clock.after(idle / 2, () => {
      if (this.readyState === WsPeer.OPEN) this.#write(this.#frame(9, new Uint8Array(0)));
    });
    const cancelDrop = clock.after(idle, () => this.finish(1006, "No answer to a ping", false));
    this.#cancelIdle = () => {
      cancelPing();
      cancelDrop();
    };
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

  /** Calls `callback` once `closeTimeoutMs` has passed; returns a function that cancels it. */
  #afterCloseTimeout(callback: () => void): () => void {
    return (this.#options.clock ?? systemClock).after(this.#options.closeTimeoutMs ?? 5_000, callback);
  }

  /** Answers a ping; while an answer is still being written, later pings get none (RFC 6455 5.5.3 allows it). */
  #pong(payload: Uint8Array): void {
    if (this.#ponging) return;
    this.#ponging = true;
    this.#write(this.#frame(10, payload));
    this.#writes = this.#writes.then(() => void (this.#ponging = false));
  }

  #write(bytes: Uint8Array): void {
    const conn = this.#conn;
    if (!conn) return;
    this.#writes = this.#writes.then(async () => {
      for (let offset = 0; offset < bytes.length;) offset += await conn.write(bytes.subarray(offset));
    }).catch(() => {});
  }

  /** Ends the connection once: the socket closed, then `close` (with `error` first when it was not clean). */
  protected finish(code: number, reason: string, wasClean: boolean, error = false): void {
    if (this.#finished) return;
    this.#finished = true;
    this.readyState = WsPeer.CLOSED;
    this.#cancelCloseTimer?.();
    this.#cancelIdle?.();
    try {
      this.#conn?.close();
    } catch { /* already closed */ }
    if (error) this.#events.dispatchEvent(new Event("error"));
    this.#events.dispatchEvent(new CloseEvent("close", { code, reason, wasClean }));
  }
}
