/**
 * Folding a burst of messages one sender sent in a row into one turn. Apart from `agent.ts` because it only reshapes
 * inputs, before any turn runs.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { InputEvent } from "../../io/event.ts";
import type { IOManager } from "../../io/io_manager.ts";
import { readMessage } from "../../io/message_payload.ts";

/**
 * `event` with the burst behind it (see `IOManager.takeBurst`) folded in: one input with the texts joined by line
 * breaks and the attachments together, under the last message's id — the reply quotes the newest line.
 */
export function coalesce(io: IOManager, logger: Logger, event: InputEvent): InputEvent {
  const burst = io.takeBurst(event);
  if (!burst.length) return event;
  const all = [event, ...burst];
  const last = burst.at(-1)!;
  const messages = all.map((input) => readMessage(input.payload));
  const attachments = messages.flatMap((message) => message.attachments);
  logger.info("Answering {count} messages {sender} sent in a row on {source} in one turn", {
    count: all.length,
    sender: event.sender,
    source: event.source,
  });
  return {
    ...last,
    payload: {
      ...last.payload,
      text: messages.map((message) => message.text).filter((text) => text !== "").join("\n"),
      ...(attachments.length ? { attachments } : {}),
    },
  };
}
