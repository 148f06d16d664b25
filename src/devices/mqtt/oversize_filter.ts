/**
 * The bytes the broker sends homed, with every PUBLISH whose payload is over a limit taken out as it streams past —
 * never buffered whole — so MQTT.js (which reads a packet whole before handing it on: a 20 MB message cost homed
 * 60 to 100 MB) never sees it. Everything else goes through untouched, in order, the common case without a copy.
 *
 * It reads only what MQTT 3.1.1 (which homed speaks) puts in front of a payload: the fixed header (packet type and
 * flags, then the "remaining length" of 1 to 4 bytes, §2.2.3) and, for a PUBLISH whose remaining length is over the
 * limit, the topic's length (§3.3.2.1) — the payload is what remains after the topic and, at QoS 1 and 2, the packet
 * identifier. A PUBLISH over the limit is then skipped byte by byte, keeping only its topic and packet identifier
 * (at most 65,537 bytes), and reported once its last byte went by, for the caller to acknowledge and count.
 *
 * A fixed header no MQTT server may send (a remaining length of more than 4 bytes, a PUBLISH with QoS 3) is an
 * {@link MqttProtocolError}: past it the packet boundaries are unknown, and MQTT says to close the connection.
 *
 * @module
 */

/** MQTT control packet type 3. */
const PUBLISH = 3;

/** A PUBLISH taken out of the stream. */
export interface DroppedPublish {
  /** The topic, from UTF-8 (a broken sequence becomes U+FFFD). */
  topic: string;
  /** The payload's length, bytes. */
  payloadBytes: number;
  qos: 0 | 1 | 2;
  retain: boolean;
  /** The packet identifier, which the acknowledgement names (QoS 1 and 2); null at QoS 0. */
  packetId: number | null;
}

/** The broker sent bytes that are not MQTT; the connection cannot go on. */
export class MqttProtocolError extends Error {
  /** MQTT.js passes on only stream errors that have a code. */
  readonly code = "EMQTTPROTO";
}

const decoder = new TextDecoder();

/**
 * A filter for one connection's incoming bytes: hand it each chunk as it arrives, pass on what it returns.
 *
 * @example
 * ```ts
 * const dropped: DroppedPublish[] = [];
 * const filter = new OversizePublishFilter(4, (publish) => dropped.push(publish));
 * // PUBLISH QoS 0 to "a" with 10 payload bytes (over 4), then PINGRESP.
 * const bytes = Uint8Array.of(0x30, 13, 0, 1, 0x61, ...new Uint8Array(10), 0xd0, 0);
 * filter.push(bytes); // [Uint8Array [0xd0, 0]]
 * dropped; // [{ topic: "a", payloadBytes: 10, qos: 0, retain: false, packetId: null }]
 * ```
 */
export class OversizePublishFilter {
  readonly #maxPayloadBytes: number;
  readonly #onDropped: (dropped: DroppedPublish) => void;
  #state: "head" | "pass" | "drop" = "head";
  /** The packet's first bytes, held until it is known whether it goes on: fixed header and topic length, ≤ 7. */
  readonly #head = new Uint8Array(7);
  #headLength = 0;
  /** Where the held bytes start in the current chunk, or -1 when they started in an earlier one. */
  #headStart = -1;
  /** Where the body starts in `#head` once the remaining length is read, else 0. */
  #bodyStart = 0;
  #remaining = 0;
  /** Bytes of the current packet's body still to pass on or skip. */
  #left = 0;
  /** A dropped packet's topic and packet identifier, as they go by. */
  #meta = new Uint8Array(0);
  #metaLength = 0;
  #topicLength = 0;
  #payloadBytes = 0;
  /** A dropped packet's first byte: its QoS and RETAIN flags. */
  #flags = 0;

  /** Throws a RangeError unless `maxPayloadBytes` is a whole number ≥ 0. */
  constructor(maxPayloadBytes: number, onDropped: (dropped: DroppedPublish) => void) {
    if (!Number.isSafeInteger(maxPayloadBytes) || maxPayloadBytes < 0) {
      throw new RangeError(`maxPayloadBytes: ${maxPayloadBytes} is not a whole number of bytes`);
    }
    this.#maxPayloadBytes = maxPayloadBytes;
    this.#onDropped = onDropped;
  }

