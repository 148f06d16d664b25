/**
 * The agent's channel tools: `output_list_channels`, `output_set_channel`, `output_send`.
 *
 * What `output_send` sends obeys the rules of what homed reads: a `url` the model gives is never handed to a channel
 * (QQ's implementation would fetch it, or upload a `file:` path, from wherever it runs — homed's config, the cloud
 * metadata address, homed's own API). homed fetches it itself through {@link OutputToolsOptions.fetchMedia} — the
 * address policy and limits of inbound media — and the channel gets the id of the bytes homed then holds.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Tool, ToolContext, ToolEffect } from "../tools/tool.ts";
import type { OutputEvent, OutputType } from "./event.ts";
import type { IOManager } from "./io_manager.ts";

const SENDABLE: OutputType[] = ["message", "structured", "file", "image", "audio"];

/** The output types whose payload is media: sent from bytes homed holds. */
export type MediaOutputType = "image" | "audio" | "file";

/**
 * Fetches a URL for an output under the rules inbound media obey and keeps what came: resolves to the media id homed
 * now holds; rejects with an error whose message names the URL and the rule or failure (`url "…" was refused: …`).
 * The IO layer cannot see `media/` (it is above it): the daemon passes `MediaService.fetchOutgoing`.
 */
export type FetchOutgoing = (url: string, type: MediaOutputType, signal: AbortSignal) => Promise<string>;

/** Options of {@link outputTools}. */
export interface OutputToolsOptions {
  /** How a `url` becomes media homed holds; without it `output_send` sends only media homed already holds. */
  fetchMedia?: FetchOutgoing;
}

/** Sending to the asker's own chat is answering them (`read`); anywhere else it is speaking to others (`speak`). */
function toOthers(args: Record<string, unknown>, context: ToolContext): ToolEffect {
  return args.channel === context.source ? "read" : "speak";
}

/**
 * Builds the three output tools over `io`.
 *
 * @example
 * ```ts
 * import { log } from "../log/logging.ts";
 * import { ToolRegistry } from "../tools/registry.ts";
 * import type { IOManager } from "./io_manager.ts";
 *
 * declare const io: IOManager;
 * declare const media: { fetchOutgoing(url: string, type: MediaOutputType, signal?: AbortSignal): Promise<{ id: string }> };
 * const registry = new ToolRegistry();
 * const fetchMedia: FetchOutgoing = async (url, type, signal) => (await media.fetchOutgoing(url, type, signal)).id;
 * for (const tool of outputTools(io, log("io"), { fetchMedia })) registry.register(tool);
 * ```
 */
