/**
 * Layer 1, the relevance context (the seed's RelevanceContext): the conversation the prompt carries, bounded by entries and by tokens. When either
 * bound is passed, the exchanges least similar (TF-IDF cosine) to the current input move out — to layer 2 through
 * `onEvict`, never simply dropped — in one *batch*, down to two thirds of both bounds, so the messages sent stay
 * byte-identical from one request to the next between prunings (what a provider's prefix cache needs). Whole exchanges
 * move, so the kept sequence is always valid: no orphan tool result, no tool call without its results.
 *
 * @module
 */

import type { Trust } from "../identity/trust.ts";
import type { ChatMessage } from "../provider/provider.ts";
import { similarities } from "../search/relevance.ts";
import { messageTokens } from "./tokens.ts";

/** Share of the bounds a shrink goes down to. */
export const SHRINK_TO = 2 / 3;

/** Where a context entry came from: the input event whose turn produced it. */
export interface EntryOrigin {
  eventId: string;
  time: number;
  source: string;
  sender: string;
  /**
   * The sender's trust (what layer 2 keeps with the exchange: a guest recalls only its own). Absent in a context saved
   * before it was recorded; such an exchange is kept as the household's.
   */
  trust?: Trust;
  /**
   * The lowest trust whose words the turn's prompt held (its reference block's speakers, the results of its tools),
   * when below `trust`: later turns that carry this exchange carry those words too.
   */
  taint?: Trust;
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
   * const archived: ContextEntry[] = [];
   * const context = new ContextWindow({
   *   maxEntries: 30,
   *   maxTokens: 48_000,
   *   onEvict: (gone) => archived.push(...gone),
   * });
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

  /**
   * The entries `keep` accepts, oldest first, and their estimated tokens: what one reader's prompt carries of the
   * conversation (see `visibleTo` in `identity/visibility.ts`). `keep` sees each entry with its provenance, which all
   * entries of one exchange share, so what is kept is whole exchanges: no orphan tool result.
   *
   * @example
   * ```ts
   * declare const context: ContextWindow;
   *
   * const { messages, tokens } = context.view((entry) => entry.sender === "alice");
   * ```
   */
  view(keep: (entry: ContextEntry) => boolean): { entries: ContextEntry[]; messages: ChatMessage[]; tokens: number } {
    const entries: ContextEntry[] = [];
    let tokens = 0;
    this.#entries.forEach((entry, i) => {
      if (!keep(entry)) return;
      entries.push(entry);
      tokens += this.#tokens[i]!;
    });
    return { entries, messages: entries.map((entry) => entry.message), tokens };
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
   * is passed, moves exchanges out — the least similar to this exchange's user message first (see
   * {@link ContextWindow.shrinkTo}) — down to two thirds of the bounds.
   *
   * @example
   * ```ts
   * const context = new ContextWindow({ maxEntries: 30 });
   * const origin = { eventId: crypto.randomUUID(), time: Date.now(), source: "http", sender: "owner" };
   * context.appendTurn([{ role: "user", content: "hi" }, { role: "assistant", content: "Hello" }], origin);
   * context.size; // 2
   * ```
   */
  appendTurn(messages: readonly ChatMessage[], origin: EntryOrigin): void {
    if (messages[0]?.role !== "user") throw new TypeError("A turn must start with a user message");
    for (const message of messages) this.#push({ ...origin, message });
    if (this.#entries.length > this.maxEntries || this.#total > this.maxTokens) {
      const current = typeof messages[0].content === "string" ? messages[0].content : undefined;
      this.shrinkTo(Math.floor(this.maxEntries * SHRINK_TO), Math.floor(this.maxTokens * SHRINK_TO), current);
    }
  }

  /**
   * Moves exchanges out until at most `entries` entries and `tokens` tokens remain; what leaves goes to `onEvict`, in
   * chronological order. With `current` (the text being talked about now) the exchanges least similar to it go first
   * (TF-IDF cosine; ties: the older first), otherwise the oldest. Whole exchanges move — a user message with every
   * tool call, result and reply that answered it — so the pairing always holds; the newest exchange always stays,
   * even alone over the bounds; the kept ones stay in chronological order. Returns how many entries left.
   *
   * @example
   * ```ts
   * declare const context: ContextWindow;
   *
   * context.shrinkTo(20, 30_000, "is the living room lamp still on?"); // entries moved out, 0 when within the bounds
   * ```
   */
  shrinkTo(entries: number, tokens: number, current?: string): number {
    const exchanges = this.#exchanges();
    if (exchanges.length < 2) return 0;
    const candidates = exchanges.slice(0, -1); // the newest exchange always stays
    const order = candidates.map((_, index) => index);
    if (current !== undefined && current.trim() !== "") {
      const scores = similarities(candidates.map((exchange) => this.#text(exchange)), current);
      order.sort((a, b) => scores[a]! - scores[b]! || a - b);
    }
    const leaving = new Set<number>();
    let count = this.#entries.length;
    let total = this.#total;
    for (const index of order) {
      if (count <= entries && total <= tokens) break;
      const [start, end] = candidates[index]!;
      leaving.add(index);
      count -= end - start;
      for (let i = start; i < end; i++) total -= this.#tokens[i]!;
    }
    if (!leaving.size) return 0;
    const keep: number[] = [];
    const evicted: ContextEntry[] = [];
    exchanges.forEach(([start, end], index) => {
      for (let i = start; i < end; i++) {
        if (leaving.has(index)) evicted.push(this.#entries[i]!);
        else keep.push(i);
      }
    });
    this.#entries = keep.map((i) => this.#entries[i]!);
    this.#tokens = keep.map((i) => this.#tokens[i]!);
    this.#total = total;
    this.#shrinks++;
    this.#onEvict?.(evicted);
    return evicted.length;
  }

  /**
   * Removes the exchanges of `eventIds` (nothing goes to `onEvict`: they are being forgotten); returns how many
   * entries left.
   */
  forget(eventIds: ReadonlySet<string>): number {
    const keep: number[] = [];
    this.#entries.forEach((entry, i) => {
      if (!eventIds.has(entry.eventId)) keep.push(i);
    });
    const removed = this.#entries.length - keep.length;
    if (!removed) return 0;
    this.#entries = keep.map((i) => this.#entries[i]!);
    this.#tokens = keep.map((i) => this.#tokens[i]!);
    this.#total = this.#tokens.reduce((sum, tokens) => sum + tokens, 0);
    return removed;
  }

  /** The exchanges as [start, end) index ranges, oldest first; each starts at a user message. */
  #exchanges(): Array<[number, number]> {
    const ranges: Array<[number, number]> = [];
    this.#entries.forEach((entry, i) => {
      if (entry.message.role === "user" || ranges.length === 0) ranges.push([i, i + 1]);
      else ranges.at(-1)![1] = i + 1;
    });
    return ranges;
  }

  /** What an exchange says, for similarity: its user message and replies (tool results are left out). */
  #text([start, end]: [number, number]): string {
    const parts: string[] = [];
    for (let i = start; i < end; i++) {
      const message = this.#entries[i]!.message;
      if (message.role !== "tool" && message.content) parts.push(message.content);
    }
    return parts.join("\n");
  }
}
