/**
 * The owner hears of the model once when it is lost, once when it is back and once when the spending cap is
 * reached — on their own channel, in the persona's language — and the log has every provider's change. Nothing here
 * waits: a notice that cannot be sent is logged and dropped (the console's banner and `/api/status` say the same).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { ChainEvent, LlmAvailability } from "../provider/provider_chain.ts";
import { languagesOf, type ReplyLanguage } from "../intents/replies.ts";

/** Options of {@link tellOwnerOfModel}. */
export interface ModelNoticeOptions {
  llm: Pick<LlmAvailability, "onChange">;
  /** Sends a text to a channel (the IO manager's send). */
  send: (channel: string, text: string) => Promise<void>;
  /** The owner's own channel (`qq:private:<onebot.owner>`), or undefined when there is none: then only the log. */
  ownerChannel: string | undefined;
  /** The persona's text: notices are in its language (both languages for a bilingual persona). */
  persona: () => string;
  logger: Logger;
}

/**
 * Subscribes to the chain's changes; returns the unsubscribe.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import type { LlmAvailability } from "../provider/provider_chain.ts";
 *
 * declare const llm: LlmAvailability;
 * const stop = tellOwnerOfModel({
 *   llm,
 *   send: async (channel, text) => console.log(channel, text),
 *   ownerChannel: "qq:private:10001",
 *   persona: () => "You are Alfred.",
 *   logger: getLogger(["homed"]),
 * });
 * stop();
 * ```
 */
export function tellOwnerOfModel(options: ModelNoticeOptions): () => void {
  const { logger } = options;
  return options.llm.onChange((event) => {
    logEvent(logger, event);
    const text = noticeText(event, languagesOf(options.persona()));
    if (!text || !options.ownerChannel) return;
    options.send(options.ownerChannel, text).catch((error) =>
      logger.warning("Could not tell the owner that {what}: {error}", { what: event.type, error })
    );
  });
}

function logEvent(logger: Logger, event: ChainEvent): void {
  switch (event.type) {
    case "lost":
      return logger.error("No model is answering: homed answers what it can locally until one is back");
    case "back":
      return logger.info("A model answers again: {provider}", { provider: event.provider });
    case "provider_down":
      return logger.warning("{provider} is down: {error}", { provider: event.provider, error: event.error });
    case "provider_up":
      return logger.info("{provider} answers again", { provider: event.provider });
    case "budget_reached":
      return logger.warning("{provider} reached its {period} budget ({spent} of {limit} {currency})", {
        ...event,
      });
  }
}

type Language = ReplyLanguage;

/**
 * What the owner is told of `event` in `languages`, or undefined for changes only the log hears of.
 *
 * @example
 * ```ts
 * noticeText({ type: "back", provider: "deepseek-v4-flash@api.deepseek.com" }, ["en"]);
 * // "The language model answers again (deepseek-v4-flash@api.deepseek.com)."
 * ```
 */
export function noticeText(event: ChainEvent, languages: readonly Language[]): string | undefined {
  const lines = languages.map((language) => {
    const zh = language === "zh";
    switch (event.type) {
      case "lost":
        return zh
          ? "语言模型现在都连不上了。家里的设备开关、状态查询、提醒和报时照常在本地处理；其他问题要等模型恢复。"
          : "No language model is answering now. Switching devices, reading states, reminders and the time still " +
            "work locally; everything else waits until a model is back.";
      case "back":
        return zh ? `语言模型恢复了（${event.provider}）。` : `The language model answers again (${event.provider}).`;
      case "budget_reached": {
        const figure = event.currency === "tokens"
          ? `${event.spent} / ${event.limit} tokens`
          : `${event.spent.toFixed(2)} / ${event.limit.toFixed(2)} ${event.currency}`;
        const period = zh ? (event.period === "daily" ? "今天" : "本月") : event.period;
        return zh
          ? `${period}的模型预算已用完（${figure}），在下个周期之前不再调用 ${event.provider}，改用备用模型和本地处理。`
          : `The ${period} model budget is used up (${figure}): ${event.provider} is not called again until the ` +
            "period turns; fallbacks and local commands answer meanwhile.";
      }
      default:
        return undefined;
    }
  }).filter((line): line is string => line !== undefined);
  return lines.length ? lines.join("\n") : undefined;
}
