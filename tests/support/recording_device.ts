/**
 * A Device that records what it is sent and lets a test emit inputs; for IO and agent tests.
 *
 * @module
 */

import {
  type Device,
  type DeviceContext,
  type DeviceTool,
  type TurnEvent,
  type TurnResult,
  Undeliverable,
} from "../../src/io/device.ts";
import { Capability, type InputEvent, type OutputEvent } from "../../src/io/event.ts";
import type { Trust } from "../../src/identity/trust.ts";
import type { ToolContext, ToolSpec } from "../../src/tools/tool.ts";

/**
 * Runs the tool `name` of `device` as the registry would (minus schema and trust checks), for tests that call a
 * device's tools directly; always a promise, so a handler's synchronous throw is a rejection.
 *
 * @example
 * ```ts
 * import { testToolContext } from "./tool_context.ts";
 *
 * const tv = new RecordingDevice("tv", {
 *   tools: [{ name: "tv_power", description: "Power", parameters: { type: "object" } }],
 * });
 * await callDeviceTool(tv, "tv_power", {}, testToolContext()); // "tv ran tv_power"
 * ```
 */
export async function callDeviceTool(
  device: Device,
  name: string,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<unknown> {
  const tool = device.tools().find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`${device.name} has no tool ${name}`);
  return await tool.execute(args, context);
}

/** Options of {@link RecordingDevice}. */
export interface RecordingOptions {
  capabilities?: number;
  /** The device's tools: a bare spec gets a handler that records the call and answers `<device> ran <tool>`. */
  tools?: Array<ToolSpec | DeviceTool>;
  /** Makes `start()` reject with this message. */
  failStart?: string;
  /** Makes `send()` reject with this message. */
  failSend?: string;
  /** Makes `send()` never settle (a hung peer). */
  hangSend?: boolean;
  /** Makes `send()` refuse for good ({@link Undeliverable}) with this message (WeChat with no recent message). */
  refuseSend?: string;
  /** Declares the device a request/response channel whose replies come inline in `done`. */
  answersInline?: boolean;
  /** `start()` waits for this promise (a slow device). */
  startGate?: Promise<void>;
  /** Declares the device a chat app whose bursts are answered in one turn. */
  coalesces?: boolean;
}

/** Records sends, turn events, starts and stops. */
export class RecordingDevice implements Device {
  readonly type = "test";
  readonly description: string;
  readonly sent: OutputEvent[] = [];
  readonly turnEvents: TurnEvent[] = [];
  readonly calls: Array<{ name: string; args: Record<string, unknown>; source: string }> = [];
  started = 0;
  stopped = 0;
  /** Sends that were started but never settled (with `hangSend`). */
  hung = 0;
  readonly answersInline: boolean;
  readonly coalesces: boolean;
  #context: DeviceContext | undefined;
  #doneWaiters = new Map<string, (result: TurnResult) => void>();

  constructor(readonly name: string, private readonly options: RecordingOptions = {}) {
    this.description = `test device ${name}`;
    this.answersInline = options.answersInline ?? false;
    this.coalesces = options.coalesces ?? false;
  }

  /** Made on first use from the options, so every device-table change sees the same objects. */
  #tools: readonly DeviceTool[] | undefined;

  tools(): readonly DeviceTool[] {
    this.#tools ??= (this.options.tools ?? []).map((spec) =>
      "execute" in spec ? spec : {
        ...spec,
        execute: (args: Record<string, unknown>, context: ToolContext) => {
          this.calls.push({ name: spec.name, args, source: context.source });
          return `${this.name} ran ${spec.name}`;
        },
      }
    );
    return this.#tools;
  }

  async start(context: DeviceContext): Promise<void> {
    await this.options.startGate;
    if (this.options.failStart) throw new Error(this.options.failStart);
    this.started++;
    this.#context = context;
  }

  stop(): Promise<void> {
    this.stopped++;
    return Promise.resolve();
  }

  outputCapabilities(): number {
    return this.options.capabilities ?? Capability.Text;
  }

  send(event: OutputEvent): Promise<void> {
    if (this.options.failSend) return Promise.reject(new Error(this.options.failSend));
    if (this.options.refuseSend) return Promise.reject(new Undeliverable(this.options.refuseSend));
    if (this.options.hangSend) {
      this.hung++;
      return new Promise<void>(() => {});
    }
    this.sent.push(event);
    return Promise.resolve();
  }

  onTurnEvent(event: TurnEvent): void {
    this.turnEvents.push(event);
    if (event.type === "done") this.#doneWaiters.get(event.eventId)?.(event.result);
  }

  /** The result of the turn for `eventId`, once its `done` event arrived; fails after `limitMs` naming the event. */
  doneFor(eventId: string, limitMs = 5_000): Promise<TurnResult> {
    const seen = this.turnEvents.find((e) => e.type === "done" && e.eventId === eventId);
    if (seen?.type === "done") return Promise.resolve(seen.result);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#doneWaiters.delete(eventId);
        reject(new Error(`device ${this.name}: no done event for ${eventId} within ${limitMs} ms`));
      }, limitMs);
      this.#doneWaiters.set(eventId, (result) => {
        clearTimeout(timer);
        this.#doneWaiters.delete(eventId);
        resolve(result);
      });
    });
  }

  /** Emits a message as this device, e.g. `emit("hi", "alice", "tv:room1")`; the owner's unless `trust` says. */
  emit(text: string, sender = "owner", source = this.name, type = "message", trust: Trust = "owner"): InputEvent {
    if (!this.#context) throw new Error(`device ${this.name} is not started`);
    return this.#context.emit({
      source,
      sender,
      trust,
      type,
      payload: type === "message" ? { text } : { value: text },
    });
  }

  /** Emits a message with more than text (attachments, a display name) as the owner of this device. */
  emitPayload(payload: Record<string, unknown>, sender = "owner", trust: Trust = "owner"): InputEvent {
    if (!this.#context) throw new Error(`device ${this.name} is not started`);
    return this.#context.emit({ source: this.name, sender, trust, type: "message", payload });
  }
}
