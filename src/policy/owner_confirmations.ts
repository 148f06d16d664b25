/**
 * The daemon's one {@link Confirmations}: asked on the owner's own QQ when someone else asked (with no owner set, only
 * the owner's own requests can wait), within `smart_home.home_assistant.confirm_timeout` (2 min by default), each
 * decision kept for the audit list (the newest 500).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import { type ConfirmationOutcome, Confirmations } from "./confirmations.ts";

/** Decisions kept for `GET /api/smart_home/actions`. */
const OUTCOMES_KEPT = 500;

/**
 * The owner's own channel — their QQ private chat — where homed asks and tells them things, or undefined when no owner
 * is set (`onebot.owner`).
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Config; // onebot.owner: "10001"
 * ownerChannel(config); // "qq:private:10001"
 * ```
 */
export function ownerChannel(config: Pick<Config, "onebot">): string | undefined {
  const { onebot } = config;
  return onebot.enabled && onebot.owner !== "" ? `qq:private:${onebot.owner}` : undefined;
}

/**
 * The confirmations and their audit.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { systemClock } from "../clock.ts";
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Config;
 * const { confirmations, outcomes } = ownerConfirmations(config, systemClock, getLogger(["homed"]), async () => {});
 * outcomes(); // [] until the owner decides something
 * ```
 */
export function ownerConfirmations(
  config: Pick<Config, "smart_home" | "onebot">,
  clock: Clock,
  logger: Logger,
  send: (channel: string, text: string) => Promise<void>,
): { confirmations: Confirmations; outcomes(): ConfirmationOutcome[] } {
  const kept: ConfirmationOutcome[] = [];
  const confirmations = new Confirmations({
    ownerChannel: ownerChannel(config),
    send,
    timeoutMs: config.smart_home.home_assistant?.confirm_timeout ?? 120_000,
    clock,
    logger,
    onOutcome: (outcome) => {
      kept.unshift(outcome);
      kept.length = Math.min(kept.length, OUTCOMES_KEPT);
    },
  });
  return { confirmations, outcomes: () => [...kept] };
}
