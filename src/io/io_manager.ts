/**
 * IOManager: the only path in (the fair input queue: the owner first, other senders in turn, a bound per sender) and
 * out (one ordered outbound queue per device) of the agent, the device table, and the route table. It is a
 * {@link Service}: started with the initial devices, stopped with a deadline.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, deadline } from "../clock.ts";
import type { AddressBook } from "../config/people.ts";
import type { Service } from "../service/service.ts";
import { deviceOwner, type ToolRegistry } from "../tools/registry.ts";
import type { Tool } from "../tools/tool.ts";
import { TOOL_NAME } from "../tools/tool.ts";
import type { MessageAttachment } from "./message_payload.ts";
import type { Device, DeviceContext, DeviceGroup, InputDraft, TurnEvent } from "./device.ts";
import { type UndeliverablePolicy, Undelivered } from "./undelivered.ts";
import type { HomeTarget } from "./home_target.ts";
import {
  capabilityNames,
  deviceOf,
  type InputEvent,
  type InputRef,
  type OutputEvent,
  type OutputType,
  refOf,
  REQUIRED_CAPABILITY,
} from "./event.ts";
import { FairQueue } from "./fair_queue.ts";
import { ChannelError, Outbox } from "./outbox.ts";
import type { RouteTable } from "./route_table.ts";
import { ShuttingDown } from "./turn_error.ts";
import { readMessage } from "./message_payload.ts";

export { ChannelError } from "./outbox.ts";
export { LaneFullError } from "./fair_queue.ts";

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
  /** Longest a device's `send()` may take before the output is given up (`io.send_timeout`); 30 s by default. */
  sendTimeoutMs?: number;
  /** Devices the service starts with (the `start()` of the {@link Service}). */
  devices?: readonly Device[];
  /** Id generator for input events; random UUIDs by default. */
  newId?: () => string;
  /** Most inputs one sender may have waiting (50); more is refused with `LaneFullError`. */
  perSender?: number;
  /** `people:` (`config/people.ts`): a listed sender is named by their person's name wherever they write. */
  people?: Pick<AddressBook, "personOf">;
  /** What happens to an output its channel refused for good (`Undeliverable`), see {@link UndeliverablePolicy}. */
  undeliverable?: UndeliverablePolicy;
}

/** How long one heartbeat waits for the devices' heartbeats (a device's bookkeeping; never the network). */
const HEARTBEAT_DEADLINE_MS = 5_000;

/** The IO layer's hub. */
export class IOManager implements Service {
  readonly name = "io";
  /** Devices whose heartbeat is still running (a hung one is not called again on top of itself). */
  readonly #beating = new Set<Device>();
  #devices: ReadonlyMap<string, Device> = new Map();
  /** The device set by owner (`core`: the daemon's own; `plugins`: the plugin service's), composed on each change. */
  #groups = new Map<DeviceGroup, readonly Device[]>();
  /** Device-table changes run one after the other: a second waits for the first's awaited starts and stops. */
  #changes: Promise<unknown> = Promise.resolve();
  #outboxes = new Map<Device, Outbox>();
  #routes: RouteTable;
  #inputs: FairQueue<InputEvent>;
  #options: IOManagerOptions;
  #newId: () => string;
  #inputCount = 0;
  #initial: readonly Device[] | undefined;
  #undelivered: Undelivered | undefined;

