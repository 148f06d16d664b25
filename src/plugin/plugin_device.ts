/**
 * A plugin as an IO device: it offers its tools through the device table (so a reload swaps them together with the
 * devices, in the IOManager's one serialised change) and has no output channel of its own yet.
 *
 * @module
 */

import type { Device, DeviceContext } from "../io/device.ts";
import type { OutputEvent } from "../io/event.ts";
import type { Tool, ToolContext, ToolSpec } from "../tools/tool.ts";

/** The device of one plugin (`plugin-<name>`). */
export class PluginDevice implements Device {
  readonly type = "plugin";
  readonly name: string;
  readonly description: string;
  #tools: readonly Tool[];

  /**
   * @example
   * ```ts
   * const device = new PluginDevice("thermo", "Room temperatures", tools);
   * await io.setDevices("plugins", [device]);
   * ```
   */
  constructor(plugin: string, description: string, tools: readonly Tool[]) {
    this.name = `plugin-${plugin}`;
    this.description = description;
    this.#tools = tools;
  }

  tools(): ToolSpec[] {
    return this.#tools.map(({ execute: _execute, ...spec }) => spec);
  }

  execute(name: string, args: Record<string, unknown>, context: ToolContext): unknown {
    const tool = this.#tools.find((candidate) => candidate.name === name);
    if (!tool) throw new Error(`${this.name} has no tool ${name}`);
    return tool.execute(args, context);
  }

  start(_context: DeviceContext): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  outputCapabilities(): number {
    return 0;
  }

  send(_event: OutputEvent): Promise<void> {
    return Promise.reject(new Error(`${this.name} has no output channel`));
  }

  status(): Record<string, unknown> {
    return { tools: this.#tools.map((tool) => tool.name) };
  }
}
