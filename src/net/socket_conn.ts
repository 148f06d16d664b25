/**
 * A Node socket (the raw connection of an upgraded request) as a {@link ByteConn}, read only when asked: the socket
 * is paused between reads, so a peer that sends faster than homed reads fills the kernel's buffers and waits —
 * nothing piles up in homed.
 *
 * @module
 */

import type { Duplex } from "node:stream";
import type { ByteConn } from "./byte_conn.ts";

/**
 * Wraps `socket`; `head` holds bytes already read past the request head, returned first.
 *
 * @example
 * ```ts
 * import type { Duplex } from "node:stream";
 *
 * declare const socket: Duplex;
 * const conn = socketConn(socket, new Uint8Array());
 * const buffer = new Uint8Array(4096);
 * const read = await conn.read(buffer); // null once the peer ended
 * ```
 */
export function socketConn(socket: Duplex, head: Uint8Array): ByteConn {
  let pending: Uint8Array | undefined = head.length > 0 ? head : undefined;
  let ended = false;
  let wake: (() => void) | undefined;
  const woken = () => {
    const resume = wake;
    wake = undefined;
    resume?.();
  };
  socket.pause();
  socket.on("data", (chunk: Uint8Array) => {
    // One chunk waits at a time: the socket stays paused until it is read.
    socket.pause();
    const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (!pending) pending = bytes;
    else {
      const joined = new Uint8Array(pending.length + bytes.length);
      joined.set(pending, 0);
      joined.set(bytes, pending.length);
      pending = joined;
    }
    woken();
  });
  const end = () => {
    ended = true;
    woken();
  };
  socket.on("end", end);
  socket.on("close", end);
  socket.on("error", end);
  return {
    async read(into: Uint8Array): Promise<number | null> {
      while (!pending) {
        if (ended) return null;
        const arrived = new Promise<void>((resolve) => (wake = resolve));
        socket.resume();
        await arrived;
      }
      const count = Math.min(into.length, pending.length);
      into.set(pending.subarray(0, count), 0);
      pending = count === pending.length ? undefined : pending.subarray(count);
      return count;
    },
    write(bytes: Uint8Array): Promise<number> {
      return new Promise((resolve, reject) => {
        if (socket.destroyed || !socket.writable) return reject(new Error("The connection is closed"));
        socket.write(bytes, (error) => (error ? reject(error) : resolve(bytes.length)));
      });
    },
    closeWrite(): Promise<void> {
      if (socket.destroyed) return Promise.resolve();
      return new Promise((resolve) => {
        socket.once("close", () => resolve());
        socket.end(() => resolve());
      });
    },
    close(): void {
      socket.destroy();
    },
  };
}