export function outputTools(io: IOManager, logger: Logger, options: OutputToolsOptions = {}): Tool[] {
  return [
    {
      name: "output_list_channels",
      effect: "read",
      allow: "anyone",
      description:
        "List the output channels (devices) with what each can carry, the route table, and where the current reply goes.",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      execute: (_args, context) => ({
        channels: io.channels(),
        // A sender's own route is theirs: the owner sees every one, anyone else only their own.
        routes: io.routes.entries().filter((route) =>
          route.sender === undefined || context.trust === "owner" ||
          (route.sender === context.sender && route.source === context.source)
        ),
        current_reply_channel: context.replyChannel(),
      }),
    },
    {
      name: "output_set_channel",
      effect: toOthers,
      allow: "household",
      description:
        "Send the reply of the current turn to another channel. With remember=true, also send the replies to this sender's future messages from this source there (the owner's route is for everyone on the source).",
      parameters: {
        type: "object",
        properties: {
          channel: { type: "string", minLength: 1, description: 'Channel name, e.g. "http" or "qq:private:10001"' },
          remember: {
            type: "boolean",
            description: "Persist this as the route of the sender's messages from the current source",
          },
        },
        required: ["channel"],
        additionalProperties: false,
      },
      execute: async (args, context) => {
        const channel = args.channel as string;
        const problem = io.checkChannel(channel, "message");
        if (problem) throw new Error(problem);
        context.setReplyChannel(channel);
        if (args.remember !== true) return `The reply will go to ${channel}`;
        const { source, sender } = context;
        // The owner's route is the source's, as a configured one (`io.routes`); anyone else's is for their own
        // messages only, so it never takes someone else's reply where they did not ask it to go.
        if (context.trust === "owner") {
          await io.routes.set(source, channel);
          return `The reply will go to ${channel}; ${source} now routes there`;
        }
        await io.routes.setForSender(source, sender, channel);
        return `The reply will go to ${channel}; from now on, replies to ${sender}'s messages from ${source} go ` +
          `there (only ${sender}'s: a route for everyone on ${source} is the owner's to set)`;
      },
    },
    {
      name: "output_send",
      effect: toOthers,
      allow: "household",
      description:
        "Send something through a named channel now, without waiting for the reply. type defaults to message (needs text); structured needs data; file, image and audio need media (the id of media homed holds, as a tool gave it) or url (http or https: homed fetches it and sends what came, never the link).",
      parameters: {
        type: "object",
        properties: {
          channel: { type: "string", minLength: 1 },
          type: { type: "string", enum: SENDABLE },
          text: { type: "string" },
          data: { type: "object" },
          url: { type: "string" },
          media: { type: "string", pattern: "^[0-9a-f]{64}\\.[a-z0-9]{1,8}$" },
        },
        required: ["channel"],
        additionalProperties: false,
      },
      execute: async (args, context) => {
        const type = (args.type ?? "message") as OutputType;
        const channel = args.channel as string;
        let payload = payloadFor(type, args);
        const problem = io.checkChannel(channel, type);
        if (problem) throw new Error(problem);
        if (typeof payload.url === "string") {
          const { url, ...rest } = payload;
          payload = { media: await fetched(url, type as MediaOutputType, context.signal, options.fetchMedia), ...rest };
        }
        const event: OutputEvent = {
          target: channel,
          type,
          payload,
          replyTo: {
            id: context.eventId,
            source: context.source,
            sender: context.sender,
            ...(context.handle ? { handle: context.handle } : {}),
          },
        };
        io.send(event).catch((error) =>
          logger.warning("output_send to {channel} failed: {error}", { channel, error: (error as Error).message })
        );
        return `Queued ${type} for ${channel}`;
      },
    },
  ];
}

function payloadFor(type: OutputType, args: Record<string, unknown>): Record<string, unknown> {
  switch (type) {
    case "message":
      if (typeof args.text !== "string" || args.text === "") throw new Error('type "message" needs a non-empty "text"');
      return { text: args.text };
    case "structured":
      if (args.data === undefined) throw new Error('type "structured" needs "data"');
      return { data: args.data, ...(typeof args.text === "string" ? { text: args.text } : {}) };
    default: {
      const text = typeof args.text === "string" ? { text: args.text } : {};
      if (typeof args.media === "string") return { media: args.media, ...text };
      if (typeof args.url !== "string" || args.url === "") {
        throw new Error(`type "${type}" needs "media" (an id of media homed holds) or a non-empty "url"`);
      }
      return { url: args.url, ...text };
    }
  }
}

/**
 * The id of the media homed holds for an output's `url`, fetched and checked by `fetchMedia`; a refusal or failure
 * becomes the tool's error, naming the URL and why.
 */
async function fetched(
  url: string,
  type: MediaOutputType,
  signal: AbortSignal,
  fetchMedia: FetchOutgoing | undefined,
): Promise<string> {
  if (!fetchMedia) {
    throw new Error(
      `url ${JSON.stringify(url)} was refused: homed sends only media it holds here (nothing fetches and checks a ` +
        'url for it); give "media", the id of media homed holds',
    );
  }
  // The registry words a thrown error as `tool "output_send" failed: <message>`; fetchMedia's names the URL and rule.
  return await fetchMedia(url, type, signal);
}