  /**
   * The bytes of `chunk` (after any held from earlier chunks) to hand on, in order: `[chunk]` itself when it holds
   * nothing to take out and ends on no partly read header. Calls `onDropped` as each dropped packet ends. Throws
   * {@link MqttProtocolError} on a fixed header no server may send.
   */
  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    /** The start of this chunk's bytes to hand on that are not yet in `out`. */
    let from = 0;
    let i = 0;
    while (i < chunk.length) {
      if (this.#state === "pass") {
        const n = Math.min(this.#left, chunk.length - i);
        i += n;
        this.#left -= n;
        if (this.#left === 0) this.#state = "head";
        continue;
      }
      if (this.#state === "drop") {
        const n = Math.min(this.#left, chunk.length - i);
        this.#keepMeta(chunk, i, n);
        i += n;
        this.#left -= n;
        from = i;
        if (this.#left === 0) this.#endDrop();
        continue;
      }
      if (this.#headLength === 0) this.#headStart = i;
      this.#head[this.#headLength++] = chunk[i++]!;
      const verdict = this.#readHead();
      if (verdict === "more") continue;
      if (verdict === "pass") {
        // Held bytes from an earlier chunk go on as a copy; held bytes of this one are part of the run in place.
        if (this.#headStart < 0) {
          out.push(this.#head.slice(0, this.#headLength));
          from = i;
        }
        this.#state = this.#left === 0 ? "head" : "pass";
      } else {
        const end = this.#headStart < 0 ? from : this.#headStart;
        if (end > from) out.push(chunk.subarray(from, end));
        from = i;
        this.#state = "drop";
      }
      this.#headLength = 0;
      this.#bodyStart = 0;
      this.#remaining = 0;
      if (this.#state === "drop" && this.#left === 0) this.#endDrop();
    }
    // A header cut by the chunk's end stays held (copied in #head); the bytes before it go on.
    const end = this.#state === "head" && this.#headLength > 0 && this.#headStart >= 0
      ? this.#headStart
      : this.#state === "head" && this.#headLength > 0
      ? from
      : chunk.length;
    this.#headStart = -1;
    if (end > from) out.push(from === 0 && end === chunk.length ? chunk : chunk.subarray(from, end));
    return out;
  }

  /** Whether the held bytes decide the packet: `more` to read, `pass` it on, or `drop` it. */
  #readHead(): "more" | "pass" | "drop" {
    const n = this.#headLength;
    if (n === 1) return "more";
    if (this.#bodyStart === 0) {
      const byte = this.#head[n - 1]!;
      this.#remaining += (byte & 0x7f) * 128 ** (n - 2);
      if (byte & 0x80) {
        if (n === 5) throw new MqttProtocolError("The broker sent a remaining length of more than 4 bytes");
        return "more";
      }
      this.#bodyStart = n;
      this.#left = this.#remaining;
      const first = this.#head[0]!;
      // The payload is part of the remaining length: at most the limit, it cannot be over it.
      if (first >> 4 !== PUBLISH || this.#remaining <= this.#maxPayloadBytes) return "pass";
      if (((first >> 1) & 3) === 3) throw new MqttProtocolError("The broker sent a PUBLISH with QoS 3");
      // Too short for a topic length: malformed and small, MQTT.js's to refuse.
      return this.#remaining < 2 ? "pass" : "more";
    }
    if (n < this.#bodyStart + 2) return "more";
    const first = this.#head[0]!;
    const qos = (first >> 1) & 3;
    this.#topicLength = (this.#head[this.#bodyStart]! << 8) | this.#head[this.#bodyStart + 1]!;
    this.#left = this.#remaining - 2;
    this.#payloadBytes = this.#remaining - 2 - this.#topicLength - (qos > 0 ? 2 : 0);
    // A long topic, not a long payload (or a malformed packet, no longer than a topic): it goes on.
    if (this.#payloadBytes <= this.#maxPayloadBytes) return "pass";
    this.#meta = new Uint8Array(this.#topicLength + (qos > 0 ? 2 : 0));
    this.#metaLength = 0;
    this.#flags = first;
    return "drop";
  }

  /** Keeps the bytes of `chunk[at, at + n)` that are the dropped packet's topic or packet identifier. */
  #keepMeta(chunk: Uint8Array, at: number, n: number): void {
    const wanted = Math.min(n, this.#meta.length - this.#metaLength);
    if (wanted <= 0) return;
    this.#meta.set(chunk.subarray(at, at + wanted), this.#metaLength);
    this.#metaLength += wanted;
  }

  #endDrop(): void {
    const meta = this.#meta;
    const qos = ((this.#flags >> 1) & 3) as 0 | 1 | 2;
    const topicLength = this.#topicLength;
    this.#meta = new Uint8Array(0);
    this.#state = "head";
    this.#onDropped({
      topic: decoder.decode(meta.subarray(0, topicLength)),
      payloadBytes: this.#payloadBytes,
      qos,
      retain: (this.#flags & 1) === 1,
      packetId: qos > 0 ? (meta[topicLength]! << 8) | meta[topicLength + 1]! : null,
    });
  }
}
