/**
 * Inputs that are not messages (sensor readings, notices) are recorded here, coalesced by source and type, so a
 * chatty sensor costs no LLM call; the newest ones are shown in the next message's reference block, each with who
 * sent its latest payload and their trust.
 *
 * @module
 */

import type { InputEvent } from "../../io/event.ts";
import type { Trust } from "../../identity/trust.ts";
import type { SaidItem } from "../../prompt/contributor.ts";

/** One coalesced row. */
export interface EventSummary {
  source: string;
  type: string;
  count: number;
  firstTime: number;
  lastTime: number;
  lastPayload: Record<string, unknown>;
  /** Who sent the latest payload, and their trust (a QQ notice's or a plugin's: guest). */
  lastSender: string;
  lastTrust: Trust;
}

/** Coalesced non-message events. */
export class EventLog {
  #rows = new Map<string, EventSummary>();
  readonly #limit: number;

  /**
   * @example
   * ```ts
   * const events = new EventLog(50);
   * events.recent(5); // []: nothing recorded yet
   * ```
   */
  constructor(limit = 50) {
    this.#limit = limit;
  }

  /** Records one event. */
  record(event: InputEvent): void {
    const key = `${event.source}\u0000${event.type}`;
    const row = this.#rows.get(key);
    this.#rows.delete(key);
    this.#rows.set(key, {
      source: event.source,
      type: event.type,
      count: (row?.count ?? 0) + 1,
      firstTime: row?.firstTime ?? event.time,
      lastTime: event.time,
      lastPayload: event.payload,
      lastSender: event.sender,
      lastTrust: event.trust,
    });
    while (this.#rows.size > this.#limit) this.#rows.delete(this.#rows.keys().next().value!);
  }

  /** Forgets rows last seen before `cutoff`. */
  forgetBefore(cutoff: number): void {
    for (const [key, row] of this.#rows) if (row.lastTime < cutoff) this.#rows.delete(key);
  }

  /** The newest `count` rows, newest first. */
  recent(count: number): EventSummary[] {
    return [...this.#rows.values()].reverse().slice(0, count);
  }

  /**
   * The newest `count` rows as reference items, newest first: each with who sent the payload shown.
   *
   * @example
   * ```ts
   * const events = new EventLog();
   * events.record({
   *   id: "e1",
   *   time: Date.UTC(2026, 10, 30, 8),
   *   source: "qq:private:40004000",
   *   sender: "40004000",
   *   trust: "guest",
   *   type: "qq.request.friend",
   *   payload: { comment: "add me" },
   * });
   * events.items();
   * // [{ text: '2026-11-30T08:00:00.000Z qq:private:40004000 qq.request.friend ×1: {"comment":"add me"}',
   * //    sender: "40004000", trust: "guest" }]
   * ```
   */
  items(count = 10): SaidItem[] {
    return this.recent(count).map((row) => ({
      text: `${new Date(row.lastTime).toISOString()} ${row.source} ${row.type} ×${row.count}: ${
        JSON.stringify(row.lastPayload).slice(0, 200)
      }`,
      sender: row.lastSender,
      trust: row.lastTrust,
    }));
  }
}
