/**
 * What happens to a message a chat refused for good (issue 40: WeChat takes a message homed starts only within a while
 * of the person's own last one): the IO layer tries the same person's other chats (`people:`), and when none took it
 * the owner is told on one of their own chats other than the refused one, in the persona's language — so a reminder
 * is never lost without anyone knowing.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { UndeliverablePolicy, UndeliveredOutput } from "../io/undelivered.ts";
import { languagesOf, type ReplyLanguage } from "../intents/replies.ts";

/** Options of {@link undeliverablePolicy}. */
export interface UndeliverableNoticeOptions {
  /** The private chats of the person a chat belongs to (`people:`), or none. */
  chatsOf(channel: string): readonly string[];
  /** The owner's private chats, first the one homed writes to first. */
  ownerChannels: readonly string[];
  send(channel: string, text: string): Promise<void>;
  /** The persona's text: the notice is in its language. */
  persona: () => string;
  logger: Logger;
}

/**
 * The daemon's policy for refused messages.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 *
 * const policy = undeliverablePolicy({
 *   chatsOf: (channel) => channel === "weixin:private:o9lin@im.wechat" ? [channel, "qq:private:10002"] : [],
 *   ownerChannels: ["qq:private:10001"],
 *   send: async (channel, text) => console.log(channel, text),
 *   persona: () => "You are Alfred.",
 *   logger: getLogger(["io"]),
 * });
 * policy.elsewhere("weixin:private:o9lin@im.wechat"); // ["qq:private:10002"]
 * ```
 */
export function undeliverablePolicy(options: UndeliverableNoticeOptions): UndeliverablePolicy {
  return {
    elsewhere: (target) => options.chatsOf(target).filter((channel) => channel !== target),
    tell(failure) {
      const channel = options.ownerChannels.find((owner) => owner !== failure.target);
      if (!channel) return;
      options.send(channel, undeliveredText(failure, languagesOf(options.persona()))).catch((error) =>
        options.logger.warning("Could not tell the owner of a message {target} refused: {error}", {
          target: failure.target,
          error: (error as Error).message,
        })
      );
    },
  };
}

/**
 * What the owner is told of a message no chat took, in `languages`.
 *
 * @example
 * ```ts
 * undeliveredText({
 *   target: "weixin:private:o9lin@im.wechat",
 *   reason: "they have not written lately",
 *   text: "Dentist at 3",
 *   at: "2026-12-05T08:00:00.000Z",
 *   delivered_on: null,
 * }, ["en"]);
 * // 'Could not deliver a message to weixin:private:o9lin@im.wechat (they have not written lately). It said: "Dentist at 3"'
 * ```
 */
export function undeliveredText(failure: UndeliveredOutput, languages: readonly ReplyLanguage[]): string {
  return languages.map((language) =>
    language === "zh"
      ? `没能把消息送到 ${failure.target}（原因：${failure.reason}）。内容是：“${failure.text}”`
      : `Could not deliver a message to ${failure.target} (${failure.reason}). It said: "${failure.text}"`
  ).join("\n");
}
