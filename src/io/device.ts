/**
 * The Device interface: one per channel. Devices know nothing of the agent; they see only this context.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { ToolAllow } from "../identity/trust.ts";
import type { Tool } from "../tools/tool.ts";
import type { HomeTarget } from "./home_target.ts";
import type { InputEvent, InputRef, OutputEvent } from "./event.ts";
import type { MessageAttachment } from "./message_payload.ts";
import type { TurnError } from "./turn_error.ts";

/** An input as a device hands it in; IOManager adds the id and time. */
export type InputDraft = Omit<InputEvent, "id" | "time">;

/** What a device receives when it starts. */
export interface DeviceContext {
  /** Queues an input (never dropped; handled in arrival order) and returns it with its id. */
  emit(draft: InputDraft): InputEvent;
  /** The device can send again (a connection came up): outputs that waited in its queue go now, oldest first. */
  readyAgain(): void;
  /** Outputs waiting in this device's queue (held for a connection, or behind the one in flight). */
  waiting(): number;
  clock: Clock;
  log: Logger;
}

/** How a turn ended, reported to the device its input came from. */
export interface TurnResult {
  eventId: string;
  /** Final text of the turn ("" when it failed). */
  reply: string;
  /** The channel the reply went to. */
  channel: string;
  /** LLM rounds used. */
  rounds: number;
  error?: TurnError;
}

/** Progress of a turn, for the device its input came from (streaming). */
export type TurnEvent =
  | { type: "delta"; eventId: string; text: string }
  | { type: "tool"; eventId: string; name: string; ok: boolean }
  | { type: "done"; eventId: string; result: TurnResult };

/**
 * A tool a device offers: an ordinary {@link Tool} (spec, handler, optional `timeoutMs`) whose `allow` may be left
 * out. IOManager registers it under the device's owner (`device:<name>`) with `household` trust when it has none:
 * a device's tools act on the house, so guests get them only where the device says so.
 *
 * @example
 * ```ts
 * const power: DeviceTool = {
 *   name: "tv_power",
 *   description: "Turn the TV on or off",
 *   parameters: { type: "object", properties: { on: { type: "boolean" } }, required: ["on"] },
 *   execute: (args) => (args.on ? "The TV is on" : "The TV is off"),
 * };
 * ```
 */
export type DeviceTool = Omit<Tool, "allow"> & { allow?: ToolAllow };

/**
 * Who put a set of devices in the IO table, so a reload swaps exactly its own: `core` (the configured channels, at
 * start and on config reload) or `plugins` (the Lua plugins' devices).
 */
export type DeviceGroup = "core" | "plugins";

/** One IO channel. */
export interface Device {
  readonly name: string;
  readonly type: string;
  readonly description: string;
  /**
   * Tools this device offers to the LLM, each with its own handler (called with arguments already validated against
   * its schema); names must match `^[a-zA-Z0-9_-]{1,64}$`. IOManager asks again on every device-table change, so the
   * same objects should come back each time.
   */
  tools(): readonly DeviceTool[];
  start(context: DeviceContext): Promise<void>;
  stop(): Promise<void>;
  /** Bitmask of {@link Capability}. */
  outputCapabilities(): number;
  /**
   * Delivers one output to the device's channel. IOManager calls it from the device's own ordered queue, one output
   * at a time, under `io.send_timeout`.
   */
  send(event: OutputEvent): Promise<void>;
  /**
   * Optional: whether `event` can go out now. While it says no (QQ with no connection up), outputs wait in the
   * device's queue — the send deadline starts only when one goes — until the device calls
   * {@link DeviceContext.readyAgain}; at most {@link Device.hold}'s limit wait so, more are refused at once. A send
   * that loses its connection half-way rejects with {@link SendInterrupted}: the output goes back to the head of the
   * queue and is sent again, the device resuming where it stopped.
   */
  canSend?(event: OutputEvent): boolean;
  /** With {@link Device.canSend}: most outputs that may wait for the device, and the setting that says so. */
  readonly hold?: { limit: number; setting: string };
  /** Optional: progress and the end of turns started by this device's inputs. */
  onTurnEvent?(event: TurnEvent): void;
  /**
   * Request/response channels (the HTTP API): the `done` turn event is itself the reply to this device's inputs, so
   * a reply that stays on the input's channel is handed over directly and never queued behind other output.
   */
  readonly answersInline?: boolean;
  /**
   * Chat apps where people send several short lines in a row (QQ): messages of one sender on one source that wait
   * together are answered in one turn, their texts joined, instead of one turn each.
   */
  readonly coalesces?: boolean;
  /**
   * Optional: where an attachment of one of this device's inputs is, when the attachment came without a URL — asked
   * of the implementation (QQ: `get_image`, `get_record` as WAV). A URL (fetched under the media rules) or the bytes
   * themselves; undefined when the device cannot tell.
   */
  locate?(input: InputRef, attachment: MessageAttachment): Promise<string | Uint8Array | undefined>;
  /**
   * Optional: the things in the house this device switches, sets or reads, by the household's names — what local
   * intents act on without a model (each action planned as one of this device's own tool calls).
   */
  homeTargets?(): readonly HomeTarget[];
  /** Optional: cheap bookkeeping on the daemon heartbeat (connection liveness). Errors are logged, never fatal. */
  heartbeat?(): Promise<void> | void;
  /** Optional: counters for `/api/status`. */
  status?(): Record<string, unknown>;
}

/**
 * A device's send lost its connection half-way: what is left is kept by the device, and the output is to be sent
 * again once the device is ready ({@link DeviceContext.readyAgain}).
 */
export class SendInterrupted extends Error {
  /**
   * @example
   * ```ts
   * throw new SendInterrupted("The QQ connection went away after 1 of 3 pieces");
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "SendInterrupted";
  }
}

/**
 * A device's channel refused an output for good, for this recipient now — WeChat takes a message homed starts only
 * within a while of the person's own last one. Not retried by the queue: the IO layer tries the person's other chats
 * (`people:`) and, failing those, tells the owner; it is never dropped silently.
 */
export class Undeliverable extends Error {
  /**
   * @example
   * ```ts
   * throw new Undeliverable("WeChat user o9cq80abc@im.wechat has not written to the butler lately");
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "Undeliverable";
  }
}
