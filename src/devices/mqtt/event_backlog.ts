/**
 * The MQTT device's events on their way into homed's input queue. They are handed in as they arrive; when the queue
 * refuses one (homed's lane for `mqtt` is full while a turn runs), events wait here in arrival order, at most
 * {@link MQTT_BACKLOG_LIMIT}, the oldest dropped and counted beyond that. Unlike the serial device, which stops
 * reading its port until the queue takes the line, the MQTT device keeps reading the socket: an MQTT stream cannot be
 * paused — the broker drops QoS 0 messages for a client that does not read all the same, and a connection left unread
 * misses its keep-alive and is dropped.
 *
 * Apart from `mqtt_device.ts` because this bounded, ordered waiting is its own concern, whatever the events are.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { DeviceContext, InputDraft } from "../../io/device.ts";
import { LaneFullError } from "../../io/fair_queue.ts";
import { waitForRoom } from "../../io/lane_room.ts";
import { ShuttingDown } from "../../io/turn_error.ts";

/** Most events kept waiting for the input queue. */
export const MQTT_BACKLOG_LIMIT = 10_000;

/** Dropped events are logged at most this often. */
const DROP_LOG_MS = 60_000;

/** Options of {@link EventBacklog}. */
export interface EventBacklogOptions {
  clock: Clock;
  logger: Logger;
  /** The running device's context; undefined while it is stopped. */
  context: () => DeviceContext | undefined;
  /** The running device's signal: the waiting stops with it. */
  signal: () => AbortSignal;
}

/** Events handed to the input queue in arrival order, waiting (boundedly) while it refuses them. */
export class EventBacklog {
  readonly #options: EventBacklogOptions;
  /** Events refused by the input queue, oldest first from `#head` (a queue without `shift()`'s copying). */
  #waiting: InputDraft[] = [];
  #head = 0;
  #draining = false;
  #dropped = 0;
  #droppedLoggedAt: number | null = null;

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const stop = new AbortController();
   * const backlog = new EventBacklog({
   *   clock: systemClock,
   *   logger: getLogger(["homed", "mqtt"]),
   *   context: () => undefined,
   *   signal: () => stop.signal,
   * });
   * backlog.deliver({
   *   source: "mqtt:home/hall/motion",
   *   sender: "mqtt",
   *   trust: "household",
   *   type: "mqtt.message",
   *   payload: { topic: "home/hall/motion", payload: "on", qos: 0 },
   * });
   * backlog.size; // 0: no running device, so the event was not kept
   * ```
   */
  constructor(options: EventBacklogOptions) {
    this.#options = options;
  }

  /** Events waiting for the input queue. */
  get size(): number {
    return this.#waiting.length - this.#head;
  }

  /** Events dropped because {@link MQTT_BACKLOG_LIMIT} of them were waiting. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Hands `draft` in now, or after the events already waiting when there are any or the queue refuses it. */
  deliver(draft: InputDraft): void {
    if (this.#waiting.length === this.#head && this.#emit(draft) !== "full") return;
    if (this.#waiting.length - this.#head >= MQTT_BACKLOG_LIMIT) {
      this.#head++;
      this.#dropped++;
      this.#noteDropped();
    }
    this.#waiting.push(draft);
    if (!this.#draining) void this.#drain();
  }

  /** Forgets the waiting events (the device stopped). */
  clear(): void {
    this.#waiting = [];
    this.#head = 0;
  }

  /** Emits one event: `full` when the input queue refused it for now; anything else is final. */
  #emit(draft: InputDraft): "done" | "full" | "closed" {
    const context = this.#options.context();
    if (!context) return "closed";
    try {
      context.emit(draft);
      return "done";
    } catch (error) {
      if (error instanceof LaneFullError) return "full";
      if (error instanceof ShuttingDown) return "closed";
      this.#options.logger.warning("MQTT: the input queue refused an event from {source}: {error}", {
        source: draft.source,
        error,
      });
      return "done";
    }
  }

  /** Hands the waiting events in, oldest first, waiting while the queue refuses them. */
  async #drain(): Promise<void> {
    this.#draining = true;
    const signal = this.#options.signal();
    let refused = 0;
    try {
      while (this.#head < this.#waiting.length && !signal.aborted) {
        const outcome = this.#emit(this.#waiting[this.#head]!);
        if (outcome === "closed") break;
        if (outcome === "done") {
          this.#head++;
          refused = 0;
          // Let the array go once it is read, rather than keep every event that ever waited.
          if (this.#head === this.#waiting.length) [this.#waiting, this.#head] = [[], 0];
          else if (this.#head > 1_024 && this.#head * 2 > this.#waiting.length) {
            [this.#waiting, this.#head] = [this.#waiting.slice(this.#head), 0];
          }
          continue;
        }
        // A reader that takes inputs as they come frees the lane within a few microtasks; a busy agent is polled.
        await waitForRoom(++refused, (ms) => this.#options.clock.sleep(ms, signal)).catch(() => {});
      }
    } finally {
      this.#draining = false;
    }
  }

  #noteDropped(): void {
    const now = this.#options.clock.monotonic();
    if (this.#droppedLoggedAt !== null && now - this.#droppedLoggedAt < DROP_LOG_MS) return;
    this.#droppedLoggedAt = now;
    this.#options.logger.warning(
      "MQTT: {limit} events wait for the input queue; the oldest are dropped ({dropped} so far)",
      { limit: MQTT_BACKLOG_LIMIT, dropped: this.#dropped },
    );
  }
}
