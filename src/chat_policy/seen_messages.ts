/**
 * De-duplication of inbound messages, shared by chat channels. An implementation connected twice (a forward and a
 * reverse socket, or a reconnect that replays its buffer) delivers the same message twice; answering it twice would
 * run two turns and send two replies. A delivery is the same message when its channel-given id *and* its content
 * match one seen within the window: an implementation that restarts its id counter reuses ids for new words, and
 * those are still answered.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import { RecentMap } from "./recent.ts";

/** Options of {@link SeenMessages}. */
export interface SeenMessagesOptions {
  clock: Clock;
  /** How long a delivery counts as a repeat; 10 minutes. */
  windowMs?: number;
  /** How many deliveries are remembered; 1,000 (the oldest forgotten first). */
  limit?: number;
}

/** The recent inbound messages of one channel. */
export class SeenMessages {
  #clock: Clock;
  #windowMs: number;
  /** Keyed by the id and a digest of the content, so a long message costs the memory of a short one. */
  #seen: RecentMap<string, number>;

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const seen = new SeenMessages({ clock: systemClock });
   * seen.firstTime(["10001000", "private:10001", "42"], "hello"); // true
   * seen.firstTime(["10001000", "private:10001", "42"], "hello"); // false: the same delivery again
   * seen.firstTime(["10001000", "private:10001", "42"], "new words"); // true: a reused id
   * ```
   */
  constructor(options: SeenMessagesOptions) {
    this.#clock = options.clock;
    this.#windowMs = options.windowMs ?? 10 * 60_000;
    this.#seen = new RecentMap(options.limit ?? 1_000);
  }

  /**
   * Whether this delivery is new; records it either way. `id` names the message (the account that received it, the
   * conversation, the channel's message id); `content` is what the message says, as the channel delivered it.
   */
  firstTime(id: readonly string[], content: string): boolean {
    const key = `${id.join("\u0000")}\u0000${content.length}:${digest(content)}`;
    const now = this.#clock.now();
    const before = this.#seen.get(key);
    this.#seen.set(key, now);
    return before === undefined || now - before > this.#windowMs;
  }
}

/**
 * Two 32-bit FNV-1a hashes of the UTF-16 units (different offsets and primes), as one string: 64 bits, plus the length
 * beside it, make two different messages under one id alike once in ~10^19 — and a cryptographic hash cost three
 * times as much per message here (the id already has to match; nobody gains by forging a collision: a sender who can
 * make one could simply not send the message).
 */
function digest(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995);
  }
  return `${(a >>> 0).toString(36)}.${(b >>> 0).toString(36)}`;
}
