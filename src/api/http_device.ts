/**
 * The HTTP API as a Device (source `http`): a chat request becomes an InputEvent and waits for its turn to end.
 *
 * @module
 */

import type { MessageAttachment } from "../io/message_payload.ts";
import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Device, DeviceContext, TurnEvent, TurnResult } from "../io/device.ts";
import type { Identity } from "../identity/identity.ts";
import { Capability, type InputEvent, type InputRef, type OutputEvent } from "../io/event.ts";
import { encodeSse, type SseMessage, SseStream } from "../net/sse_writer.ts";
import { type HomedTurnErrorCode, ShuttingDown } from "../io/turn_error.ts";

interface Pending {
  resolve(result: TurnResult): void;
  onEvent: ((event: TurnEvent) => void) | undefined;
  /** Bytes the request carried, by their attachment's `file` name, until the turn ends. */
  held: ReadonlyMap<string, Uint8Array> | undefined;
}

/** A chat message as the API hands it over: the text, who is authenticated, and the name they gave. */
export interface HttpMessage {
  text: string;
  identity: Identity;
  display?: string | undefined;
  /** Uploads, their bytes already in the media cache (`media`). */
  attachments?: readonly MessageAttachment[];
  /** A source of this channel other than its name (`openai:alice`: who came through the door). */
  source?: string;
  /**
   * Bytes that came inside the request (an image part of an OpenAI message), by the `file` name of the attachment
   * that names them: the media service asks for them ({@link HttpDevice.locate}) during the turn; dropped when it ends.
   */
  held?: ReadonlyMap<string, Uint8Array>;
  /**
   * What a caller that speaks a model's API asks of the turn besides the words (the OpenAI door: the answer's format,
   * or a stateless model call): carried to the agent as `payload.model_call`, never read here.
   */
  modelCall?: Readonly<Record<string, unknown>>;
}

/** A request submitted through the device. */
export interface Submission {
  event: InputEvent;
  /** Settles when the turn ends (also with an error result, e.g. on shutdown). */
  done: Promise<TurnResult>;
}

/**
 * Largest number of messages kept per recipient (and for the whole household) while none of their `/api/events`
 * clients listens; the oldest go first — so one member's flood of reminders drops only her own kept messages.
 */
export const OUTBOX_LIMIT = 100;
/** Most recipients with kept messages; past it, the one whose newest message is oldest loses its backlog. */
export const OUTBOX_RECIPIENTS = 64;

/**
 * Most bytes that may wait for one `/api/events` client — one that stopped reading — before it is let go and its
 * connection closed (a household's messages are short: this is thousands of them).
 */
export const EVENTS_CLIENT_MAX_BYTES = 1_048_576;

/** Options of {@link HttpDevice}. */
export interface HttpDeviceOptions {
  /** Bytes that may wait for one `/api/events` client ({@link EVENTS_CLIENT_MAX_BYTES}). */
  eventsClientMaxBytes?: number;
  /** For the streams' keep-alive comments. */
  clock?: Pick<Clock, "after">;
  /**
   * The channel's name: `http` (the API), or `openai` for the OpenAI-compatible door — a second request/response
   * channel whose sources are `openai:<token name>`.
   */
  name?: "http" | "openai";
}

/** A client of `GET /api/events`. */
export interface EventListener {
  /** Who listens: they get the messages for them and for the whole household; the owner gets every message. */
  identity?: Identity;
  deliver(event: OutputEvent): void;
  /** homed is stopping: end the stream. */
  close(): void;
}

/** The `http` channel. */
export class HttpDevice implements Device {
  readonly name: "http" | "openai";
  readonly type = "http";
  readonly description: string;
  /** A chat request is answered by its turn's `done` event, never through the outbound queue. */
  readonly answersInline = true;
  #context: DeviceContext | undefined;
  #pending = new Map<string, Pending>();
  /** Kept messages by recipient (`""`: the whole household), each with its arrival number. */
  #outbox = new Map<string, Array<{ seq: number; event: OutputEvent }>>();
  #seq = 0;
  #listeners = new Set<EventListener>();
  #dropped = 0;
  #pushed = 0;
  #options: HttpDeviceOptions;
  #letGo = 0;
  #peakWaiting = 0;

  /**
   * @example
   * ```ts
   * const device = new HttpDevice({ eventsClientMaxBytes: 1_048_576 });
   * device.status().event_clients; // 0
   * ```
   */
  constructor(options: HttpDeviceOptions = {}) {
    this.#options = options;
    this.name = options.name ?? "http";
    this.description = this.name === "http"
      ? "The HTTP API (POST /api/chat, /api/chat/stream) and clients built on it, such as homed chat"
      : "The OpenAI-compatible door (POST /v1/chat/completions): apps and integrations that speak OpenAI's API";
  }

