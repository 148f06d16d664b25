/**
 * State changes of `subscribe` entities as device events: `ha.state`, one source per entity (`ha:<entity_id>`), so
 * the agent's event log keeps one row per entity however chatty it is; a `turns` entity's change is a message to the
 * butler instead. When the input queue is full, changes wait here coalesced per entity (the latest state, the first
 * `from`, a count) and go, oldest first, as the queue takes them — a burst of a thousand changes never floods the
 * queue nor loses an entity's last state.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, sleepWith } from "../../clock.ts";
import type { DeviceContext, InputDraft } from "../../io/device.ts";
import { LaneFullError } from "../../io/fair_queue.ts";
import { waitForRoom } from "../../io/lane_room.ts";
import { ShuttingDown } from "../../io/turn_error.ts";
import type { HaState } from "./ha_state.ts";

/** Options of {@link HaStateEvents}. */
export interface HaStateEventsOptions {
  clock: Clock;
  logger: Logger;
  /** Whether an entity's changes become `ha.state` events. */
  subscribed: (entityId: string) => boolean;
  /** Whether an entity's changes are messages to the butler. */
  turns: (entityId: string) => boolean;
  /** An entity's name now, for the event. */
  nameOf: (entityId: string) => string;
}

/** A state change that waits for the input queue. */
interface HeldChange {
  draft: InputDraft;
  changes: number;
}

/** The device's state events, from a change to the input queue. */
export class HaStateEvents {
  readonly #options: HaStateEventsOptions;
  #context: DeviceContext | undefined;
  #abort = new AbortController();
  #events = 0;
  #coalesced = 0;
  #held = new Map<string, HeldChange>();
  #flushing: Promise<void> | undefined;

  /** Events go nowhere until {@link HaStateEvents.attach}. */
  constructor(options: HaStateEventsOptions) {
    this.#options = options;
  }

  /** `ha.state` events handed in. */
  get sent(): number {
    return this.#events;
  }

  /** State changes folded into a waiting one of the same entity. */
  get coalesced(): number {
    return this.#coalesced;
  }

  /** State changes waiting for the input queue. */
  get waiting(): number {
    return this.#held.size;
  }

  /** While changes wait for the input queue: the run that hands them in, else undefined. */
  get flushing(): Promise<void> | undefined {
    return this.#flushing;
  }

  /** Starts handing events to `context` (the device started). */
  attach(context: DeviceContext): void {
    this.#context = context;
    this.#abort = new AbortController();
  }

  /** Stops waiting for the input queue; what still waits is dropped. */
  abort(reason: Error): void {
    this.#abort.abort(reason);
  }

  /** Forgets the context (the device stopped): changes from now on go nowhere. */
  detach(): void {
    this.#context = undefined;
  }

  /** A state change of a `subscribe` entity becomes an `ha.state` event (attribute-only changes do not). */
  changed(entityId: string, before: HaState | undefined, after: HaState | undefined): void {
    const turns = this.#options.turns(entityId);
    if (!turns && !this.#options.subscribed(entityId)) return;
    const from = before?.state ?? null;
    const to = after?.state ?? null;
    if (from === to) return;
    if (turns) {
      // A rule: the change is a message (a turn), not only a record; a full lane falls back to the record below.
      const at = after?.last_changed ?? new Date(this.#options.clock.now()).toISOString();
      const name = this.#options.nameOf(entityId);
      const text = `Home Assistant: ${name} (${entityId}) changed from ${from ?? "unknown"} to ` +
        `${to ?? "unknown"} at ${at}`;
      const message: InputDraft = {
        source: `ha:${entityId}`,
        sender: "home-assistant",
        trust: "household",
        type: "message",
        payload: { text },
      };
      if (this.#emit(message) === "sent") return;
    }
    const draft: InputDraft = {
      source: `ha:${entityId}`,
      sender: "home-assistant",
      trust: "household",
      type: "ha.state",
      payload: {
        entity_id: entityId,
        name: this.#options.nameOf(entityId),
        from,
        to,
        at: after?.last_changed ?? new Date(this.#options.clock.now()).toISOString(),
      },
    };
    const held = this.#held.get(entityId);
    if (held) {
      // Folded into the one that waits: the latest state, from where it was before the first.
      this.#held.delete(entityId);
      this.#held.set(entityId, {
        draft: { ...draft, payload: { ...draft.payload, from: held.draft.payload.from, changes: held.changes + 1 } },
        changes: held.changes + 1,
      });
      this.#coalesced++;
      return;
    }
    if (this.#held.size === 0 && this.#emit(draft) !== "full") return;
    this.#held.set(entityId, { draft, changes: 1 });
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
  }

  /** Hands one event in: "sent", "full" (the input queue refused it for now), or "dropped". */
  #emit(draft: InputDraft): "sent" | "full" | "dropped" {
    const context = this.#context;
    if (!context) return "dropped";
    try {
      context.emit(draft);
      this.#events++;
      return "sent";
    } catch (error) {
      if (error instanceof LaneFullError) return "full";
      if (!(error instanceof ShuttingDown)) {
        this.#options.logger.warning("A Home Assistant state event was refused: {error}", { error });
      }
      return "dropped";
    }
  }

  /** Hands in the changes that wait, oldest first, as the input queue takes them. */
  async #flush(): Promise<void> {
    const signal = this.#abort.signal;
    let refused = 0;
    while (this.#held.size > 0 && !signal.aborted) {
      const [entityId, held] = this.#held.entries().next().value!;
      const outcome = this.#emit(held.draft);
      if (outcome !== "full") {
        this.#held.delete(entityId);
        refused = 0;
        continue;
      }
      refused++;
      try {
        // A reader that takes inputs as they come frees the lane within a few microtasks; a slower one is polled.
        await waitForRoom(refused, (ms) => sleepWith(this.#options.clock, ms, signal));
      } catch {
        break;
      }
    }
    if (signal.aborted) this.#held.clear();
  }
}
