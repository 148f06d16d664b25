/**
 * Pacing a chat channel's sends: at most one message per interval in each conversation (QQ's risk control flags an
 * account that sends faster; `onebot.min_send_interval`). Shared by chat channels.
 *
 * @module
 */

import type { Clock } from "../clock.ts";

/** Waits between sends to one conversation. */
export class Pacer {
  #clock: Pick<Clock, "monotonic" | "sleep">;
  #intervalMs: number;
  #lastSent = new Map<string, number>();

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const pacer = new Pacer(systemClock, 1_500);
   * await pacer.wait("private:10001"); // at once: nothing was sent there yet
   * pacer.sent("private:10001");
   * ```
   */
  constructor(clock: Pick<Clock, "monotonic" | "sleep">, intervalMs: number) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
  }

  /** Waits until the last send to `conversation` is the interval ago. */
  async wait(conversation: string): Promise<void> {
    const last = this.#lastSent.get(conversation);
    if (last === undefined) return;
    const wait = this.#intervalMs - (this.#clock.monotonic() - last);
    if (wait > 0) await this.#clock.sleep(wait);
  }

  /** Notes a send (or a send attempt) to `conversation` now. */
  sent(conversation: string): void {
    this.#lastSent.set(conversation, this.#clock.monotonic());
  }
}
