/**
 * The connection to the broker as MQTT.js sees it: a Node Duplex over a `Deno.Conn` (TCP, or TLS checked against the
 * roots Deno trusts, the host as server name) that homed opens and reads itself, optionally with incoming PUBLISH
 * packets over a payload limit taken out as they stream past (`oversize_filter.ts`) and acknowledged here.
 *
 * Why not `node:net`: Deno's `net.Socket` copies every read into a new buffer, so a 20 MB message that nothing keeps
 * still leaves 20 MB of 64 KiB garbage behind, freed only when V8 next counts its outside memory — +21 MB of resident
 * set for one dropped message. Here every read goes into one reused 64 KiB buffer: the bytes of a dropped message
 * are never copied anywhere, and only the bytes passed on to MQTT.js are copied out (as `net.Socket` would).
 *
 * Why acknowledge: homed subscribes with QoS 1, so a device's QoS 1 message comes as QoS 1, and the broker keeps it
 * "in flight" until homed's PUBACK — mosquitto sends only 20 such at a time (`max_inflight_messages`), so a few
 * unacknowledged drops would stall every later QoS 1 message on the connection. A dropped QoS 1 message gets its
 * PUBACK; a QoS 2 one (homed never asks for QoS 2, but a broker may grant it) its PUBREC, after which MQTT.js answers
 * the broker's PUBREL with PUBCOMP as it does for a message it no longer holds. Acknowledgements go through this
 * stream's own writable side, so they queue behind MQTT.js's writes and never split a packet of its.
 *
 * @module
 */

import { Duplex } from "node:stream";
import { type DroppedPublish, OversizePublishFilter } from "./oversize_filter.ts";
import { concatBytes } from "../../text/concat_bytes.ts";

/** Bytes read at a time, as `net.Socket` reads them. */
const READ_BYTES = 65_536;

/** PUBACK (type 4) and PUBREC (type 5) start so, then length 2 and the packet identifier (MQTT 3.1.1 §3.4, §3.5). */
const ACK_FIRST_BYTE = { 1: 0x40, 2: 0x50 } as const;

/** A bound on the messages taken in. */
export interface InboundLimit {
  /** Messages with a longer payload are dropped unread, and acknowledged. */
  maxPayloadBytes: number;
  /** Told of each, once it has streamed past. */
  onDropped: (dropped: DroppedPublish) => void;
}

/**
 * A Duplex for MQTT.js over the connection `connect` opens; writes wait for it. With `inbound`, PUBLISH packets over
 * its limit never come out of the readable side. Errors carry a `code` (MQTT.js passes on only those): Deno's own
 * (`ECONNREFUSED`, `ECONNRESET`), `EMQTTPROTO` for a fixed header no broker may send, else `EMQTTSOCKET`.
 *
 * @example
 * ```ts
 * const socket = new BrokerSocket(() => Deno.connect({ hostname: "127.0.0.1", port: 1883 }), {
 *   maxPayloadBytes: 262_144,
 *   onDropped: (dropped) => console.log(`dropped ${dropped.payloadBytes} bytes on ${dropped.topic}`),
 * });
 * // new MqttClient(() => socket, options) reads and writes through it.
 * socket.destroy();
 * ```
 */
export class BrokerSocket extends Duplex {
  readonly #connecting: Promise<Deno.Conn | undefined>;
  #conn: Deno.Conn | undefined;
  readonly #filter: OversizePublishFilter | undefined;
  /** Every read lands here; what goes on to MQTT.js is copied out. */
  readonly #buffer = new Uint8Array(READ_BYTES);
  #reading = false;
  /** The reader wants more (`_read` was called since `push` last said the buffer is full). */
  #wanted = false;
  #ended = false;

  constructor(connect: () => Promise<Deno.Conn>, inbound?: InboundLimit) {
    super({ allowHalfOpen: false });
    this.#filter = inbound && new OversizePublishFilter(inbound.maxPayloadBytes, (dropped) => {
      this.#acknowledge(dropped);
      inbound.onDropped(dropped);
    });
    this.#connecting = connect().then((conn) => {
      // Destroyed while connecting (a connect timeout, a stop): nobody will use it.
      if (this.destroyed) {
        closeQuietly(conn);
        return undefined;
      }
      this.#conn = conn;
      return conn;
    }, (error: unknown) => {
      this.destroy(withCode(error));
      return undefined;
    });
  }

  override _read(): void {
    this.#wanted = true;
    this.#pump();
  }

  override _write(chunk: Uint8Array, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#send(chunk).then(() => callback(), (error) => callback(withCode(error)));
  }

  override _writev(chunks: { chunk: Uint8Array }[], callback: (error?: Error | null) => void): void {
    // One packet is several writes (MQTT.js corks around them): they leave in one piece.
    this.#send(concatBytes(chunks.map(({ chunk }) => chunk))).then(
      () => callback(),
      (error) => callback(withCode(error)),
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    // Our side is done (after DISCONNECT); the stream closes once the broker closes its side too.
    this.#connecting.then((conn) => conn?.closeWrite()).then(() => callback(), () => callback());
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#conn) closeQuietly(this.#conn);
    callback(error);
  }

  /** Writes all of `bytes` once connected. */
  async #send(bytes: Uint8Array): Promise<void> {
    const conn = await this.#connecting;
    if (!conn) throw new Error("the connection to the MQTT broker is closed");
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
  }

  /** Starts the read loop unless it runs; it runs while the reader wants more. */
  #pump(): void {
    if (this.#reading || this.#ended || this.destroyed) return;
    this.#reading = true;
    this.#readLoop().catch((error) => this.destroy(withCode(error))).finally(() => {
      this.#reading = false;
      if (this.#wanted) this.#pump();
    });
  }

  async #readLoop(): Promise<void> {
    const conn = await this.#connecting;
    while (conn && this.#wanted && !this.destroyed) {
      let n: number | null;
      try {
        n = await conn.read(this.#buffer);
      } catch (error) {
        if (!this.destroyed) this.destroy(withCode(error));
        return;
      }
      if (this.destroyed) return;
      if (n === null) {
        this.#ended = true;
        this.push(null);
        return;
      }
      let parts: Uint8Array[];
      try {
        parts = this.#filter ? this.#filter.push(this.#buffer.subarray(0, n)) : [this.#buffer.subarray(0, n)];
      } catch (error) {
        this.destroy(error as Error);
        return;
      }
      // MQTT.js reads packet by packet: while it catches up, reading waits (and TCP slows the broker down).
      for (const part of parts) if (!this.push(part.slice())) this.#wanted = false;
    }
  }

  #acknowledge(dropped: DroppedPublish): void {
    if (dropped.qos === 0 || dropped.packetId === null) return;
    if (this.destroyed || this.writableEnded) return;
    const id = dropped.packetId;
    this.write(Uint8Array.of(ACK_FIRST_BYTE[dropped.qos], 0x02, id >> 8, id & 0xff));
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/** `error` as an Error with a `code`, which MQTT.js needs to pass it on (`client.on("error")`). */
function withCode(error: unknown): Error {
  const shown = error instanceof Error ? error : new Error(String(error));
  if (typeof (shown as { code?: unknown }).code !== "string") {
    Object.defineProperty(shown, "code", { value: "EMQTTSOCKET", enumerable: true });
  }
  return shown;
}