  /**
   * @example
   * ```ts
   * import { HttpDevice } from "../api/http_device.ts";
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   * import { ToolRegistry } from "../tools/registry.ts";
   * import { RouteTable } from "./route_table.ts";
   *
   * const io = new IOManager({
   *   clock: systemClock,
   *   routes: new RouteTable({}, {}, undefined),
   *   tools: new ToolRegistry(),
   *   logger: log("io"),
   *   devices: [new HttpDevice()],
   * });
   * await io.start();
   * ```
   */
  constructor(options: IOManagerOptions) {
    this.#options = options;
    this.#routes = options.routes;
    this.#newId = options.newId ?? (() => crypto.randomUUID());
    // A sender's lane is their identity (a token's name, a QQ id), across every channel. A schedule's firings have a
    // lane of their own, beside their creator's, and never go first: the owner's schedules (which the model may set)
    // cannot keep everyone else waiting, however many fire at once.
    this.#inputs = new FairQueue<InputEvent>({
      laneOf: (event) => firedBySchedule(event) ? `timer:${event.sender}` : event.sender,
      first: (event) => event.trust === "owner" && !firedBySchedule(event),
      ...(options.perSender === undefined ? {} : { perSender: options.perSender }),
    });
    if (options.undeliverable) {
      this.#undelivered = new Undelivered({
        policy: options.undeliverable,
        clock: options.clock,
        logger: options.logger,
      });
    }
  }

  get #sendTimeoutMs(): number {
    return this.#options.sendTimeoutMs ?? 30_000;
  }

  /** The route table. */
  get routes(): RouteTable {
    return this.#routes;
  }

  /** Inputs waiting for the agent. */
  get queued(): number {
    return this.#inputs.size;
  }

  /** Starts the initial devices (the `core` group). */
  async start(): Promise<void> {
    await this.setDevices("core", this.#initial ?? this.#options.devices ?? []);
  }

  /**
   * The devices {@link IOManager.start} starts, for a daemon that makes the IO manager before its devices (they may
   * ask it about channels while they are made).
   *
   * @example
   * ```ts
   * import type { Device } from "./device.ts";
   *
   * declare const io: IOManager;
   * declare const devices: Device[];
   * io.startWith(devices);
   * await io.start();
   * ```
   */
  startWith(devices: readonly Device[]): void {
    this.#initial = devices;
  }

  /**
   * Replaces the devices of one owner (`group`), keeping every other owner's, as one serialised change of the whole
   * table (see {@link IOManager.replaceDevices}); on failure nothing changes.
   *
   * @example
   * ```ts
   * import type { Device } from "./device.ts";
   *
   * declare const io: IOManager;
   * declare const thermoDevice: Device; // a plugin's device
   * await io.setDevices("plugins", [thermoDevice]);
   * ```
   */
  setDevices(group: DeviceGroup, devices: readonly Device[], routes?: RouteTable): Promise<void> {
    return this.#serialised(async () => {
      const groups = new Map(this.#groups);
      groups.set(group, [...devices]);
      await this.#replace([...groups.values()].flat(), routes);
      this.#groups = groups;
    });
  }

  #serialised(change: () => Promise<void>): Promise<void> {
    const run = this.#changes.then(change);
    this.#changes = run.catch(() => {});
    return run;
  }

  /** Stops every device (bounded); see {@link IOManager.close}. */
  stop(): Promise<void> {
    return this.close();
  }

  /**
   * Runs every device's heartbeat side by side under one deadline: one device's failure, or a heartbeat that hangs,
   * is reported and never holds back the others (the timer's watchdog among them). A device whose last heartbeat has
   * not ended yet is skipped, not called again on top of it.
   */
  async heartbeat(): Promise<void> {
    const failures: string[] = [];
    const limit = deadline(this.#options.clock, HEARTBEAT_DEADLINE_MS);
    try {
      await Promise.all([...this.#devices.values()].map(async (device) => {
        if (!device.heartbeat) return;
        if (this.#beating.has(device)) return void failures.push(`${device.name}: its last heartbeat has not ended`);
        const beat = Promise.resolve().then(() => device.heartbeat!()).finally(() => this.#beating.delete(device));
        this.#beating.add(device);
        try {
          if ((await limit.race(beat)).late) {
            failures.push(`${device.name}: its heartbeat did not end within ${HEARTBEAT_DEADLINE_MS / 1_000} s`);
          }
        } catch (error) {
          failures.push(`${device.name}: ${(error as Error)?.message ?? String(error)}`);
        }
      }));
    } finally {
      limit.cancel();
    }
    if (failures.length) throw new Error(`device heartbeat failed (${failures.join("; ")})`);
  }

  /** Devices with their outbound queue counters and own status. */
  status(): Record<string, unknown> {
    return {
      inputs: this.#inputCount,
      queued_inputs: this.#inputs.size,
      devices: Object.fromEntries(
        [...this.#devices.values()].map((device) => [device.name, {
          type: device.type,
          outbox: this.#outboxes.get(device)?.status(),
          ...device.status?.(),
        }]),
      ),
      undeliverable: this.#undelivered?.status() ?? [],
    };
  }

  /**
   * Queues an input in its sender's lane. Nothing queued is dropped; the agent takes the owner's inputs first and
   * everyone else's in turn, each sender's in arrival order (see `fair_queue.ts`). Throws `LaneFullError` (a
   * `RangeError`) when the sender already has `perSender` inputs waiting, {@link ShuttingDown} once the input side is closed
   * (homed is shutting down).
   *
   * @example
   * ```ts
   * declare const io: IOManager;
   * io.submit({ source: "http", sender: "owner", trust: "owner", type: "message", payload: { text: "hi" } });
   * ```
   */
  submit(draft: InputDraft): InputEvent {
    if (this.#inputs.closed) throw new ShuttingDown();
    const event: InputEvent = { id: this.#newId(), time: this.#options.clock.now(), ...draft };
    // One person across chats: their conversation, reminders and what they may read follow the person. The trust
    // stays the chat's, which authenticated them (and admits them by the same list, see `withPeople`).
    const person = this.#options.people?.personOf(draft.source, draft.sender);
    if (person && person.name !== draft.sender) {
      event.sender = person.name;
      event.address = draft.sender;
    }
    this.#inputs.push(event);
    this.#inputCount++;
    return event;
  }

  /** The next input; `undefined` when closed or `signal` has aborted (even with inputs still queued). */
  next(signal?: AbortSignal): Promise<InputEvent | undefined> {
    return this.#inputs.next(signal);
  }

  /**
   * For a message from a device that {@link Device.coalesces}: the messages of the same sender on the same source
   * that wait right behind it (at most `max`), taken out of the queue to be answered in the same turn; none for
   * other devices, streamed messages, or when something else of that sender waits in between.
   *
   * @example
   * ```ts
   * declare const io: IOManager;
   * const first = await io.next();
   * const burst = first ? io.takeBurst(first) : []; // the lines sent right after it, for one answer
   * ```
   */
  takeBurst(event: InputEvent, max = 10): InputEvent[] {
    const device = this.#devices.get(deviceOf(event.source));
    if (!device?.coalesces || event.type !== "message" || readMessage(event.payload).stream) return [];
    return this.#inputs.takeFollowing(
      event.sender,
      (next) =>
        next.type === "message" && next.source === event.source && next.trust === event.trust &&
        !readMessage(next.payload).stream && next.reply === event.reply,
      max,
    );
  }

  /** Refuses further inputs and hands back the ones still queued, oldest first (shutdown answers them). */
  closeInputs(): InputEvent[] {
    this.#inputs.close();
    return this.#inputs.drain();
  }

  /**
   * Swaps the device table (and, when given, the route table) atomically: devices not yet running are started
   * first, their tools registered, then both tables are swapped in one step, then the devices that left are
   * stopped. If a new device fails to start, the ones started are stopped again and the old tables stay. Changes are
   * serialised: one that arrives while another awaits a device's start runs after it, never interleaved.
   *
   * @example
   * ```ts
   * import type { Device } from "./device.ts";
   * import { RouteTable } from "./route_table.ts";
   *
   * declare const io: IOManager;
   * declare const httpDevice: Device;
   * declare const qqDevice: Device;
   * const newRoutes = new RouteTable({ "qq:group:": "qq:private:10001" }, {}, undefined);
   * await io.replaceDevices([httpDevice, qqDevice], newRoutes);
   * ```
   */
  replaceDevices(devices: readonly Device[], routes?: RouteTable): Promise<void> {
    return this.#serialised(async () => {
      await this.#replace(devices, routes);
      this.#groups = new Map([["core", [...devices]]]);
    });
  }

  async #replace(devices: readonly Device[], routes?: RouteTable): Promise<void> {
    const next = new Map<string, Device>();
    for (const device of devices) {
      if (!/^[A-Za-z0-9_-]+$/.test(device.name)) {
        throw new TypeError(
          `Device name ${JSON.stringify(device.name)} is invalid: allowed are a-z, A-Z, 0-9, _ and -`,
        );
      }
      if (next.has(device.name)) throw new TypeError(`Two devices are named "${device.name}"`);
      for (const tool of device.tools()) {
        if (!TOOL_NAME.test(tool.name)) {
          throw new TypeError(
            `Device "${device.name}" offers a tool with an invalid name ${JSON.stringify(tool.name)}`,
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
        this.#options.tools.replaceOwner(deviceOwner(device.name), this.#toolsOf(device));
      }
    } catch (error) {
      for (const device of started) await this.#stopDevice(device);
      // Put the tool table back as it was: new devices' tools out, old devices' tools in.
      for (const device of next.values()) this.#options.tools.replaceOwner(deviceOwner(device.name), []);
      for (const device of this.#devices.values()) {
        this.#options.tools.replaceOwner(deviceOwner(device.name), this.#toolsOf(device));
      }
      throw error;
    }
    for (const device of this.#devices.values()) {
      if (!next.has(device.name)) this.#options.tools.replaceOwner(deviceOwner(device.name), []);
    }
    for (const device of started) {
      this.#outboxes.set(
        device,
        new Outbox(device, this.#options.clock, this.#sendTimeoutMs),
      );
    }
    const previous = this.#devices;
    this.#devices = next;
    if (routes) this.#routes = routes;
    for (const device of previous.values()) {
      if (next.get(device.name) === device) continue;
      // What is queued for a device that left goes out first (within the send deadline), then it stops.
      await this.#stopDevice(device);
    }
  }

  /** Lets a device finish its queued outputs and stop, both within the send deadline; never throws. */
  async #stopDevice(device: Device): Promise<void> {
    const { clock, logger } = this.#options;
    const outbox = this.#outboxes.get(device);
    // One deadline for both: the queued outputs, then the stop.
    const limit = deadline(clock, this.#sendTimeoutMs);
    try {
      // Outputs held for a connection would wait for nothing: they are given up at once.
      if (outbox?.holding) outbox.abandon("the device was stopped while its outputs waited for it to be ready");
      if (outbox && (await limit.race(outbox.idle())).late) {
        outbox.abandon("the device was stopped before this output went out");
      }
      if ((await limit.race(device.stop())).late) {
        logger.warning("Device {name} did not stop in time", { name: device.name });
      }
    } catch (error) {
      logger.warning("Device {name} did not stop cleanly: {error}", { name: device.name, error });
    } finally {
      limit.cancel();
      this.#outboxes.delete(device);
    }
  }

  #contextFor(device: Device): DeviceContext {
    return {
      emit: (draft) => this.submit(draft),
      readyAgain: () => this.#outboxes.get(device)?.wake(),
      waiting: () => this.#outboxes.get(device)?.pending ?? 0,
      clock: this.#options.clock,
      log: this.#options.logger.getChild(device.name),
    };
  }

  /** A device's tools as the registry takes them: `household` where the device set no trust rule. */
  #toolsOf(device: Device): Tool[] {
    return device.tools().map((tool) => ({ ...tool, allow: tool.allow ?? "household" }));
  }

  /**
   * Every device's {@link HomeTarget}s, as each device sees them now (a device whose list throws is left out and
   * logged: one broken device never hides the others).
   */
  homeTargets(): HomeTarget[] {
    const targets: HomeTarget[] = [];
    for (const device of this.#devices.values()) {
      if (!device.homeTargets) continue;
      try {
        targets.push(...device.homeTargets());
      } catch (error) {
        this.#options.logger.warning("Device {name} could not list its home targets: {error}", {
          name: device.name,
          error,
        });
      }
    }
    return targets;
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
   * declare const io: IOManager; // with the http device running
   * io.checkChannel("http", "image"); // 'Channel "http" cannot carry image output; it carries: text, structured'
   * io.checkChannel("http", "message"); // undefined
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
   * Where the reply to `event` goes — decided here only: the sender's own remembered route (a route someone set for
   * themself never takes another's reply), else the source's route (configured or set at run time), else the
   * channel the device asked for (`event.reply`, a timer's schedule channel), else the source itself. A tool may
   * still move it during the turn (`output_set_channel`).
   *
   * @example
   * ```ts
   * declare const io: IOManager;
   * io.replyChannel({ source: "timer", sender: "owner", reply: "qq:private:10001" }); // "qq:private:10001"
   * ```
   */
  replyChannel(event: Pick<InputEvent, "source" | "sender" | "reply">): string {
    const routed = this.routes.resolve(event.source, event.sender);
    return routed === event.source && event.reply ? event.reply : routed;
  }

  /**
   * True when the reply to an input from `source` going to `channel` is handed over by the turn's `done` event
   * (a request/response device replying on its own channel), so it does not go through the outbound queue.
   */
  answersInline(source: string, channel: string): boolean {
    return channel === source && this.#devices.get(deviceOf(source))?.answersInline === true;
  }

  /**
   * Queues an output on its device's own queue; the promise settles when it was delivered, or rejects with
   * {@link ChannelError} (unknown channel, missing capability, device failure, or `io.send_timeout`). Outputs to one
   * device go out one at a time in the order queued; devices never wait for each other.
   *
   * @example
   * ```ts
   * declare const io: IOManager;
   * await io.send({ target: "http", type: "message", payload: { text: "Done" } });
   * ```
   */
  send(event: OutputEvent): Promise<void> {
    const problem = this.checkChannel(event.target, event.type);
    if (problem) return Promise.reject(new ChannelError(problem));
    const device = this.#devices.get(deviceOf(event.target))!;
    const outbox = this.#outboxes.get(device);
    if (!outbox) return Promise.reject(new ChannelError(`Channel ${JSON.stringify(event.target)} is not running`));
    const sent = outbox.push(event);
    return this.#undelivered ? sent.catch((error) => this.#undelivered!.handle(event, error, this)) : sent;
  }

  /**
   * Queues `event` on its channel's device directly, with no second chance for a refusal: how {@link Undelivered}
   * tries a recipient's other chats. Rejects with the reason when the channel cannot take it.
   */
  sendOnly(event: OutputEvent): Promise<void> {
    const problem = this.checkChannel(event.target, event.type);
    if (problem) return Promise.reject(new ChannelError(problem));
    const outbox = this.#outboxes.get(this.#devices.get(deviceOf(event.target))!);
    return outbox?.push(event) ??
      Promise.reject(new ChannelError(`Channel ${JSON.stringify(event.target)} is not running`));
  }

  /**
   * Sends the reply to `input` to `channel` ({@link IOManager.replyChannel}'s answer, perhaps moved by a tool during
   * the turn) and resolves with the channel that took it. When `channel` fails and is not the input's source, the
   * reply goes to the source instead — or is left to the turn's `done` event when the source answers inline.
   *
   * @example
   * ```ts
   * import type { InputEvent } from "./event.ts";
   *
   * declare const io: IOManager;
   * declare const input: InputEvent;
   * const channel = await io.reply(input, io.replyChannel(input), "message", { text: "Done" });
   * ```
   */
  async reply(
    input: InputEvent,
    channel: string,
    type: OutputType,
    payload: Record<string, unknown>,
  ): Promise<string> {
    const answer = { type, payload, replyTo: refOf(input), recipient: input.sender };
    try {
      await this.send({ target: channel, ...answer });
      return channel;
    } catch (error) {
      if (channel === input.source) throw error;
      this.#options.logger.warning("Reply to {channel} failed ({error}); sending it to {source} instead", {
        channel,
        error: (error as Error).message,
        source: input.source,
      });
      if (this.answersInline(input.source, input.source)) return input.source;
      await this.send({ target: input.source, ...answer });
      return input.source;
    }
  }

  /**
   * Asks the device an input came from where one of its attachments is ({@link Device.locate}); undefined when it
   * cannot tell or fails (logged).
   *
   * @example
   * ```ts
   * declare const io: IOManager;
   * await io.locate({ id: "e1", source: "qq:private:10001", sender: "10001" }, { kind: "audio", file: "a.silk" });
   * ```
   */
  async locate(input: InputRef, attachment: MessageAttachment): Promise<string | Uint8Array | undefined> {
    const device = this.#devices.get(deviceOf(input.source));
    if (!device?.locate) return undefined;
    try {
      return await device.locate(input, attachment);
    } catch (error) {
      this.#options.logger.info("Device {name} could not locate an attachment: {error}", {
        name: device.name,
        error: (error as Error).message,
      });
      return undefined;
    }
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

  /** Stops taking inputs, lets queued outputs go out (each device within the send deadline), stops every device. */
  async close(): Promise<void> {
    this.#inputs.close();
    await Promise.all([...this.#devices.values()].map((device) => this.#stopDevice(device)));
    for (const device of this.#devices.values()) this.#options.tools.replaceOwner(deviceOwner(device.name), []);
    this.#devices = new Map();
  }
}

/** An input a schedule fired (the timer device's `timer:<id>`), not a person's live message. */
function firedBySchedule(event: InputEvent): boolean {
  return event.source.startsWith("timer:");
}
