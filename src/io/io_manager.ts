/**
 * IOManager: the only path in (input queue) and out (output queue) of the agent, the device table, and the
 * route table.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { Tool } from "../tools/tool.ts";
import { TOOL_NAME } from "../tools/tool.ts";
import { AsyncQueue } from "./async_queue.ts";
import type { Device, DeviceContext, InputDraft, TurnEvent } from "./device.ts";
import { capabilityNames, deviceOf, type InputEvent, type OutputEvent, REQUIRED_CAPABILITY } from "./event.ts";
import type { RouteTable } from "./route_table.ts";

/** A channel as `output_list_channels` and `/api/channels` show it. */
export interface ChannelInfo {
  name: string;
  type: string;
  description: string;
  capabilities: string[];
}

/** Options of {@link IOManager}. */
export interface IOManagerOptions {
  clock: Clock;
  routes: RouteTable;
  tools: ToolRegistry;
  logger: Logger;
  /** Id generator for input events; random UUIDs by default. */
  newId?: () => string;
}

/** Why an output could not go out. Callers catch it to tell the LLM or the user. */
export class ChannelError extends Error {
  /**
   * @example
   * ```ts
   * throw new ChannelError('Channel "tv" does not exist; channels: http');
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "ChannelError";
  }
}

/** The IO layer's hub. */
export class IOManager {
  #devices: ReadonlyMap<string, Device> = new Map();
  #routes: RouteTable;
  #inputs = new AsyncQueue<InputEvent>();
  #outputTail: Promise<unknown> = Promise.resolve();
  #options: IOManagerOptions;
  #newId: () => string;

  /**
   * @example
   * ```ts
   * const io = new IOManager({ clock: systemClock, routes, tools, logger: log("io") });
   * ```
   */
  constructor(options: IOManagerOptions) {
    this.#options = options;
    this.#routes = options.routes;
    this.#newId = options.newId ?? (() => crypto.randomUUID());
  }

  /** The route table. */
  get routes(): RouteTable {
    return this.#routes;
  }

  /** Inputs waiting for the agent. */
  get queued(): number {
    return this.#inputs.size;
  }

  /**
   * Queues an input. Nothing is dropped; the agent takes inputs in arrival order.
   *
   * @example
   * ```ts
   * io.submit({ source: "http", sender: "owner", type: "message", payload: { text: "hi" } });
   * ```
   */
  submit(draft: InputDraft): InputEvent {
    const event: InputEvent = { id: this.#newId(), time: this.#options.clock.now(), ...draft };
    this.#inputs.push(event);
    return event;
  }

  /** The next input; `undefined` when closed or `signal` aborts. */
  next(signal?: AbortSignal): Promise<InputEvent | undefined> {
    return this.#inputs.next(signal);
  }

  /**
   * Swaps the device table (and, when given, the route table) atomically: devices not yet running are started
   * first, their tools registered, then both tables are swapped in one step, then the devices that left are
   * stopped. If a new device fails to start, the ones started are stopped again and the old tables stay.
   *
   * @example
   * ```ts
   * await io.replaceDevices([httpDevice, qqDevice], newRoutes);
   * ```
   */
  async replaceDevices(devices: readonly Device[], routes?: RouteTable): Promise<void> {
    const next = new Map<string, Device>();
    for (const device of devices) {
      if (!/^[A-Za-z0-9_-]+$/.test(device.name)) {
        throw new TypeError(
          `Device name ${JSON.stringify(device.name)} is invalid: allowed are a-z, A-Z, 0-9, _ and -`,
        );
      }
      if (next.has(device.name)) throw new TypeError(`Two devices are named "${device.name}"`);
      for (const spec of device.tools()) {
        if (!TOOL_NAME.test(spec.name)) {
          throw new TypeError(
            `Device "${device.name}" offers a tool with an invalid name ${JSON.stringify(spec.name)}`,
          );
        }
      }
      next.set(device.name, device);
    }
    const current = new Set(this.#devices.values());
    const started: Device[] = [];
    try {
      for (const device of next.values()) {
        if (current.has(device)) continue;
        await device.start(this.#contextFor(device));
        started.push(device);
      }
      for (const device of next.values()) {
        this.#options.tools.replaceOwner(`device:${device.name}`, this.#toolsOf(device));
      }
    } catch (error) {
      for (const device of started) await device.stop().catch(() => {});
      // Put the tool table back as it was: new devices' tools out, old devices' tools in.
      for (const device of next.values()) this.#options.tools.replaceOwner(`device:${device.name}`, []);
      for (const device of this.#devices.values()) {
        this.#options.tools.replaceOwner(`device:${device.name}`, this.#toolsOf(device));
      }
      throw error;
    }
    for (const device of this.#devices.values()) {
      if (!next.has(device.name)) this.#options.tools.replaceOwner(`device:${device.name}`, []);
    }
    const previous = this.#devices;
    this.#devices = next;
    if (routes) this.#routes = routes;
    for (const device of previous.values()) {
      if (next.get(device.name) === device) continue;
      await device.stop().catch((error) =>
        this.#options.logger.warning("Device {name} did not stop cleanly: {error}", { name: device.name, error })
      );
    }
  }

  #contextFor(device: Device): DeviceContext {
    return {
      emit: (draft) => this.submit(draft),
      clock: this.#options.clock,
      log: this.#options.logger.getChild(device.name),
    };
  }

  #toolsOf(device: Device): Tool[] {
    return device.tools().map((spec) => ({
      ...spec,
      execute: (args, context) => device.execute(spec.name, args, context),
    }));
  }

  /** The devices, as channels. */
  channels(): ChannelInfo[] {
    return [...this.#devices.values()].map((device) => ({
      name: device.name,
      type: device.type,
      description: device.description,
      capabilities: capabilityNames(device.outputCapabilities()),
    }));
  }

