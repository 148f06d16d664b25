/**
 * A byte stream both ways, as the WebSocket code reads and writes it: a `Deno.Conn` is one (the forward client's
 * TCP or TLS connection), and so is the raw socket of an upgraded request ({@link socketConn}).
 *
 * @module
 */

/** What the WebSocket frames need of a connection. */
export interface ByteConn {
  /** Reads into `into`; the count read, or null at the end of the stream. */
  read(into: Uint8Array): Promise<number | null>;
  /** Writes some of `bytes`; the count written. */
  write(bytes: Uint8Array): Promise<number>;
  /** Ends the sending half; what was written before still goes out. */
  closeWrite(): Promise<void>;
  /** Drops the connection at once. */
  close(): void;
}
