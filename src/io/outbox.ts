/**
 * One device's ordered outbound queue. Outputs to a device go out one at a time, in order; each `send()` gets a
 * deadline, after which it is abandoned with a clear error and the next output goes. A device whose `send()` never
 * settles therefore delays only its own later outputs (by at most the deadline each), never another channel.
 *
 * @module
 */

import { type Clock, deadline } from "../clock.ts";
import type { OutputEvent } from "./event.ts";

/** Why an output could not go out. Callers catch it to tell the LLM or the user. */
export class ChannelError extends Error {
  /**
   * @example
   * ```ts
   * throw new ChannelError('Channel "tv" does not exist; channels: http');
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "ChannelError";
  }
}

/** Counters of one outbox, for `/api/status`. */
export interface OutboxStatus {
  queued: number;
  sent: number;
  failed: number;
  timed_out: number;
}

interface Item {
  event: OutputEvent;
  resolve(): void;
  reject(error: Error): void;
}

/** The outbound queue of one device. */
export class Outbox {
  readonly #deliver: (event: OutputEvent) => Promise<void>;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  #items: Item[] = [];
  #busy = false;
  #idleWaiters: Array<() => void> = [];
  #counts = { sent: 0, failed: 0, timedOut: 0 };

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import type { Device } from "./device.ts";
   *
   * declare const qq: Device;
   * const outbox = new Outbox((event) => qq.send(event), systemClock, 30_000);
   * await outbox.push({ target: "qq:private:1", type: "message", payload: { text: "hi" } });
   * ```
   */
  constructor(deliver: (event: OutputEvent) => Promise<void>, clock: Clock, timeoutMs: number) {
    this.#deliver = deliver;
    this.#clock = clock;
    this.#timeoutMs = timeoutMs;
  }

  /** Outputs waiting or in flight. */
  get pending(): number {
    return this.#items.length + (this.#busy ? 1 : 0);
  }

  /**
   * Queues an output; settles when it was delivered, or rejects with {@link ChannelError} when the device failed or
   * did not finish within the deadline. Delivery of the first queued item starts synchronously.
   */
  push(event: OutputEvent): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#items.push({ event, resolve, reject });
      if (!this.#busy) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#busy = true;
    for (let item = this.#items.shift(); item; item = this.#items.shift()) {
      try {
        await this.#sendOne(item.event);
        this.#counts.sent++;
        item.resolve();
      } catch (error) {
        item.reject(error as Error);
      }
    }
    this.#busy = false;
    for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  async #sendOne(event: OutputEvent): Promise<void> {
    const limit = deadline(this.#clock, this.#timeoutMs);
    try {
      // Started synchronously, so an output reaches an idle device before its caller moves on; a device that throws
      // synchronously is as failed as one that rejects.
      let sending: Promise<void>;
      try {
        sending = Promise.resolve(this.#deliver(event));
      } catch (error) {
        sending = Promise.reject(error);
      }
      const raced = await limit.race(sending.catch((error) => {
        this.#counts.failed++;
        throw new ChannelError(
          `Channel ${JSON.stringify(event.target)} failed to deliver: ${(error as Error)?.message ?? String(error)}`,
        );
      }));
      if (raced.late) {
        this.#counts.timedOut++;
        const seconds = Math.round(this.#timeoutMs / 100) / 10;
        throw new ChannelError(
          `Channel ${JSON.stringify(event.target)} did not take the output within ${seconds}s (io.send_timeout); ` +
            `it was given up`,
        );
      }
    } finally {
      limit.cancel();
    }
  }

  /** Resolves when nothing is queued or in flight (every item delivered, failed or timed out). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Rejects every queued item (not the one in flight) with `reason`. */
  abandon(reason: string): void {
    for (const item of this.#items.splice(0)) {
      item.reject(new ChannelError(`Channel ${JSON.stringify(item.event.target)}: ${reason}`));
    }
  }

  /** Counters. */
  status(): OutboxStatus {
    return {
      queued: this.pending,
      sent: this.#counts.sent,
      failed: this.#counts.failed,
      timed_out: this.#counts.timedOut,
    };
  }
}
