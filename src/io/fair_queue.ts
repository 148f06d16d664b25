/**
 * The input queue: one lane per sender, served fairly. The owner's lane goes first; the other senders take turns,
 * one input each, in the order they began waiting — so a household member's burst of 300 messages (or of 300
 * reminders due in one minute) delays the owner by at most the turn in flight, and every other sender by one input
 * of each busier sender. Within a lane the order is arrival order. A lane holds at most `perSender` inputs; more is
 * refused with {@link LaneFullError} (nothing queued is ever dropped).
 *
 * @module
 */

import { Waiters } from "./waiters.ts";

/** A push refused because the sender already has `limit` inputs waiting. */
export class LaneFullError extends RangeError {
  /** Who sent it. */
  readonly sender: string;
  /** How many may wait per sender. */
  readonly limit: number;

  /**
   * @example
   * ```ts
   * new LaneFullError("alice", 50).message;
   * // "alice already has 50 messages waiting; wait for the butler to answer them"
   * ```
   */
  constructor(sender: string, limit: number) {
    super(`${sender} already has ${limit} messages waiting; wait for the butler to answer them`);
    this.name = "LaneFullError";
    this.sender = sender;
    this.limit = limit;
  }
}

/** Options of {@link FairQueue}. */
export interface FairQueueOptions<T> {
  /** Whose lane an item joins. */
  laneOf(item: T): string;
  /** Whether an item's lane is served before every other (the owner's). */
  first(item: T): boolean;
  /** Most items one lane may hold (default 50). */
  perSender?: number;
}

interface Lane<T> {
  items: Array<{ item: T; seq: number }>;
  head: number;
  /** 0: served before every lane of tier 1 (the owner's identities). */
  tier: 0 | 1;
}

/** A fair, bounded, closable queue that consumers await. */
export class FairQueue<T> {
  readonly #options: FairQueueOptions<T>;
  readonly #perSender: number;
  #lanes = new Map<string, Lane<T>>();
  /** Per tier, the lanes with items in the order they are served (round-robin within a tier). */
  #turns: [string[], string[]] = [[], []];
  #size = 0;
  #seq = 0;
  #waiters = new Waiters<T>();
  #closed = false;

  /**
   * @example
   * ```ts
   * const queue = new FairQueue<{ sender: string; text: string }>({
   *   laneOf: (item) => item.sender,
   *   first: (item) => item.sender === "owner",
   * });
   * queue.push({ sender: "alice", text: "1" });
   * queue.push({ sender: "alice", text: "2" });
   * queue.push({ sender: "owner", text: "lights off" });
   * (await queue.next())?.text; // "lights off"
   * ```
   */
  constructor(options: FairQueueOptions<T>) {
    this.#options = options;
    this.#perSender = options.perSender ?? 50;
  }

  /** Number of items waiting. */
  get size(): number {
    return this.#size;
  }

  /** How many items `lane` holds. */
  waiting(lane: string): number {
    const found = this.#lanes.get(lane);
    return found ? found.items.length - found.head : 0;
  }

  /**
   * Adds an item to its sender's lane; throws {@link LaneFullError} when that lane is full, `RangeError` after
   * {@link FairQueue.close}.
   *
   * @example
   * ```ts
   * const queue = new FairQueue<string>({ laneOf: (item) => item, first: () => false, perSender: 1 });
   * queue.push("alice");
   * queue.push("alice"); // throws LaneFullError
   * ```
   */
  push(item: T): void {
    if (this.#closed) throw new RangeError("The queue is closed");
    if (this.#waiters.hand(item)) return;
    const name = this.#options.laneOf(item);
    if (this.waiting(name) >= this.#perSender) throw new LaneFullError(name, this.#perSender);
    let lane = this.#lanes.get(name);
    if (!lane) {
      this.#lanes.set(name, lane = { items: [], head: 0, tier: this.#options.first(item) ? 0 : 1 });
      this.#turns[lane.tier].push(name);
    }
    lane.items.push({ item, seq: this.#seq++ });
    this.#size++;
  }

  /**
   * The next item — from the first lane if it has any, else from the lane whose turn it is —; `undefined` once the
   * queue is closed and empty, or when `signal` has aborted (even if items are still queued).
   */
  next(signal?: AbortSignal): Promise<T | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    if (this.#size > 0) return Promise.resolve(this.#take());
    if (this.#closed) return Promise.resolve(undefined);
    return this.#waiters.wait(signal);
  }

  #take(): T {
    const turns = this.#turns[0].length ? this.#turns[0] : this.#turns[1];
    const name = turns.shift()!;
    const lane = this.#lanes.get(name)!;
    const { item } = lane.items[lane.head++]!;
    this.#size--;
    if (lane.head === lane.items.length) this.#lanes.delete(name);
    else {
      turns.push(name);
      // A lane that never empties must not keep what it served.
      if (lane.head > 64 && lane.head * 2 > lane.items.length) lane.items = lane.items.slice(lane.head), lane.head = 0;
    }
    return item;
  }

  /**
   * Takes, from the head of `lane`, the items that match `matches` — stopping at the first that does not, and after
   * `max` — out of their turn (a burst the consumer answers together with the item it took).
   *
   * @example
   * ```ts
   * const queue = new FairQueue<string>({ laneOf: () => "alice", first: () => false });
   * for (const line of ["so", "about the lamp", "/cancel"]) queue.push(line);
   * queue.takeFollowing("alice", (line) => !line.startsWith("/"), 10); // ["so", "about the lamp"]
   * ```
   */
  takeFollowing(lane: string, matches: (item: T) => boolean, max: number): T[] {
    const found = this.#lanes.get(lane);
    if (!found) return [];
    const taken: T[] = [];
    while (taken.length < max && found.head < found.items.length && matches(found.items[found.head]!.item)) {
      taken.push(found.items[found.head++]!.item);
      this.#size--;
    }
    if (found.head === found.items.length) {
      this.#lanes.delete(lane);
      const turns = this.#turns[found.tier];
      turns.splice(turns.indexOf(lane), 1);
    }
    return taken;
  }

  /** True after {@link FairQueue.close}. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Removes and returns every queued item in arrival order. */
  drain(): T[] {
    const all = [...this.#lanes.values()].flatMap((lane) => lane.items.slice(lane.head));
    this.#lanes.clear();
    this.#turns = [[], []];
    this.#size = 0;
    return all.sort((a, b) => a.seq - b.seq).map(({ item }) => item);
  }

  /** Refuses further pushes and wakes every waiter with `undefined`; queued items can still be taken. */
  close(): void {
    this.#closed = true;
    this.#waiters.closeAll();
  }
}
