/**
 * Consumers waiting for the next item of a queue, each until it is handed one or its signal aborts — shared by the
 * queues of the IO layer ({@link AsyncQueue}, the fair input queue).
 *
 * @module
 */

/** A line of consumers, served oldest first. */
export class Waiters<T> {
  #waiting: Array<(item: T | undefined) => void> = [];

  /**
   * A promise of the item a later {@link Waiters.hand} gives this consumer, or `undefined` on abort or close.
   *
   * @example
   * ```ts
   * const waiters = new Waiters<string>();
   * const next = waiters.wait();
   * waiters.hand("hello"); // true: someone was waiting
   * await next; // "hello"
   * ```
   */
  wait(signal?: AbortSignal): Promise<T | undefined> {
    return new Promise((resolve) => {
      const waiter = (item: T | undefined) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(item);
      };
      const onAbort = () => {
        this.#waiting = this.#waiting.filter((w) => w !== waiter);
        resolve(undefined);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /** Gives `item` to the oldest waiting consumer; false when nobody waits (the caller keeps it). */
  hand(item: T): boolean {
    const waiter = this.#waiting.shift();
    if (!waiter) return false;
    waiter(item);
    return true;
  }

  /** Wakes every waiting consumer with `undefined`. */
  closeAll(): void {
    for (const waiter of this.#waiting.splice(0)) waiter(undefined);
  }
}
