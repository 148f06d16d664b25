/**
 * What happens to a message a chat refused for good (issue 40: WeChat takes a message homed starts only within a while
 * of the person's own last one): the IO layer tries the same person's other chats (`people:`), and when none took it
 * the owner is told on one of their own chats other than the refused one, in the persona's language — so a reminder
 * is never lost without anyone knowing.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { OwnerNotice } from "../devices/kind.ts";
import type { UndeliverablePolicy, UndeliveredOutput } from "../io/undelivered.ts";
import { languagesOf, type ReplyLanguage } from "../intents/replies.ts";

/** How the owner is told things: their chats, the send, the persona's language, the log for what cannot be sent. */
export interface OwnerNoticeOptions {
  /** The owner's private chats, first the one homed writes to first. */
  ownerChannels: readonly string[];
  send(channel: string, text: string): Promise<void>;
  /** The persona's text: the notice is in its language. */
  persona: () => string;
  logger: Logger;
}

/** Options of {@link undeliverablePolicy}. */
export interface UndeliverableNoticeOptions extends OwnerNoticeOptions {
  /** The private chats of the person a chat belongs to (`people:`), or none. */
  chatsOf(channel: string): readonly string[];
}

/**
 * A device kind's way to tell the owner (`KindContext.tellOwner`): in the persona's language, on the first of the
 * owner's chats that is not device `avoid`'s (a chat in trouble cannot carry its own news); nothing when there is none.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 *
 * const tell = ownerNoticeElsewhere({
 *   ownerChannels: ["weixin:private:o9wei@im.wechat", "qq:private:10001"],
 *   send: async (channel, text) => console.log(channel, text),
 *   persona: () => "You are Alfred.",
 *   logger: getLogger(["io"]),
 * });
 * tell({ en: "WeChat's session expired", zh: "微信登录已失效" }, "weixin"); // on qq:private:10001
 * ```
 */
export function ownerNoticeElsewhere(options: OwnerNoticeOptions): (notice: OwnerNotice, avoid: string) => void {
  return (notice, avoid) => {
    const channel = options.ownerChannels.find((owner) => !owner.startsWith(`${avoid}:`));
    if (!channel) return;
    const text = languagesOf(options.persona()).map((language) => notice[language]).join("\n");
    options.send(channel, text).catch((error) =>
      options.logger.warning("Could not tell the owner on {channel}: {error}", {
        channel,
        error: (error as Error).message,
      })
    );
  };
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
