/**
 * One device's ordered outbound queue — the only one it has. Outputs to a device go out one at a time, in order;
 * each `send()` gets a deadline, after which it is abandoned with a clear error and the next output goes. A device
 * whose `send()` never settles therefore delays only its own later outputs (by at most the deadline each), never
 * another channel. A device that cannot send for now (no connection) holds its outputs here: they wait without a
 * deadline, a bounded number of them, and go when the device is ready again; an output whose send was interrupted
 * half-way goes back to the head. An output is reported delivered only once its device took it.
 *
 * @module
 */

import { type Clock, deadline } from "../clock.ts";
import { type Device, SendInterrupted } from "./device.ts";
import type { OutputEvent } from "./event.ts";

/** Why an output could not go out. Callers catch it to tell the LLM or the user. */
export class ChannelError extends Error {
  /**
   * @example
   * ```ts
   * throw new ChannelError('Channel "tv" does not exist; channels: http');
   * ```
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
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

/** What an outbox needs of its device. */
export type OutboxDevice = Pick<Device, "send" | "canSend" | "hold">;

/** The outbound queue of one device. */
export class Outbox {
  readonly #device: OutboxDevice;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  #items: Item[] = [];
  #busy = false;
  #idleWaiters: Array<() => void> = [];
  #counts = { sent: 0, failed: 0, timedOut: 0 };
  /** Set while the head output waits for the device to be ready: wakes it (true) or gives it up (false). */
  #readyWaiter: ((ready: boolean) => void) | undefined;
  /** Why the outbox was last abandoned: the error of an output given up while it waited for the device. */
  #abandoned = "";

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import type { Device } from "./device.ts";
   *
   * declare const qq: Device;
   * const outbox = new Outbox(qq, systemClock, 30_000);
   * await outbox.push({ target: "qq:private:1", type: "message", payload: { text: "hi" } });
   * ```
   */
  constructor(device: OutboxDevice, clock: Clock, timeoutMs: number) {
    this.#device = device;
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
    const hold = this.#device.hold;
    if (hold && this.#device.canSend?.(event) === false && this.pending >= hold.limit) {
      return Promise.reject(
        new ChannelError(
          `Channel ${JSON.stringify(event.target)} cannot send now, and ${hold.limit} outputs already wait for it ` +
            `(${hold.setting}); this one was dropped`,
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      this.#items.push({ event, resolve, reject });
      if (!this.#busy) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#busy = true;
    for (let item = this.#items.shift(); item; item = this.#items.shift()) {
      try {
        for (;;) {
          if (!(await this.#ready(item.event))) {
            throw new ChannelError(`Channel ${JSON.stringify(item.event.target)}: ${this.#abandoned}`);
          }
          try {
            await this.#sendOne(item.event);
            break;
          } catch (error) {
            // The connection went away half-way: the device kept what is left; it goes again once ready.
            if (!(error instanceof SendInterrupted)) throw error;
          }
        }
        this.#counts.sent++;
        item.resolve();
      } catch (error) {
        item.reject(error as Error);
      }
    }
    this.#busy = false;
    for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  /** Waits until the device can send `event`; false when the outbox was abandoned meanwhile. */
  async #ready(event: OutputEvent): Promise<boolean> {
    while (this.#device.canSend?.(event) === false) {
      if (!(await new Promise<boolean>((resolve) => (this.#readyWaiter = resolve)))) return false;
    }
    return true;
  }

  /** The device can send again: the output waiting for it goes. */
  wake(): void {
    const waiter = this.#readyWaiter;
    this.#readyWaiter = undefined;
    waiter?.(true);
  }

  /** Whether the head output waits for the device to be ready (nothing will go until it is). */
  get holding(): boolean {
    return this.#readyWaiter !== undefined;
  }

  async #sendOne(event: OutputEvent): Promise<void> {
    const limit = deadline(this.#clock, this.#timeoutMs);
    try {
      // Started synchronously, so an output reaches an idle device before its caller moves on; a device that throws
      // synchronously is as failed as one that rejects.
      let sending: Promise<void>;
      try {
        sending = Promise.resolve(this.#device.send(event));
      } catch (error) {
        sending = Promise.reject(error);
      }
      const raced = await limit.race(sending.catch((error) => {
        if (error instanceof SendInterrupted) throw error;
        this.#counts.failed++;
        throw new ChannelError(
          `Channel ${JSON.stringify(event.target)} failed to deliver: ${(error as Error)?.message ?? String(error)}`,
          { cause: error },
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

  /** Rejects every queued item with `reason` — and the one in flight, if it waits for the device to be ready. */
  abandon(reason: string): void {
    for (const item of this.#items.splice(0)) {
      item.reject(new ChannelError(`Channel ${JSON.stringify(item.event.target)}: ${reason}`));
    }
    const waiter = this.#readyWaiter;
    this.#readyWaiter = undefined;
    this.#abandoned = reason;
    waiter?.(false);
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
