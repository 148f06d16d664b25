/**
 * A Server-Sent Events response body that bounds, in bytes, what waits for its client. The server takes bytes from
 * it only as fast as the client's socket does; what it has not taken yet waits here, up to `maxWaitingBytes`. A
 * message that would go over is refused, and the owner of the stream lets the client go with {@link SseStream.abort}:
 * what waits is dropped and the body fails, which makes the server close the connection — it cannot keep a response
 * that failed half-way alive. (Deno cannot close a socket whose send buffer is full: it does so as soon as the client
 * reads again or goes away; nothing more is ever sent to it.)
 *
 * @module
 */

import { type Clock, systemClock } from "../clock.ts";

/** One SSE message: its `event` name (none: "message") and its data (several lines become several `data:` lines). */
export interface SseMessage {
  event?: string;
  data: string;
}

const encoder = new TextEncoder();

/**
 * The wire form of a message.
 *
 * @example
 * ```ts
 * new TextDecoder().decode(encodeSse({ event: "ready", data: "{}" })); // "event: ready\ndata: {}\n\n"
 * ```
 */
export function encodeSse(message: SseMessage): Uint8Array {
  const name = message.event ? `event: ${message.event.replace(/[\r\n]/g, "")}\n` : "";
  const lines = message.data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join("");
  return encoder.encode(`${name}${lines}\n`);
}

/** Options of {@link SseStream}. */
export interface SseStreamOptions {
  /** Most bytes that may wait for the client (a single message larger than this is taken when nothing waits). */
  maxWaitingBytes: number;
  /** A comment this often keeps proxies and idle timeouts from closing a quiet stream (default 15 s; 0: never). */
  keepAliveMs?: number;
  clock?: Pick<Clock, "after">;
  /** The client went away, or the server dropped the response. */
  onCancel?: () => void;
}

/** What {@link SseStream.send} did with a message. */
export type SseSendResult = "sent" | "over" | "closed";

/** An SSE body with a byte bound on what waits for its client. */
export class SseStream {
  /** The response body. */
  readonly body: ReadableStream<Uint8Array>;
  #options: SseStreamOptions;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #queue: Uint8Array[] = [];
  #head = 0;
  #waiting = 0;
  #peak = 0;
  /** The server asked for bytes and none waited: the next message goes straight to it. */
  #wanted = false;
  #ending = false;
  #closed = false;
  #cancelKeepAlive: (() => void) | undefined;

  /**
   * @example
   * ```ts
   * const stream = new SseStream({ maxWaitingBytes: 1_048_576 });
   * stream.send({ event: "ready", data: "{}" }); // "sent"
   * const response = new Response(stream.body, { headers: { "content-type": "text/event-stream" } });
   * stream.end();
   * await response.text(); // "event: ready\ndata: {}\n\n"
   * ```
   */
  constructor(options: SseStreamOptions) {
    this.#options = options;
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => void (this.#controller = controller),
      pull: (controller) => {
        const next = this.#take();
        if (next) controller.enqueue(next);
        else if (this.#ending) this.#finish(() => controller.close());
        else this.#wanted = true;
      },
      cancel: () => {
        this.#finish(() => {});
        this.#options.onCancel?.();
      },
    }, { highWaterMark: 0 });
    this.#keepAlive();
  }

  /** Bytes waiting for the client now. */
  get waitingBytes(): number {
    return this.#waiting;
  }

  /** The most bytes that ever waited for the client. */
  get peakWaitingBytes(): number {
    return this.#peak;
  }

  /** False once ended, aborted or cancelled. */
  get open(): boolean {
    return !this.#closed && !this.#ending;
  }

  /**
   * Queues a message: `"sent"`, or `"over"` (nothing queued) when it would take what waits over `maxWaitingBytes`,
   * or `"closed"`.
   *
   * @example
   * ```ts
   * const stream = new SseStream({ maxWaitingBytes: 16, keepAliveMs: 0 });
   * stream.send({ data: "hello" }); // "sent": 13 bytes wait
   * stream.send({ data: "world" }); // "over": 26 would
   * ```
   */
  send(message: SseMessage): SseSendResult {
    return this.write(encodeSse(message));
  }

  /** {@link SseStream.send} for a message already encoded with {@link encodeSse}. */
  write(bytes: Uint8Array): SseSendResult {
    if (this.#closed || this.#ending) return "closed";
    if (this.#wanted) {
      this.#wanted = false;
      this.#controller.enqueue(bytes);
      return "sent";
    }
    if (this.#waiting > 0 && this.#waiting + bytes.length > this.#options.maxWaitingBytes) return "over";
    this.#queue.push(bytes);
    this.#waiting += bytes.length;
    this.#peak = Math.max(this.#peak, this.#waiting);
    return "sent";
  }

  /** Ends the stream once what waits has gone out (homed is stopping). */
  end(): void {
    if (this.#closed || this.#ending) return;
    this.#ending = true;
    this.#cancelKeepAlive?.();
    if (this.#wanted && this.#waiting === 0) this.#finish(() => this.#controller.close());
  }

  /**
   * Lets the client go: drops what waits and fails the body with `reason`, so the server closes the connection
   * instead of keeping it for another request.
   */
  abort(reason: string): void {
    if (this.#closed) return;
    this.#finish(() => this.#controller.error(reason));
  }

  #take(): Uint8Array | undefined {
    if (this.#head === this.#queue.length) return undefined;
    const next = this.#queue[this.#head++]!;
    this.#waiting -= next.length;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return next;
  }

  #keepAlive(): void {
    const every = this.#options.keepAliveMs ?? 15_000;
    if (every <= 0 || this.#closed || this.#ending) return;
    const clock = this.#options.clock ?? systemClock;
    this.#cancelKeepAlive = clock.after(every, () => {
      if (this.#waiting === 0) this.write(encoder.encode(": keep-alive\n\n"));
      this.#keepAlive();
    });
  }

  #finish(close: () => void): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelKeepAlive?.();
    this.#queue = [];
    this.#head = 0;
    this.#waiting = 0;
    this.#wanted = false;
    try {
      close();
    } catch { /* the body was already cancelled */ }
  }
}
