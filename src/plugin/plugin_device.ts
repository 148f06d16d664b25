/**
 * A plugin as an IO device (`plugin-<name>`): it offers its tools through the device table (so a reload swaps them
 * together with the devices, in the IOManager's one serialised change) and, when its manifest declares `io`, is a
 * channel of its own — outputs go to a Lua function, and its script may emit inputs (`channel.emit`), from a tool, an
 * output or a periodic poll. Inputs from a plugin are trusted as `guest`: a script's words are never the household's.
 *
 * @module
 */

import type { Device, DeviceContext } from "../io/device.ts";
import type { OutputEvent } from "../io/event.ts";
import { untrustedLine } from "../text/untrusted.ts";
import type { Tool } from "../tools/tool.ts";

/**
 * The device name of a plugin: `plugin-` and its name, with what a device name cannot hold (a skill named by its
 * folder may have dots or spaces) as `_`.
 *
 * @example
 * ```ts
 * pluginDeviceName("My Notes.v2"); // "plugin-My_Notes_v2"
 * ```
 */
export function pluginDeviceName(plugin: string): string {
  return `plugin-${plugin.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** What a plugin's channel does; all optional (a plugin with only tools has none). */
export interface PluginChannel {
  /** Bitmask of `Capability`. */
  capabilities: number;
  /** Shows one output (a call into the plugin's Lua). */
  onOutput?: (event: OutputEvent) => Promise<void>;
  /** Runs every `everyMs` while the device is started; a failure is logged, never fatal. */
  poll?: { run: () => Promise<void>; everyMs: number };
  /** Told when the device starts and stops (the script's `channel.emit` needs the context). */
  onStart?: (context: DeviceContext) => void;
  onStop?: () => void;
}

/** The device of one plugin. */
export class PluginDevice implements Device {
  readonly type = "plugin";
  readonly name: string;
  readonly description: string;
  #tools: readonly Tool[];
  #channel: PluginChannel;
  #timer: ReturnType<typeof setInterval> | undefined;
  #polling = false;
  #polls = { runs: 0, failures: 0 };

  /**
   * @example
   * ```ts
   * import type { IOManager } from "../io/io_manager.ts";
   *
   * declare const io: IOManager;
   * const device = new PluginDevice("thermo", "Room temperatures", [{
   *   name: "thermo_read",
   *   description: "Reads the temperature of every room",
   *   parameters: { type: "object", properties: {} },
   *   allow: "household",
   *   execute: () => ({ living_room: 21.5 }),
   * }]);
   * await io.setDevices("plugins", [device]);
   * ```
   */
  constructor(
    plugin: string,
    description: string,
    tools: readonly Tool[],
    channel: PluginChannel = { capabilities: 0 },
  ) {
    this.name = pluginDeviceName(plugin);
    // The plugin's words, shown to the model in the channel list: one line, markers escaped, as message text.
    this.description = untrustedLine(description);
    this.#tools = tools;
    this.#channel = channel;
  }

  /** The plugin's tools as built when it was loaded, handlers and all (each a call into its Lua or an exec). */
  tools(): readonly Tool[] {
    return this.#tools;
  }

  start(context: DeviceContext): Promise<void> {
    this.#channel.onStart?.(context);
    const poll = this.#channel.poll;
    if (poll) {
      this.#timer = setInterval(() => {
        if (this.#polling) return; // one poll at a time
        this.#polling = true;
        this.#polls.runs++;
        poll.run().catch((error) => {
          this.#polls.failures++;
          context.log.warning("{device}: its poll failed: {error}", {
            device: this.name,
            error: (error as Error).message,
          });
        }).finally(() => (this.#polling = false));
      }, poll.everyMs);
    }
    return Promise.resolve();
  }

  stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#channel.onStop?.();
    return Promise.resolve();
  }

  outputCapabilities(): number {
    return this.#channel.capabilities;
  }

  send(event: OutputEvent): Promise<void> {
    const show = this.#channel.onOutput;
    if (!show) return Promise.reject(new Error(`${this.name} has no output channel`));
    return show(event);
  }

  status(): Record<string, unknown> {
    return {
      tools: this.#tools.map((tool) => tool.name),
      ...(this.#channel.poll ? { polls: { ...this.#polls } } : {}),
    };
  }
}
