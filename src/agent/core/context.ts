/**
 * Layer-1 context: the recent conversation, as messages ready for the LLM.
 *
 * For now it keeps the most recent entries (the memory work replaces this with relevance ranking). Trimming only
 * ever cuts before a user message, so the kept sequence is always valid: no orphan tool result, no tool call
 * without its results.
 *
 * @module
 */

import type { ChatMessage } from "../provider/provider.ts";

/** The recent conversation. */
export class ContextWindow {
  #entries: ChatMessage[] = [];
  readonly maxEntries: number;

  /**
   * @example
   * ```ts
   * const context = new ContextWindow(30);
   * ```
   */
  constructor(maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 2) {
      throw new RangeError(`maxEntries must be a whole number of at least 2, got ${maxEntries}`);
    }
    this.maxEntries = maxEntries;
  }

  /** The entries, oldest first (a copy). */
  entries(): ChatMessage[] {
    return [...this.#entries];
  }

  /** Number of entries. */
  get size(): number {
    return this.#entries.length;
  }

  /**
   * Appends one finished exchange (a user message and everything answering it) and trims.
   *
   * @example
   * ```ts
   * context.appendTurn([{ role: "user", content: "hi" }, { role: "assistant", content: "Hello" }]);
   * ```
   */
  appendTurn(messages: readonly ChatMessage[]): void {
    if (messages[0]?.role !== "user") throw new TypeError("A turn must start with a user message");
    this.#entries.push(...messages);
    this.#trim();
  }

  /**
   * Drops the oldest entries down to `maxEntries`, then onward to the next user message. If the last turn alone
   * is longer than `maxEntries`, that whole turn is kept: cutting inside it would break the tool-call pairing.
   */
  #trim(): void {
    if (this.#entries.length <= this.maxEntries) return;
    let start = this.#entries.length - this.maxEntries;
    while (start < this.#entries.length && this.#entries[start]!.role !== "user") start++;
    if (start === this.#entries.length) {
      start = this.#entries.findLastIndex((entry) => entry.role === "user");
    }
    this.#entries = this.#entries.slice(start);
  }
}
