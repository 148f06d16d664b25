/**
 * Layer-1 context: the recent conversation, as messages ready for the LLM, bounded by entries and by tokens.
 *
 * For now it keeps the most recent entries (the memory work replaces this with relevance ranking). When either bound
 * is passed it drops a *batch* of the oldest entries at once — down to two thirds of both bounds — so the messages
 * sent stay byte-identical from one request to the next between shrinks, which is what a provider's prefix cache
 * needs. Cuts fall only before a user message, so the kept sequence is always valid: no orphan tool result, no tool
 * call without its results.
 *
 * @module
 */

import type { ChatMessage } from "../provider/provider.ts";
import { messageTokens } from "./tokens.ts";

/** Share of the bounds a shrink goes down to. */
export const SHRINK_TO = 2 / 3;

/** The recent conversation. */
export class ContextWindow {
  #entries: ChatMessage[] = [];
  #tokens: number[] = [];
  #total = 0;
  readonly maxEntries: number;
  readonly maxTokens: number;
  #shrinks = 0;

  /**
   * @example
   * ```ts
   * const context = new ContextWindow(30, 48_000);
   * ```
   */
  constructor(maxEntries: number, maxTokens = Number.POSITIVE_INFINITY) {
    if (!Number.isInteger(maxEntries) || maxEntries < 2) {
      throw new RangeError(`maxEntries must be a whole number of at least 2, got ${maxEntries}`);
    }
    if (!(maxTokens > 0)) throw new RangeError(`maxTokens must be positive, got ${maxTokens}`);
    this.maxEntries = maxEntries;
    this.maxTokens = maxTokens;
  }

  /** The entries, oldest first (a copy). */
  entries(): ChatMessage[] {
    return [...this.#entries];
  }

  /** Number of entries. */
  get size(): number {
    return this.#entries.length;
  }

  /** Estimated tokens of all entries. */
  get tokens(): number {
    return this.#total;
  }

  /** How many times a batch was dropped. */
  get shrinks(): number {
    return this.#shrinks;
  }

  /**
   * Appends one finished exchange (a user message and everything answering it); if a bound is passed, drops the
   * oldest exchanges down to two thirds of the bounds.
   *
   * @example
   * ```ts
   * context.appendTurn([{ role: "user", content: "hi" }, { role: "assistant", content: "Hello" }]);
   * ```
   */
  appendTurn(messages: readonly ChatMessage[]): void {
    if (messages[0]?.role !== "user") throw new TypeError("A turn must start with a user message");
    for (const message of messages) {
      const tokens = messageTokens(message);
      this.#entries.push(message);
      this.#tokens.push(tokens);
      this.#total += tokens;
    }
    if (this.#entries.length > this.maxEntries || this.#total > this.maxTokens) {
      this.shrinkTo(Math.floor(this.maxEntries * SHRINK_TO), Math.floor(this.maxTokens * SHRINK_TO));
    }
  }

  /**
   * Drops the oldest exchanges until at most `entries` entries and `tokens` tokens remain, cutting only before a
   * user message. The newest exchange is always kept, even alone over the bounds; returns how many entries left.
   *
   * @example
   * ```ts
   * context.shrinkTo(20, 30_000);
   * ```
   */
  shrinkTo(entries: number, tokens: number): number {
    let start = 0;
    let total = this.#total;
    const lastUser = this.#entries.findLastIndex((entry) => entry.role === "user");
    const over = () => this.#entries.length - start > entries || total > tokens;
    while (start < lastUser && over()) {
      // Drop one whole exchange: up to the next user message.
      do {
        total -= this.#tokens[start]!;
        start++;
      } while (start < lastUser && this.#entries[start]!.role !== "user");
    }
    if (start === 0) return 0;
    this.#entries = this.#entries.slice(start);
    this.#tokens = this.#tokens.slice(start);
    this.#total = total;
    this.#shrinks++;
    return start;
  }
}
