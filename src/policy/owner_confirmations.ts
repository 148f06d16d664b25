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
 * The owner's private chats, in the order homed writes to them first: QQ (`onebot.owner`), Telegram
 * (`telegram.owner`), then WeChat (`weixin.owner`: last, as WeChat takes a message homed starts only within a while of
 * the owner's own). `people:` fills each chat's `owner` from the owner person's addresses (`config/people.ts`).
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Config; // onebot.owner: "10001", telegram.owner: "777000"
 * ownerChannels(config); // ["qq:private:10001", "telegram:private:777000"]
 * ```
 */
export function ownerChannels(config: Pick<Config, "onebot" | "telegram" | "weixin">): string[] {
  const { onebot, telegram, weixin } = config;
  return [
    ...(onebot.enabled && onebot.owner !== "" ? [`qq:private:${onebot.owner}`] : []),
    ...(telegram && telegram.owner !== "" ? [`telegram:private:${telegram.owner}`] : []),
    ...(weixin && weixin.owner !== "" ? [`weixin:private:${weixin.owner}`] : []),
  ];
}

/**
 * The owner's own channel — the first of {@link ownerChannels} — where homed asks and tells them things, or undefined
 * when no chat names an owner.
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Config; // onebot.owner: "10001"
 * ownerChannel(config); // "qq:private:10001"
 * ```
 */
export function ownerChannel(config: Pick<Config, "onebot" | "telegram" | "weixin">): string | undefined {
  return ownerChannels(config)[0];
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
  config: Pick<Config, "smart_home" | "onebot" | "telegram" | "weixin">,
  clock: Clock,
  logger: Logger,
  send: (channel: string, text: string) => Promise<void>,
): { confirmations: Confirmations; outcomes(): ConfirmationOutcome[] } {
  const kept: ConfirmationOutcome[] = [];
  const confirmations = new Confirmations({
    ownerChannel: ownerChannel(config),
    ownerChats: ownerChannels(config),
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
