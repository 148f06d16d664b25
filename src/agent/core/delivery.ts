/**
 * Handing a turn's outcome over: inline to a request/response source, else on the routed channel's own queue (as a
 * voice message when asked), with `done` reported once delivered. Apart from `agent.ts` because delivery never holds
 * the next turn and reads nothing of the agent but its io, logger and media.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { TurnResult } from "../../io/device.ts";
import type { InputEvent, OutputType } from "../../io/event.ts";
import type { IOManager } from "../../io/io_manager.ts";
import type { HomedTurnErrorCode } from "../../io/turn_error.ts";
import type { MediaService } from "../../media/media_service.ts";

/** What delivery needs of the agent. */
export interface DeliveryDeps {
  io: IOManager;
  logger: Logger;
  media?: MediaService | undefined;
}

/**
 * Hands the outcome over without waiting for slow channels: a request/response source replying on its own
 * channel gets it in the `done` event at once; otherwise the reply (or the error text) is queued on the channel's
 * own queue, and `done` follows when it was delivered — or delivered to the source instead, if the channel failed.
 * `speak`: the reply goes as a voice message (`speech.reply_with_voice`) when the channel carries audio.
 */
export function deliver(deps: DeliveryDeps, event: InputEvent, result: TurnResult, speak: boolean): void {
  const { io, logger } = deps;
  const done = (final: TurnResult) => io.report(event.source, { type: "done", eventId: event.id, result: final });
  if (io.answersInline(event.source, result.channel)) return done(result);
  const type: OutputType = result.error ? "error" : "message";
  const payload = result.error ? { text: result.error.message, code: result.error.code } : { text: result.reply };
  const delivered = speak && io.checkChannel(result.channel, "audio") === undefined
    ? replyInVoice(deps, event, result)
    : io.reply(event, result.channel, type, payload);
  delivered.then(
    (channel) => done({ ...result, channel }),
    (error) => {
      logger.warning("The reply to {id} could not be delivered: {error}", { id: event.id, error: error.message });
      done({
        ...result,
        error: result.error ??
          { code: "undelivered" satisfies HomedTurnErrorCode, message: (error as Error).message },
      });
    },
  );
}

/**
 * The reply as a voice message with its text (`speech.reply_with_voice`); when speech fails, the text alone — the
 * answer matters more than its voice.
 */
async function replyInVoice(deps: DeliveryDeps, event: InputEvent, result: TurnResult): Promise<string> {
  const { io, logger, media } = deps;
  let audio;
  try {
    audio = await media!.speak(result.reply);
  } catch (error) {
    logger.warning("The reply to {id} is sent as text: speaking it failed: {error}", {
      id: event.id,
      error: (error as Error).message,
    });
    return io.reply(event, result.channel, "message", { text: result.reply });
  }
  return io.reply(event, result.channel, "audio", { text: result.reply, media: audio.id, mime: audio.mime });
}