  tools(): [] {
    return [];
  }

  start(context: DeviceContext): Promise<void> {
    this.#context = context;
    return Promise.resolve();
  }

  /** Ends every waiting request with a `shutting_down` result. */
  stop(): Promise<void> {
    for (const eventId of [...this.#pending.keys()]) {
      this.onTurnEvent({
        type: "done",
        eventId,
        result: {
          eventId,
          reply: "",
          channel: this.name,
          rounds: 0,
          error: {
            code: "shutting_down" satisfies HomedTurnErrorCode,
            message: "homed is shutting down; the message was not answered",
          },
        },
      });
    }
    this.#context = undefined;
    for (const listener of this.#listeners) listener.close();
    this.#listeners.clear();
    return Promise.resolve();
  }

  outputCapabilities(): number {
    return Capability.Text | Capability.Structured;
  }

  /**
   * Replies to a waiting request are answered through {@link HttpDevice.onTurnEvent}; what arrives here is everything
   * else sent to `http` (a reminder, `output_send`): pushed to the `/api/events` clients it is for (its recipient's and
   * the owner's; all of them when it is for the whole household), or — while none of them listens — kept (the latest
   * {@link OUTBOX_LIMIT} per recipient) for the next one.
   */
  send(event: OutputEvent): Promise<void> {
    const listeners = [...this.#listeners].filter((listener) => HttpDevice.#isFor(event, listener.identity));
    if (listeners.length) {
      for (const listener of listeners) listener.deliver(event);
      this.#pushed++;
      return Promise.resolve();
    }
    const key = event.recipient ?? "";
    let kept = this.#outbox.get(key);
    if (!kept) {
      if (this.#outbox.size >= OUTBOX_RECIPIENTS) this.#dropRecipient();
      this.#outbox.set(key, kept = []);
    }
    kept.push({ seq: this.#seq++, event });
    if (kept.length > OUTBOX_LIMIT) {
      kept.shift();
      this.#dropped++;
    }
    return Promise.resolve();
  }

  static #isFor(event: OutputEvent, identity: Identity | undefined): boolean {
    return event.recipient === undefined || !identity || identity.trust === "owner" ||
      identity.name === event.recipient;
  }

  /** Frees room for a new recipient: the one whose newest kept message is the oldest loses its backlog. */
  #dropRecipient(): void {
    let stalest: string | undefined, stalestSeq = Infinity;
    for (const [key, kept] of this.#outbox) {
      const newest = kept.at(-1)?.seq ?? -1;
      if (key !== "" && newest < stalestSeq) stalest = key, stalestSeq = newest;
    }
    if (stalest === undefined) return;
    const gone = this.#outbox.get(stalest)!.length;
    this.#outbox.delete(stalest);
    this.#dropped += gone;
  }

  /**
   * Adds an `/api/events` client; it gets the kept messages for it first (`backlog`, oldest first — they are handed
   * over once), then every new one for it until `unsubscribe`.
   *
   * @example
   * ```ts
   * import { AsyncQueue } from "../io/async_queue.ts";
   * import type { OutputEvent } from "../io/event.ts";
   *
   * const device = new HttpDevice();
   * const queue = new AsyncQueue<OutputEvent>();
   * const { backlog, unsubscribe } = device.subscribe({
   *   identity: { name: "alice", trust: "household" },
   *   deliver: (event) => queue.push(event),
   *   close: () => queue.close(),
   * });
   * backlog.length; // 0: nothing was sent to `http` for alice while she did not listen
   * unsubscribe();
   * ```
   */
  subscribe(listener: EventListener): { backlog: OutputEvent[]; unsubscribe(): void } {
    const taken: Array<{ seq: number; event: OutputEvent }> = [];
    for (const [key, kept] of this.#outbox) {
      if (!HttpDevice.#isFor(kept[0]!.event, listener.identity) && key !== "") continue;
      taken.push(...kept);
      this.#outbox.delete(key);
    }
    this.#listeners.add(listener);
    return {
      backlog: taken.sort((a, b) => a.seq - b.seq).map(({ event }) => event),
      unsubscribe: () => void this.#listeners.delete(listener),
    };
  }

  /**
   * Serves one `GET /api/events` client of `identity`: `ready` (with the number of kept messages), the kept messages
   * for it, then every new one for it (see {@link HttpDevice.send}). At most {@link EVENTS_CLIENT_MAX_BYTES} may wait for it; a message that would take it over lets the client
   * go — it is unsubscribed, what waited for it is dropped, its connection is closed, and `logger` says so.
   *
   * @example
   * ```ts
   * import { log } from "../log/logging.ts";
   *
   * const device = new HttpDevice();
   * const response = device.eventStream(log("api"));
   * response.headers.get("content-type"); // "text/event-stream"
   * await response.body!.cancel(); // the client went away: unsubscribed
   * ```
   */
  eventStream(logger: Logger, identity?: Identity): Response {
    const limit = this.#options.eventsClientMaxBytes ?? EVENTS_CLIENT_MAX_BYTES;
    const stream = new SseStream({
      maxWaitingBytes: limit,
      ...(this.#options.clock ? { clock: this.#options.clock } : {}),
      onCancel: () => subscription.unsubscribe(),
    });
    const send = (message: SseMessage) => {
      if (!stream.open) return;
      const bytes = encodeSse(message);
      const waiting = stream.waitingBytes;
      if (stream.write(bytes) !== "over") {
        this.#peakWaiting = Math.max(this.#peakWaiting, stream.waitingBytes);
        return;
      }
      subscription.unsubscribe();
      this.#letGo++;
      logger.warning(
        "An /api/events client stopped reading: {waiting} bytes wait for it and a message of {size} bytes came; at most {limit} wait for one client, so it is let go and its connection closed",
        { waiting, size: bytes.length, limit },
      );
      stream.abort(`homed closed this /api/events stream: its client stopped reading with ${waiting} bytes waiting`);
    };
    const subscription = this.subscribe({
      ...(identity ? { identity } : {}),
      deliver: (event) => send(eventMessage(event)),
      close: () => {
        subscription.unsubscribe();
        stream.end();
      },
    });
    send({ event: "ready", data: JSON.stringify({ kept: subscription.backlog.length }) });
    for (const event of subscription.backlog) send(eventMessage(event));
    return new Response(stream.body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
  }

  /** How many `/api/events` clients listen now. */
  get eventClients(): number {
    return this.#listeners.size;
  }

  /** Waiting requests, event clients, and what is kept for the next one. */
  status(): Record<string, unknown> {
    return {
      waiting_requests: this.#pending.size,
      event_clients: this.#listeners.size,
      kept_messages: this.#outbox.values().reduce((count, kept) => count + kept.length, 0),
      dropped_messages: this.#dropped,
      pushed_messages: this.#pushed,
      event_clients_let_go: this.#letGo,
      event_bytes_waiting_peak: this.#peakWaiting,
    };
  }

  /** The bytes a waiting request carried for `attachment` (by its `file` name); undefined for anything else. */
  locate(input: InputRef, attachment: MessageAttachment): Promise<Uint8Array | undefined> {
    const held = attachment.file === undefined ? undefined : this.#pending.get(input.id)?.held?.get(attachment.file);
    return Promise.resolve(held);
  }

  onTurnEvent(event: TurnEvent): void {
    const pending = this.#pending.get(event.eventId);
    if (!pending) return;
    pending.onEvent?.(event);
    if (event.type === "done") {
      this.#pending.delete(event.eventId);
      pending.resolve(event.result);
    }
  }

  /**
   * Queues a chat message. With `onEvent`, the reply is streamed to it as it is produced (`payload.stream`).
   * Throws {@link ShuttingDown} when the device is not running (stopped with homed, or not started yet).
   *
   * @example
   * ```ts
   * declare const device: HttpDevice; // started by the IO manager
   * const { done } = device.submit({ text: "Lights off", identity: { name: "owner", trust: "owner" } });
   * const result = await done;
   * result.error ?? result.reply; // the butler's answer, or why the turn failed
   * ```
   */
  submit(message: HttpMessage, onEvent?: (event: TurnEvent) => void): Submission {
    const context = this.#context;
    if (!context) throw new ShuttingDown("The http device is not running");
    let resolve!: (result: TurnResult) => void;
    const done = new Promise<TurnResult>((r) => resolve = r);
    const payload: Record<string, unknown> = { text: message.text };
    if (message.display !== undefined) payload.display = message.display;
    if (message.attachments?.length) payload.attachments = message.attachments;
    if (message.modelCall) payload.model_call = message.modelCall;
    if (onEvent) payload.stream = true;
    const event = context.emit({
      source: message.source ?? this.name,
      sender: message.identity.name,
      trust: message.identity.trust,
      type: "message",
      payload,
    });
    // Safe after emit: the agent can only take the event once this synchronous function has returned.
    this.#pending.set(event.id, { resolve, onEvent, held: message.held });
    return { event, done };
  }
}

/** One message of `/api/events`: its channel, type, payload fields and what it answers. */
function eventMessage(event: OutputEvent): SseMessage {
  return {
    event: "message",
    data: JSON.stringify({
      channel: event.target,
      type: event.type,
      ...event.payload,
      ...(event.replyTo ? { reply_to: event.replyTo.id } : {}),
    }),
  };
}
