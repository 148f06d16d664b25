/**
 * Inputs that are not messages (sensor readings, notices) are recorded here, coalesced by source and type, so a
 * chatty sensor costs no LLM call; the newest ones are shown in the system prompt.
 *
 * @module
 */

import type { InputEvent } from "../../io/event.ts";

/** One coalesced row. */
export interface EventSummary {
  source: string;
  type: string;
  count: number;
  firstTime: number;
  lastTime: number;
  lastPayload: Record<string, unknown>;
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

  /** Rendered for the system prompt; empty when there is nothing. */
  render(count = 10): string {
    return this.recent(count).map((row) =>
      `- ${new Date(row.lastTime).toISOString()} ${row.source} ${row.type} ×${row.count}: ${
        JSON.stringify(row.lastPayload).slice(0, 200)
      }`
    ).join("\n");
  }
}
