/**
 * A minimal WebSocket client over a raw TCP socket with TCP_NODELAY, as go-cqhttp (Go) and NapCat (Node `ws`) dial.
 * Deno's own WebSocket client does not disable Nagle's algorithm, which adds ≈40 ms (delayed ACK) whenever it sends
 * two small frames back to back — an artefact of the simulator, not of homed, so the latency benchmark avoids it.
 *
 * Text frames only (masked, as clients must); answers pings; enough for the benchmark, not a general client.
 *
 * @module
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A connected client. */
export class RawWsClient {
  #conn: Deno.TcpConn;
  #buffer = new Uint8Array(0);
  #frames: string[] = [];
  #waiting: Array<() => void> = [];

  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
  }

  /**
   * Opens `ws://127.0.0.1:<port><path>` with the given handshake headers.
   *
   * @example
   * ```ts
   * const client = await RawWsClient.connect(8080, "/onebot/v11/ws", { "X-Self-ID": "10001000" });
   * ```
   */
  static async connect(port: number, path: string, headers: Record<string, string>): Promise<RawWsClient> {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.setNoDelay(true);
    const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      `Sec-WebSocket-Key: ${key}`,
      "Sec-WebSocket-Version: 13",
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    await conn.write(encoder.encode(`${lines.join("\r\n")}\r\n\r\n`));
    const client = new RawWsClient(conn);
    const head = await client.#readHead();
    if (!head.startsWith("HTTP/1.1 101")) throw new Error(`upgrade refused: ${head.split("\r\n")[0]}`);
    void client.#pump();
    return client;
  }

  async #readHead(): Promise<string> {
    const chunk = new Uint8Array(4096);
    for (;;) {
      const text = decoder.decode(this.#buffer);
      const end = text.indexOf("\r\n\r\n");
      if (end !== -1) {
        this.#buffer = this.#buffer.subarray(encoder.encode(text.slice(0, end + 4)).length);
        return text.slice(0, end);
      }
      const n = await this.#conn.read(chunk);
      if (n === null) throw new Error("closed during the handshake");
      this.#append(chunk.subarray(0, n));
    }
  }

  #append(bytes: Uint8Array): void {
    const merged = new Uint8Array(this.#buffer.length + bytes.length);
    merged.set(this.#buffer);
    merged.set(bytes, this.#buffer.length);
    this.#buffer = merged;
  }

  async #pump(): Promise<void> {
    const chunk = new Uint8Array(65_536);
    try {
      for (;;) {
        while (this.#parseFrame());
        const n = await this.#conn.read(chunk);
        if (n === null) return;
        this.#append(chunk.subarray(0, n));
      }
    } catch { /* closed */ }
  }

  /** Takes one whole frame off the buffer; false when none is complete. */
  #parseFrame(): boolean {
    const b = this.#buffer;
    if (b.length < 2) return false;
    const opcode = b[0]! & 0x0f;
    let length = b[1]! & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (b.length < 4) return false;
      length = (b[2]! << 8) | b[3]!;
      offset = 4;
    } else if (length === 127) {
      if (b.length < 10) return false;
      length = Number(new DataView(b.buffer, b.byteOffset + 2, 8).getBigUint64(0));
      offset = 10;
    }
    if (b.length < offset + length) return false;
    const payload = b.slice(offset, offset + length);
    this.#buffer = b.subarray(offset + length);
    if (opcode === 0x1) {
      this.#frames.push(decoder.decode(payload));
      for (const wake of this.#waiting.splice(0)) wake();
    } else if (opcode === 0x9) {
      void this.#write(0xa, payload); // pong
    }
    return true;
  }

  async #write(opcode: number, payload: Uint8Array): Promise<void> {
    const length = payload.length;
    const header = length < 126
      ? [0x80 | opcode, 0x80 | length]
      : length < 65_536
      ? [0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff]
      : [
        0x80 | opcode,
        0x80 | 127,
        0,
        0,
        0,
        0,
        (length >>> 24) & 0xff,
        (length >>> 16) & 0xff,
        (length >>> 8) & 0xff,
        length & 0xff,
      ];
    const mask = crypto.getRandomValues(new Uint8Array(4));
    const frame = new Uint8Array(header.length + 4 + length);
    frame.set(header);
    frame.set(mask, header.length);
    for (let i = 0; i < length; i++) frame[header.length + 4 + i] = payload[i]! ^ mask[i % 4]!;
    let written = 0;
    while (written < frame.length) written += await this.#conn.write(frame.subarray(written));
  }

  /** Sends a text frame. */
  send(text: string): Promise<void> {
    return this.#write(0x1, encoder.encode(text));
  }

  /** The next text frame received. */
  async next(): Promise<string> {
    while (this.#frames.length === 0) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    return this.#frames.shift()!;
  }

  close(): void {
    try {
      this.#conn.close();
    } catch { /* already closed */ }
  }
}
