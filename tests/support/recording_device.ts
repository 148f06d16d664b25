/**
 * A Device that records what it is sent and lets a test emit inputs; for IO and agent tests.
 *
 * @module
 */

import type { Device, DeviceContext, TurnEvent } from "../../src/io/device.ts";
import { Capability, type InputEvent, type OutputEvent } from "../../src/io/event.ts";
import type { ToolContext, ToolSpec } from "../../src/tools/tool.ts";

/** Options of {@link RecordingDevice}. */
export interface RecordingOptions {
  capabilities?: number;
  tools?: ToolSpec[];
  /** Makes `start()` reject with this message. */
  failStart?: string;
  /** Makes `send()` reject with this message. */
  failSend?: string;
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
  #context: DeviceContext | undefined;

  constructor(readonly name: string, private readonly options: RecordingOptions = {}) {
    this.description = `test device ${name}`;
  }

  tools(): ToolSpec[] {
    return this.options.tools ?? [];
  }

  execute(name: string, args: Record<string, unknown>, context: ToolContext): unknown {
    this.calls.push({ name, args, source: context.source });
    return `${this.name} ran ${name}`;
  }

  start(context: DeviceContext): Promise<void> {
    if (this.options.failStart) return Promise.reject(new Error(this.options.failStart));
    this.started++;
    this.#context = context;
    return Promise.resolve();
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
    this.sent.push(event);
    return Promise.resolve();
  }

  onTurnEvent(event: TurnEvent): void {
    this.turnEvents.push(event);
  }

  /** Emits a message as this device, e.g. `emit("hi", "alice", "tv:room1")`. */
  emit(text: string, sender = "owner", source = this.name, type = "message"): InputEvent {
    if (!this.#context) throw new Error(`device ${this.name} is not started`);
    return this.#context.emit({ source, sender, type, payload: type === "message" ? { text } : { value: text } });
  }
}
