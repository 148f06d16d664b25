/**
 * What homed needs of a WebSocket that carries text frames: the standard `WebSocket` has this shape, and so has
 * homed's own {@link https://datatracker.ietf.org/doc/html/rfc6455 | RFC 6455} peer (`ws_peer.ts`). Code written
 * against it takes either, so a test can hand in a plain `WebSocket`.
 *
 * @module
 */

/**
 * A WebSocket, as far as a text protocol (OneBot) uses it.
 *
 * @example
 * ```ts
 * const socket: TextSocket = new WebSocket("ws://127.0.0.1:3001/");
 * socket.addEventListener("message", (event) => console.log(event.data));
 * ```
 */
export interface TextSocket {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  addEventListener(
    type: "open" | "close" | "error",
    listener: (event: Event) => void,
    options?: AddEventListenerOptions,
  ): void;
  removeEventListener(type: "message", listener: (event: MessageEvent) => void): void;
}
