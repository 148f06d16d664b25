/**
 * The events that cross the IO layer, and what an output channel can carry.
 *
 * @module
 */

import type { Trust } from "../identity/trust.ts";

/** One input, from any device. Only `message` events start a turn. */
export interface InputEvent {
  id: string;
  /** Milliseconds since the epoch, from the injected clock. */
  time: number;
  /** Where it came from: a device name, optionally with an address (`qq:group:123`). */
  source: string;
  /**
   * Who speaks in the shared conversation: the identity the channel authenticated (a token's name, a QQ id) — or,
   * for someone `people:` lists, their person's name, the same on every chat.
   */
  sender: string;
  /** The sender as their chat names them (a QQ number), when `people:` named them by their person's name. */
  address?: string;
  /** How far homed trusts the sender, set by the channel from what it authenticated — never from the text. */
  trust: Trust;
  /** `message` for something to answer; anything else (sensor readings, notices) is recorded, not answered. */
  type: string;
  /**
   * For `message`: `text`; `stream: true` when the device shows the reply as it is produced; `display`, a name the
   * sender gave themself (shown to the model as such, never taken as their identity).
   */
  payload: Record<string, unknown>;
  /**
   * The channel the device asks the reply to go to, when it is not the source itself (a timer: the schedule's
   * channel). Set by the device, never from what a sender wrote; a configured route for the source still wins.
   */
  reply?: string;
  /**
   * What the device needs to answer this input in place (QQ: the account that received it and the message id to
   * quote). Set by the device, opaque to everyone else, handed back to it on the reply's {@link OutputEvent.replyTo}.
   */
  handle?: ReplyHandle;
}

/** A device's own note on an input, for answering it; strings only, so it survives any queue or log. */
export type ReplyHandle = Readonly<Record<string, string>>;

/** The input an output answers, as the device that took it in needs it back. */
export type InputRef = Pick<InputEvent, "id" | "source" | "sender" | "address" | "handle">;

/**
 * The reference an answer to `event` carries.
 *
 * @example
 * ```ts
 * const input: InputEvent = {
 *   id: "e1",
 *   time: 0,
 *   source: "qq:private:10001",
 *   sender: "10001",
 *   trust: "owner",
 *   type: "message",
 *   payload: { text: "hi" },
 * };
 * refOf(input); // { id: "e1", source: "qq:private:10001", sender: "10001" }
 * ```
 */
export function refOf(event: InputRef): InputRef {
  return {
    id: event.id,
    source: event.source,
    sender: event.sender,
    ...(event.address ? { address: event.address } : {}),
    ...(event.handle ? { handle: event.handle } : {}),
  };
}

/** One output, for a channel. */
export interface OutputEvent {
  /** A channel: a device name, optionally with an address (`qq:private:10001`). */
  target: string;
  /** `message` (text), `file`, `image`, `audio`, `structured`, or `error` (a turn that failed, as text). */
  type: OutputType;
  payload: Record<string, unknown>;
  /** The InputEvent this answers, if any: the device that took it in reads its own handle from here. */
  replyTo?: InputRef;
  /**
   * Who it is for: the sender of the input it answers (set by the agent; a reminder's is its creator). A channel
   * shared by several people (`http`'s `/api/events`) keeps and shows it to them and the owner only; without it, a
   * message is for the whole household.
   */
  recipient?: string;
}

/** Kinds of output. */
export type OutputType = "message" | "error" | "file" | "image" | "audio" | "structured";

/** Output capabilities as a bitmask. */
export const Capability = {
  Text: 1,
  File: 2,
  Image: 4,
  Audio: 8,
  Structured: 16,
} as const;

/** What each output type needs. */
export const REQUIRED_CAPABILITY: Record<OutputType, number> = {
  message: Capability.Text,
  error: Capability.Text,
  file: Capability.File,
  image: Capability.Image,
  audio: Capability.Audio,
  structured: Capability.Structured,
};

/**
 * Names the bits of a capability mask.
 *
 * @example
 * ```ts
 * capabilityNames(Capability.Text | Capability.Image); // ["text", "image"]
 * ```
 */
export function capabilityNames(mask: number): string[] {
  return Object.entries(Capability).filter(([, bit]) => (mask & bit) !== 0).map(([name]) => name.toLowerCase());
}

/**
 * The device part of a source or channel: everything before the first colon.
 *
 * @example
 * ```ts
 * deviceOf("qq:group:123"); // "qq"
 * ```
 */
export function deviceOf(channel: string): string {
  const colon = channel.indexOf(":");
  return colon === -1 ? channel : channel.slice(0, colon);
}
