/**
 * The person writing now, as `people:` names them (issue 40): where else they write, so that "remind me on QQ",
 * asked on WeChat, goes to their own QQ. Only their own chats, and only in their own message's reference block.
 *
 * @module
 */

import type { PromptContributor } from "./contributor.ts";

/**
 * A contributor naming the sender's own private chats when they have more than one.
 *
 * @example
 * ```ts
 * const prompt = personChannelsPrompt((name) => name === "wei" ? ["qq:private:10001", "telegram:private:777"] : []);
 * await prompt.reference?.({ text: "remind me on QQ", source: "telegram:private:777", sender: "wei", time: 0 }, []);
 * // { title: "Where wei writes", body: "wei is one person on qq:private:10001, telegram:private:777: …" }
 * ```
 */
export function personChannelsPrompt(channelsOf: (name: string) => readonly string[]): PromptContributor {
  return {
    reference(input) {
      const channels = channelsOf(input.sender);
      if (channels.length < 2) return undefined;
      return {
        title: `Where ${input.sender} writes`,
        body: `${input.sender} is one person on ${channels.join(", ")}: what they said on any of them is theirs. ` +
          "Answer where they wrote; when they ask for a reminder or a message on another of these, give that chat " +
          "as the channel (schedule_create's channel).",
      };
    },
  };
}
