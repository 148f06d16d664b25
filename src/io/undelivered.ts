/**
 * Outputs a channel refused for good ({@link Undeliverable}: WeChat takes a message homed starts only within a while of
 * the person's own last one): tried on the same person's other chats (`people:`), kept for `/api/status`
 * (`io.undeliverable`), and — when no other chat took one — handed to the daemon's policy, which tells the owner.
 * Never dropped silently.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { Undeliverable } from "./device.ts";
import type { OutputEvent } from "./event.ts";

/** Where such an output goes instead, and who hears of it. */
export interface UndeliverablePolicy {
  /** The recipient's other chats, tried in order (`people:`: the same person's QQ, Telegram…); none for others. */
  elsewhere(target: string): readonly string[];
  /** Told when no other chat took it (the daemon tells the owner on their own channel). */
  tell(failure: UndeliveredOutput): void;
}

/** An output its channel refused for good, as status and the owner hear of it. */
export interface UndeliveredOutput {
  target: string;
  reason: string;
  /** The text it carried (cut at 200 characters), for the owner's notice. */
  text: string;
  at: string;
  /** The chat that took it instead, if one did. */
  delivered_on: string | null;
}

/** Options of {@link Undelivered}. */
export interface UndeliveredOptions {
  policy: UndeliverablePolicy;
  clock: Clock;
  logger: Logger;
}

/** Undelivered outputs kept for status. */
const KEPT = 20;

/** The IO layer's handling of refused outputs. */
export class Undelivered {
  #options: UndeliveredOptions;
  #kept: UndeliveredOutput[] = [];

  /**
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   *
   * const undelivered = new Undelivered({
   *   policy: { elsewhere: () => [], tell: (failure) => console.log(failure.reason) },
   *   clock: systemClock,
   *   logger: log("io"),
   * });
   * undelivered.status(); // []
   * ```
   */
  constructor(options: UndeliveredOptions) {
    this.#options = options;
  }

  /**
   * Handles a failed send of `event`: any error but a refusal for good is thrown on as it is; a refusal is tried on
   * the recipient's other chats through `io.sendOnly` (without the reply handle, which was the first chat's), then
   * recorded; when none took it, the policy is told and the refusal thrown on.
   */
  async handle(
    event: OutputEvent,
    error: unknown,
    io: { sendOnly(event: OutputEvent): Promise<void> },
  ): Promise<void> {
    const cause = (error as Error)?.cause;
    if (!(cause instanceof Undeliverable)) throw error;
    const { policy, logger, clock } = this.#options;
    const text = typeof event.payload.text === "string" ? event.payload.text.slice(0, 200) : `(${event.type})`;
    const failure = { target: event.target, reason: cause.message, text, at: new Date(clock.now()).toISOString() };
    const { replyTo: _replyTo, ...output } = event;
    for (const channel of policy.elsewhere(event.target)) {
      if (channel === event.target) continue;
      try {
        await io.sendOnly({ ...output, target: channel });
      } catch (other) {
        logger.warning("Could not deliver to {channel} either: {error}", {
          channel,
          error: (other as Error).message,
        });
        continue;
      }
      this.#keep({ ...failure, delivered_on: channel });
      logger.info("{target} refused an output ({reason}); delivered on {channel} instead", {
        target: event.target,
        reason: cause.message,
        channel,
      });
      return;
    }
    this.#keep({ ...failure, delivered_on: null });
    logger.error("Could not deliver an output to {target}: {reason}", { target: event.target, reason: cause.message });
    policy.tell({ ...failure, delivered_on: null });
    throw error;
  }

  #keep(entry: UndeliveredOutput): void {
    this.#kept.push(entry);
    if (this.#kept.length > KEPT) this.#kept.shift();
  }

  /** The refused outputs lately, newest first. */
  status(): UndeliveredOutput[] {
    return [...this.#kept].reverse();
  }
}
