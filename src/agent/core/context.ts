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

/** Where a context entry came from: the input event whose turn produced it. */
export interface EntryOrigin {
  eventId: string;
  time: number;
  source: string;
  sender: string;
}

/** One context entry: a message and its provenance. */
export interface ContextEntry extends EntryOrigin {
  message: ChatMessage;
}

/** Options of {@link ContextWindow}. */
export interface ContextOptions {
  /** `memory.context_size`. */
  maxEntries: number;
  /** `memory.context_tokens`; unbounded when absent. */
  maxTokens?: number;
  /** Entries to start with (a restored context), oldest first; they must start at a user message. */
  entries?: readonly ContextEntry[];
  /** Receives what a shrink removes, oldest first (layer 2 keeps it: nothing said is simply dropped). */
  onEvict?: (entries: ContextEntry[]) => void;
}

/** The recent conversation. */
export class ContextWindow {
  #entries: ContextEntry[] = [];
  #tokens: number[] = [];
  #total = 0;
  readonly maxEntries: number;
  readonly maxTokens: number;
  #shrinks = 0;
  #onEvict: ((entries: ContextEntry[]) => void) | undefined;

  /**
   * @example
   * ```ts
   * const context = new ContextWindow({ maxEntries: 30, maxTokens: 48_000, onEvict: (gone) => archive(gone) });
   * ```
   */
  constructor(options: ContextOptions) {
    const { maxEntries, maxTokens = Number.POSITIVE_INFINITY } = options;
    if (!Number.isInteger(maxEntries) || maxEntries < 2) {
      throw new RangeError(`maxEntries must be a whole number of at least 2, got ${maxEntries}`);
    }
    if (!(maxTokens > 0)) throw new RangeError(`maxTokens must be positive, got ${maxTokens}`);
    this.maxEntries = maxEntries;
    this.maxTokens = maxTokens;
    this.#onEvict = options.onEvict;
    const initial = options.entries ?? [];
    if (initial.length && initial[0]!.message.role !== "user") {
      throw new TypeError("A restored context must start with a user message");
    }
    for (const entry of initial) this.#push(entry);
  }

  #push(entry: ContextEntry): void {
    const tokens = messageTokens(entry.message);
    this.#entries.push(entry);
    this.#tokens.push(tokens);
    this.#total += tokens;
  }

  /** The messages, oldest first (a copy), as the prompt carries them. */
  entries(): ChatMessage[] {
    return this.#entries.map((entry) => entry.message);
  }

  /** The entries with their provenance, oldest first (a copy). */
  records(): ContextEntry[] {
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
   * Appends one finished exchange (a user message and everything answering it) from the input `origin`; if a bound
   * is passed, moves the oldest exchanges out, down to two thirds of the bounds.
   *
   * @example
   * ```ts
   * context.appendTurn([{ role: "user", content: "hi" }, { role: "assistant", content: "Hello" }], origin);
   * ```
   */
  appendTurn(messages: readonly ChatMessage[], origin: EntryOrigin): void {
    if (messages[0]?.role !== "user") throw new TypeError("A turn must start with a user message");
    for (const message of messages) this.#push({ ...origin, message });
    if (this.#entries.length > this.maxEntries || this.#total > this.maxTokens) {
      this.shrinkTo(Math.floor(this.maxEntries * SHRINK_TO), Math.floor(this.maxTokens * SHRINK_TO));
    }
  }

  /**
   * Moves the oldest exchanges out until at most `entries` entries and `tokens` tokens remain, cutting only before a
   * user message; what leaves goes to `onEvict`. The newest exchange always stays, even alone over the bounds;
   * returns how many entries left.
   *
   * @example
   * ```ts
   * context.shrinkTo(20, 30_000);
   * ```
   */
  shrinkTo(entries: number, tokens: number): number {
    let start = 0;
    let total = this.#total;
    const lastUser = this.#entries.findLastIndex((entry) => entry.message.role === "user");
    const over = () => this.#entries.length - start > entries || total > tokens;
    while (start < lastUser && over()) {
      // Drop one whole exchange: up to the next user message.
      do {
        total -= this.#tokens[start]!;
        start++;
      } while (start < lastUser && this.#entries[start]!.message.role !== "user");
    }
    if (start === 0) return 0;
    const evicted = this.#entries.slice(0, start);
    this.#entries = this.#entries.slice(start);
    this.#tokens = this.#tokens.slice(start);
    this.#total = total;
    this.#shrinks++;
    this.#onEvict?.(evicted);
    return start;
  }
}
