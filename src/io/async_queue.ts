/**
 * An unbounded first-in, first-out queue with an async `next()`: nothing pushed is ever dropped.
 *
 * @module
 */

import { Waiters } from "./waiters.ts";

/** A FIFO queue that consumers await. */
export class AsyncQueue<T> {
  #items: T[] = [];
  #head = 0;
  #waiters = new Waiters<T>();
  #closed = false;

  /** Number of items waiting. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /**
   * Adds an item; throws `RangeError` after {@link AsyncQueue.close}.
   *
   * @example
   * ```ts
   * const queue = new AsyncQueue<number>();
   * queue.push(1);
   * await queue.next(); // 1
   * ```
   */
  push(item: T): void {
    if (this.#closed) throw new RangeError("The queue is closed");
    if (!this.#waiters.hand(item)) this.#items.push(item);
  }

  /**
   * The next item; `undefined` once the queue is closed and empty, or when `signal` has aborted — even if items are
   * still queued (a consumer told to stop takes nothing more; {@link AsyncQueue.drain} hands the rest over).
   */
  next(signal?: AbortSignal): Promise<T | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    if (this.size > 0) {
      const item = this.#items[this.#head++]!;
      if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
        this.#items = this.#items.slice(this.#head);
        this.#head = 0;
      }
      return Promise.resolve(item);
    }
    if (this.#closed || signal?.aborted) return Promise.resolve(undefined);
    return this.#waiters.wait(signal);
  }

  /** True after {@link AsyncQueue.close}. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Removes and returns every queued item, oldest first. */
  drain(): T[] {
    const items = this.#items.slice(this.#head);
    this.#items = [];
    this.#head = 0;
    return items;
  }

  /** Refuses further pushes and wakes every waiter with `undefined`; queued items can still be taken. */
  close(): void {
    this.#closed = true;
    this.#waiters.closeAll();
  }
}