  /**
   * Why `channel` cannot carry `type`, or `undefined` when it can.
   *
   * @example
   * ```ts
   * io.checkChannel("http", "image"); // 'Channel "http" cannot carry image output; it carries: text, structured'
   * ```
   */
  checkChannel(channel: string, type: OutputEvent["type"]): string | undefined {
    const device = this.#devices.get(deviceOf(channel));
    if (!device) {
      const names = [...this.#devices.keys()].join(", ") || "none";
      return `Channel ${JSON.stringify(channel)} does not exist; channels: ${names}`;
    }
    const mask = device.outputCapabilities();
    if ((mask & REQUIRED_CAPABILITY[type]) === 0) {
      return `Channel ${JSON.stringify(channel)} cannot carry ${type} output; it carries: ${
        capabilityNames(mask).join(", ") || "nothing"
      }`;
    }
    return undefined;
  }

  /**
   * Queues an output; the returned promise settles when it was delivered, or rejects with {@link ChannelError}.
   * Outputs are delivered one at a time, in the order they were queued.
   *
   * @example
   * ```ts
   * await io.send({ target: "http", type: "message", payload: { text: "Done" } });
   * ```
   */
  send(event: OutputEvent): Promise<void> {
    const problem = this.checkChannel(event.target, event.type);
    if (problem) return Promise.reject(new ChannelError(problem));
    const delivery = this.#outputTail.then(async () => {
      const device = this.#devices.get(deviceOf(event.target));
      if (!device) throw new ChannelError(`Channel ${JSON.stringify(event.target)} went away before delivery`);
      try {
        await device.send(event);
      } catch (error) {
        throw new ChannelError(
          `Channel ${JSON.stringify(event.target)} failed to deliver: ${(error as Error).message}`,
        );
      }
    });
    this.#outputTail = delivery.catch(() => {});
    return delivery;
  }

  /** Tells the device an input came from how its turn is going. */
  report(source: string, event: TurnEvent): void {
    const device = this.#devices.get(deviceOf(source));
    try {
      device?.onTurnEvent?.(event);
    } catch (error) {
      this.#options.logger.warning("Device {name} failed on a turn event: {error}", { name: device?.name, error });
    }
  }

  /** Stops taking inputs, waits for queued outputs, stops every device. */
  async close(): Promise<void> {
    this.#inputs.close();
    await this.#outputTail;
    await this.replaceDevices([]);
  }
}
