/**
 * The MQTT device (`mqtt`, `smart_home.mqtt`): one connection to the home's broker. A message on a `subscribe`
 * filter is a device event (`mqtt.message` from source `mqtt:<topic>`, sender `mqtt`, trust `household`): recorded,
 * coalesced per topic by the agent's event log and shown in the next turn's reference block, starting no LLM turn.
 * An event's payload is `{ topic, payload, qos }`: the payload as text, cut at {@link MQTT_EVENT_PAYLOAD_BYTES} and
 * marked, or base64 / a note for binary (`encoding` and `bytes` then say so; see `payload_text.ts`). It has no
 * `retain` field: an emitted message is never a retained one (below). Control characters in a topic are escaped in
 * the source, so a topic cannot start a line of its own in a log or the reference block.
 * The tool `mqtt_publish` sends a message, only to topics matching a `publish` filter, for household members and the
 * owner. The device has no text channel: nothing is routed to it.
 *
 * Retained messages: with MQTT 3.1.1 (which homed speaks) the broker sets the RETAIN flag only on a message it sends
 * *because homed subscribed* — the topic's stored last value — and clears it on every message forwarded live
 * (§3.3.1.3). So the flag alone tells state from news: a retained message is recorded as the topic's last value
 * ({@link MqttDevice.lastValues}, `status().retained`) and not emitted. Emitting it, even under its own type, would
 * replay every stored value as if it had just happened — on start and again after every reconnect — and push the
 * real events out of the reference block, whose rows keep only the newest few dozen.
 *
 * Connection: MQTT.js over a socket homed opens (see `mqtt_client.ts`), `clean: true`, MQTT.js's own reconnect
 * turned off: homed reconnects with backoff (1 s doubling to 60 s, ±25 % jitter, starting over once a connection
 * has lasted 10 s) and subscribes to every filter again on each connection — a new client each time, so nothing of a
 * lost connection (a publish waiting for its acknowledgement) is silently sent later on the next. While not
 * connected `mqtt_publish` fails at once saying so; nothing is queued.
 *
 * Events are handed in as they arrive; when the input queue refuses one (homed's lane for `mqtt` is full while a
 * turn runs), events wait here in arrival order, at most {@link MQTT_BACKLOG_LIMIT}, the oldest dropped and counted
 * beyond that. Unlike the serial device, which stops reading its port until the queue takes the line, this one keeps
 * reading the socket: an MQTT stream cannot be paused — the broker drops QoS 0 messages for a client that does not
 * read all the same, and a connection left unread misses its keep-alive and is dropped.
 *
 * Size: a message whose payload is over `smart_home.mqtt.max_payload_bytes` ({@link MQTT_MAX_PAYLOAD_BYTES} by
 * default) is dropped as it streams in, before anything holds it whole (`broker_socket.ts`; MQTT.js alone would read
 * it whole first — a 20 MB camera image cost 60 to 100 MB), acknowledged to the broker, counted (`status().oversize`,
 * `last_oversize`) and logged once per topic, naming the topic, its size and the setting. MQTT 3.1.1 cannot tell the
 * broker a limit, so the broker still sends the bytes; only homed's memory is spared.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { IClientOptions, IPublishPacket, MqttClient } from "mqtt";
import { type Clock, deadline } from "../../clock.ts";
import type { Device, DeviceContext, DeviceTool, InputDraft } from "../../io/device.ts";
import type { OutputEvent } from "../../io/event.ts";
import { LaneFullError } from "../../io/fair_queue.ts";
import { waitForRoom } from "../../io/lane_room.ts";
import { ShuttingDown } from "../../io/turn_error.ts";
import { Backoff, dial } from "../../service/backoff.ts";
import { escapeControl } from "../../text/untrusted.ts";
import { type BrokerAddress, newMqttClient, parseBrokerUrl } from "./mqtt_client.ts";
import type { DroppedPublish } from "./oversize_filter.ts";
import { payloadText } from "./payload_text.ts";
import { TopicFilters, validateTopicName } from "./topic_filter.ts";

/** The `smart_home.mqtt` settings. */
export interface MqttSettings {
  /** `mqtt://host:1883` or `mqtts://host:8883`. */
  url: string;
  /** Empty: connect without a user name (the URL's user part, if any, is used then). */
  username: string;
  /** Never logged nor shown. */
  password: string;
  /** Topic filters whose messages are device events. */
  subscribe: string[];
  /** Topic filters `mqtt_publish` may publish to. */
  publish: string[];
  /** The client id; `homed` and 12 random hex digits by default. */
  clientId?: string;
  /** Longest payload of a message taken in, bytes ({@link MQTT_MAX_PAYLOAD_BYTES} by default). */
  maxPayloadBytes?: number;
}

/** The reconnect backoff: first wait, longest wait, and how long a connection must last for the wait to start over. */
export interface MqttBackoff {
  initialMs: number;
  maxMs: number;
  stableMs: number;
}

/** Options of {@link MqttDevice}. */
export interface MqttDeviceOptions {
  settings: MqttSettings;
  clock: Clock;
  logger: Logger;
  /** Jitter of the reconnect backoff (`Math.random` by default). */
  random?: () => number;
  /** Replaces parts of {@link MQTT_BACKOFF} (tests that restart a broker). */
  backoff?: Partial<MqttBackoff>;
  /** Replaces {@link MQTT_PUBLISH_TIMEOUT_MS} (tests of a broker that does not answer). */
  publishTimeoutMs?: number;
}

/** A topic's last value, retained or live. */
export interface MqttValue {
  /** The payload as text (see `payload_text.ts`). */
  payload: string;
  encoding: "utf-8" | "base64" | "binary";
  qos: 0 | 1 | 2;
  /** True when it came as the broker's stored value on subscribing, not as news. */
  retained: boolean;
  /** When it arrived (ms since the epoch). */
  time: number;
}

/** The device as `/api/status` shows it. */
export interface MqttStatus {
  /** The broker URL, without any password. */
  url: string;
  client_id: string;
  state: "connecting" | "connected" | "reconnecting" | "closed";
  /** When the current (or last) connection came up (ISO 8601), or null. */
  connected_at: string | null;
  /** Times a connection came up again after one was lost. */
  reconnects: number;
  /** Live messages received (each a device event). */
  messages: number;
  /** Retained messages received (recorded as last values, not events). */
  retained: number;
  /** When the last message arrived (ISO 8601), or null. */
  last_message_at: string | null;
  /** Why the connection last failed or closed, or why a subscription was refused, or null. */
  last_error: string | null;
  /** The filters the broker granted on the current connection. */
  subscribed: string[];
  /** Messages published with `mqtt_publish`. */
  published: number;
  /** Events dropped because {@link MQTT_BACKLOG_LIMIT} of them were waiting for the input queue. */
  dropped: number;
  /** `smart_home.mqtt.max_payload_bytes`: longer messages are dropped unread. */
  max_payload_bytes: number;
  /** Messages dropped unread because their payload was over `max_payload_bytes`. */
  oversize: number;
  /** The last of them: its topic (control characters escaped, cut at 200), payload size and arrival (ISO 8601). */
  last_oversize: { topic: string; bytes: number; at: string } | null;
  /** Events waiting for the input queue. */
  backlog: number;
  /** While not connected: when the next attempt is due (ISO 8601), else null. */
  next_retry_at: string | null;
}

/** Reconnect backoff of homed's MQTT connection. */
export const MQTT_BACKOFF: MqttBackoff = Object.freeze({ initialMs: 1_000, maxMs: 60_000, stableMs: 10_000 });

/** Longest wait for the broker's CONNACK on each attempt (MQTT.js `connectTimeout`). */
export const MQTT_CONNECT_TIMEOUT_MS = 10_000;

/** Longest `mqtt_publish` waits for the broker's acknowledgement. */
export const MQTT_PUBLISH_TIMEOUT_MS = 10_000;

/** Longest payload text an event carries, in bytes; longer ones are cut and marked. */
export const MQTT_EVENT_PAYLOAD_BYTES = 4_096;

/** Longest payload `mqtt_publish` takes, in characters. */
export const MQTT_PUBLISH_MAX_CHARS = 16_384;

/** Most events kept waiting for the input queue. */
export const MQTT_BACKLOG_LIMIT = 10_000;

/** Most topics whose last value is kept. */
export const MQTT_LAST_VALUES_LIMIT = 1_000;

/** Longest payload of a message homed takes in by default (`smart_home.mqtt.max_payload_bytes`), bytes: 256 KiB. */
export const MQTT_MAX_PAYLOAD_BYTES = 262_144;

/** What `smart_home.mqtt.max_payload_bytes` may be, bytes (as `src/config/schema.ts` allows): 1 KiB to 64 MiB. */
export const MQTT_MAX_PAYLOAD_RANGE = Object.freeze({ min: 1_024, max: 67_108_864 });

/** Most topics named in an oversize-message warning; past them oversize messages are only counted. */
export const MQTT_OVERSIZE_TOPICS_LOGGED = 1_000;

/** Longest `start()` waits for the first connection and its subscriptions; the attempt goes on after that. */
export const MQTT_START_WAIT_MS = 3_000;

/** Longest `stop()` waits for a polite DISCONNECT before the socket is destroyed. */
const STOP_MS = 3_000;
/** MQTT keep-alive, seconds: a dead broker behind a live network is noticed within about 1.5 times this. */
const KEEPALIVE_S = 30;
/** Dropped events are logged at most this often. */
const DROP_LOG_MS = 60_000;

/** One connection's end: whether it came up, for how long, and why it ended. */
interface Session {
  connected: boolean;
  lastedMs: number;
  why: string;
}

/** The `mqtt` device: homed's connection to the home's MQTT broker. */
export class MqttDevice implements Device {
  readonly name = "mqtt";
  readonly type = "mqtt";
  readonly description: string;
  readonly #options: MqttDeviceOptions;
  readonly #address: BrokerAddress;
  readonly #username: string;
  readonly #password: string;
  readonly #clientId: string;
  readonly #subscribe: TopicFilters;
  readonly #publish: TopicFilters;
  readonly #backoff: MqttBackoff;
  readonly #publishTimeoutMs: number;
  readonly #random: () => number;
  readonly #tools: readonly DeviceTool[];
  readonly #values = new Map<string, MqttValue>();
  #context: DeviceContext | undefined;
  #abort = new AbortController();
  #run: Promise<void> | undefined;
  #client: MqttClient | undefined;
  #state: MqttStatus["state"] = "closed";
  #everConnected = false;
  #connectedAt: number | null = null;
  #reconnects = 0;
  #messages = 0;
  #retained = 0;
  #published = 0;
  #dropped = 0;
  #droppedLoggedAt: number | null = null;
  readonly #maxPayloadBytes: number;
  #oversize = 0;
  #lastOversize: MqttStatus["last_oversize"] = null;
  /** Topics whose oversize message was logged: each is named once (at most {@link MQTT_OVERSIZE_TOPICS_LOGGED}). */
  readonly #oversizeLogged = new Set<string>();
  #lastMessageAt: number | null = null;
  #lastError: string | null = null;
  #nextRetryAt: number | null = null;
  #subscribed: string[] = [];
  /** Events refused by the input queue, oldest first from `#head` (a queue without `shift()`'s copying). */
  #backlog: InputDraft[] = [];
  #head = 0;
  #draining = false;

  /**
   * Checks the settings (a TypeError naming the setting and the value); connects only on `start()`.
   *
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const mqtt = new MqttDevice({
   *   settings: {
   *     url: "mqtt://127.0.0.1:1883",
   *     username: "",
   *     password: "",
   *     subscribe: ["home/+/motion"],
   *     publish: ["home/+/set"],
   *   },
   *   clock: systemClock,
   *   logger: getLogger(["homed", "mqtt"]),
   * });
   * mqtt.tools().map((tool) => tool.name); // ["mqtt_publish"]
   * ```
   */
  constructor(options: MqttDeviceOptions) {
    const { settings } = options;
    this.#options = options;
    this.#address = parseBrokerUrl(settings.url, "smart_home.mqtt.url");
    this.#username = settings.username || this.#address.username;
    this.#password = settings.password || this.#address.password;
    if (this.#password && !this.#username) {
      // MQTT 3.1.1 (§3.1.2.9) allows a password only with a user name.
      throw new TypeError("smart_home.mqtt.password is set but smart_home.mqtt.username is empty; MQTT needs both");
    }
    if (settings.clientId !== undefined && (settings.clientId === "" || settings.clientId.includes("\u0000"))) {
      throw new TypeError(
        `smart_home.mqtt.client_id: ${JSON.stringify(settings.clientId)} is not a client id; ` +
          `use letters and digits, or leave it out for a random one`,
      );
    }
    this.#clientId = settings.clientId ?? `homed${randomHex(6)}`;
    this.#maxPayloadBytes = settings.maxPayloadBytes ?? MQTT_MAX_PAYLOAD_BYTES;
    const { min, max } = MQTT_MAX_PAYLOAD_RANGE;
    if (!Number.isInteger(this.#maxPayloadBytes) || this.#maxPayloadBytes < min || this.#maxPayloadBytes > max) {
      throw new TypeError(
        `smart_home.mqtt.max_payload_bytes: ${JSON.stringify(settings.maxPayloadBytes)} is not a size homed ` +
          `allows; use a whole number of bytes from ${min} to ${max} (the default is ${MQTT_MAX_PAYLOAD_BYTES})`,
      );
    }
    this.#subscribe = new TopicFilters(settings.subscribe, "smart_home.mqtt.subscribe");
    this.#publish = new TopicFilters(settings.publish, "smart_home.mqtt.publish");
    this.#backoff = { ...MQTT_BACKOFF, ...options.backoff };
    this.#publishTimeoutMs = options.publishTimeoutMs ?? MQTT_PUBLISH_TIMEOUT_MS;
    this.#random = options.random ?? Math.random;
    this.description = `MQTT broker ${this.#address.display}: events from ${this.#subscribe.describe()}; ` +
      `publishes to ${this.#publish.describe()}`;
    this.#tools = this.#publish.size === 0 ? [] : [this.#publishTool()];
  }

  tools(): readonly DeviceTool[] {
    return this.#tools;
  }

  /** Connects; resolves once the first attempt connected and subscribed or failed, or after a few seconds. */
  async start(context: DeviceContext): Promise<void> {
    this.#context = context;
    this.#abort = new AbortController();
    const signal = this.#abort.signal;
    // A broker that does not answer must not hold up homed's start; the attempt goes on.
    const dialling = dial({
      clock: this.#options.clock,
      waitMs: MQTT_START_WAIT_MS,
      loop: (settled) => this.#loop(settled, signal),
      onError: (error) => this.#options.logger.error("The MQTT connection stopped working: {error}", { error }),
      onEnd: () => (this.#state = "closed"),
    });
    this.#run = dialling.run;
    await dialling.started;
  }

  /** Disconnects (politely, then by closing the socket) and stops reconnecting; never waits more than a few seconds. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error("The MQTT device stopped"));
    const client = this.#client;
    if (client) endClient(client, this.#state !== "connected" || Object.keys(client.outgoing).length > 0);
    const limit = deadline(this.#options.clock, STOP_MS);
    try {
      if (this.#run && (await limit.race(this.#run)).late) {
        client?.stream?.destroy();
        await this.#run;
      }
    } finally {
      limit.cancel();
      this.#context = undefined;
      this.#backlog = [];
      this.#head = 0;
    }
  }

  /** None: MQTT is not a channel replies go to; `mqtt_publish` is how homed speaks on it. */
  outputCapabilities(): number {
    return 0;
  }

  send(event: OutputEvent): Promise<void> {
    return Promise.reject(
      new TypeError(`The mqtt device takes no ${event.type} outputs; publish with the mqtt_publish tool`),
    );
  }

  /** The connection's state and counters. */
  status(): Record<string, unknown> {
    const iso = (time: number | null) => (time === null ? null : new Date(time).toISOString());
    const status: MqttStatus = {
      url: this.#address.display,
      client_id: this.#clientId,
      state: this.#state,
      connected_at: iso(this.#connectedAt),
      reconnects: this.#reconnects,
      messages: this.#messages,
      retained: this.#retained,
      last_message_at: iso(this.#lastMessageAt),
      last_error: this.#lastError,
      subscribed: [...this.#subscribed],
      published: this.#published,
      dropped: this.#dropped,
      max_payload_bytes: this.#maxPayloadBytes,
      oversize: this.#oversize,
      last_oversize: this.#lastOversize === null ? null : { ...this.#lastOversize },
      backlog: this.#backlog.length - this.#head,
      next_retry_at: iso(this.#nextRetryAt),
    };
    return { ...status };
  }

  /**
   * The last value of each topic heard on (retained ones included), oldest first; at most
   * {@link MQTT_LAST_VALUES_LIMIT} topics, the least recently heard forgotten first.
   */
  lastValues(): ReadonlyMap<string, Readonly<MqttValue>> {
    return this.#values;
  }

  /**
   * Publishes `payload` to `topic` and resolves once the broker acknowledged it (QoS 1 or 2) or it was written (QoS
   * 0), within {@link MQTT_PUBLISH_TIMEOUT_MS}; rejects naming the problem — a topic no `publish` filter allows, no
   * connection — without queueing anything.
   *
   * @example
   * ```ts
   * declare const mqtt: MqttDevice;
   * await mqtt.publish("home/kitchen/set", '{"state":"ON"}', { qos: 1 });
   * // "Published 14 bytes to home/kitchen/set (QoS 1); the broker acknowledged it"
   * ```
   */
  async publish(topic: string, payload: string, options: { retain?: boolean; qos?: 0 | 1 | 2 } = {}): Promise<string> {
    validateTopicName(topic, "topic");
    if (!this.#publish.matches(topic)) {
      throw new Error(
        `The topic ${JSON.stringify(topic)} is not one homed may publish to: smart_home.mqtt.publish allows ` +
          `${this.#publish.describe()}`,
      );
    }
    const qos = options.qos ?? 1;
    const retain = options.retain ?? false;
    const client = this.#client;
    if (!client || this.#state !== "connected" || !client.connected) {
      const why = this.#lastError ? `: ${this.#lastError}` : "";
      throw new Error(
        `Not connected to the MQTT broker at ${this.#address.display} (${this.#state}${why}); the message was not ` +
          `sent. homed reconnects by itself: try again in a while`,
      );
    }
    const bytes = new TextEncoder().encode(payload).length;
    const acked = new Promise<void>((resolve, reject) => {
      client.publish(topic, payload, { qos, retain }, (error) => (error ? reject(error) : resolve()));
    });
    const limit = deadline(this.#options.clock, this.#publishTimeoutMs);
    let raced;
    try {
      raced = await limit.race(acked);
    } catch (error) {
      throw new Error(
        `The connection to the MQTT broker at ${this.#address.display} ended before the message to ${
          JSON.stringify(topic)
        } was ${qos === 0 ? "sent" : "acknowledged"} (${(error as Error).message}); it may not have arrived`,
      );
    } finally {
      limit.cancel();
    }
    if (raced.late) {
      throw new Error(
        `The MQTT broker at ${this.#address.display} did not acknowledge the message to ${
          JSON.stringify(topic)
        } within ${this.#publishTimeoutMs / 1_000} s; it may or may not have arrived`,
      );
    }
    this.#published++;
    const kept = retain ? ", retained" : "";
    return `Published ${bytes} bytes to ${topic} (QoS ${qos}${kept}); ${
      qos === 0 ? "it was sent (QoS 0 has no acknowledgement)" : "the broker acknowledged it"
    }`;
  }

  #publishTool(): DeviceTool {
    return {
      name: "mqtt_publish",
      effect: "act",
      allow: "household",
      description: `Publish one MQTT message to the home's broker (${this.#address.display}) now, e.g. to switch a ` +
        `device. Allowed topics (smart_home.mqtt.publish): ${this.#publish.describe()}; in these "+" stands for one ` +
        `topic level and "#" for any number of levels. Fails at once while homed is not connected to the broker.`,
      parameters: {
        type: "object",
        properties: {
          topic: { type: "string", description: "The exact topic, without wildcards, e.g. home/kitchen/set" },
          payload: {
            type: "string",
            maxLength: MQTT_PUBLISH_MAX_CHARS,
            description: 'The message as text, often JSON such as {"state":"ON"}',
          },
          retain: {
            type: "boolean",
            description: "Keep it on the broker as the topic's current value for later subscribers (default false)",
          },
          qos: {
            type: "integer",
            enum: [0, 1, 2],
            description: "0: at most once; 1: at least once, acknowledged (default); 2: exactly once",
          },
        },
        required: ["topic", "payload"],
        additionalProperties: false,
      },
      // Above the acknowledgement deadline, so the tool's own message (which says what may have happened) wins.
      timeoutMs: this.#publishTimeoutMs + 2_000,
      execute: (args) => {
        const payload = String(args.payload);
        if (payload.length > MQTT_PUBLISH_MAX_CHARS) {
          throw new Error(`payload: at most ${MQTT_PUBLISH_MAX_CHARS} characters, got ${payload.length}`);
        }
        const qos = args.qos === 0 || args.qos === 2 ? args.qos : 1;
        return this.publish(String(args.topic), payload, { retain: args.retain === true, qos });
      },
    };
  }

  /** Connects, and again with backoff whenever the connection fails or ends, until the device stops. */
  async #loop(settled: () => void, signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#options;
    const url = this.#address.display;
    const { initialMs, maxMs, stableMs } = this.#backoff;
    const backoff = new Backoff({ minMs: initialMs, maxMs, jitter: 0.25, capAfterJitter: true }, this.#random);
    let outage = false;
    while (!signal.aborted) {
      this.#state = this.#everConnected ? "reconnecting" : "connecting";
      const session = await this.#session(settled, signal);
      settled();
      if (signal.aborted) break;
      this.#state = "reconnecting";
      if (session.connected && session.lastedMs >= stableMs) backoff.reset();
      // One warning per outage: when a connection is lost, not again for each attempt that fails after it.
      if (session.connected) outage = false;
      if (!outage) {
        outage = true;
        logger.warning(
          session.connected
            ? "MQTT: the connection to {url} was lost ({error}); reconnecting with backoff"
            : "MQTT: cannot connect to {url} ({error}); trying again with backoff",
          { url, error: session.why },
        );
      }
      const wait = backoff.next();
      this.#nextRetryAt = clock.now() + wait;
      try {
        await clock.sleep(wait, signal);
      } catch {
        break;
      } finally {
        this.#nextRetryAt = null;
      }
    }
  }

  /** One connection, from the attempt to its end. */
  async #session(settled: () => void, signal: AbortSignal): Promise<Session> {
    const { clock, logger } = this.#options;
    const options: IClientOptions = {
      clientId: this.#clientId,
      protocolVersion: 4,
      clean: true,
      keepalive: KEEPALIVE_S,
      connectTimeout: MQTT_CONNECT_TIMEOUT_MS,
      // homed reconnects itself, with backoff and a new client each time.
      reconnectPeriod: 0,
      resubscribe: false,
      // Nothing waits for a connection: a publish while disconnected fails at once.
      queueQoSZero: false,
      ...(this.#username ? { username: this.#username } : {}),
      ...(this.#password ? { password: this.#password } : {}),
    };
    const client = await newMqttClient(this.#address, options, {
      maxPayloadBytes: this.#maxPayloadBytes,
      onDropped: (dropped) => this.#onOversize(dropped),
    });
    if (signal.aborted) return { connected: false, lastedMs: 0, why: "stopped" };
    this.#client = client;
    let connectedSince: number | undefined;
    let why = "the connection closed";
    const ended = new Promise<Session>((resolve) => {
      client.on("error", (error) => {
        why = describeError(error);
        this.#lastError = why;
      });
      client.on("connect", () => {
        connectedSince = clock.monotonic();
        this.#connectedAt = clock.now();
        if (this.#everConnected) this.#reconnects++;
        logger.info(
          this.#everConnected ? "MQTT: connected again to {url} as {client}" : "MQTT: connected to {url} as {client}",
          { url: this.#address.display, client: this.#clientId },
        );
        this.#everConnected = true;
        this.#state = "connected";
        this.#subscribeAll(client, settled);
      });
      client.on("message", (topic, payload, packet) => this.#onMessage(topic, payload, packet));
      client.once("close", () => {
        if (this.#client === client) {
          this.#client = undefined;
          this.#subscribed = [];
          if (!signal.aborted) this.#state = "reconnecting";
        }
        const lastedMs = connectedSince === undefined ? 0 : clock.monotonic() - connectedSince;
        // Ends the client for good: a publish still waiting for its acknowledgement fails now ("Connection closed").
        endClient(client, true, () => resolve({ connected: connectedSince !== undefined, lastedMs, why }));
      });
    });
    client.connect();
    return await ended;
  }

  /** Subscribes to every filter in one SUBSCRIBE; `settled` once the broker answered (or at once with none). */
  #subscribeAll(client: MqttClient, settled: () => void): void {
    const filters = this.#subscribe.filters;
    if (filters.length === 0) {
      settled();
      return;
    }
    // QoS 1: a device's QoS 1 messages stay acknowledged hop by hop; QoS 0 ones still come as QoS 0.
    client.subscribe(Object.fromEntries(filters.map((filter) => [filter, { qos: 1 as const }])), (error, granted) => {
      if (error) {
        this.#lastError = `subscribing failed: ${describeError(error)}`;
        this.#options.logger.warning("MQTT: subscribing to {filters} failed: {error}", {
          filters: this.#subscribe.describe(),
          error: describeError(error),
        });
      } else {
        const refused = (granted ?? []).filter((grant) => grant.qos === 128).map((grant) => grant.topic);
        this.#subscribed = (granted ?? []).filter((grant) => grant.qos !== 128).map((grant) => grant.topic);
        if (refused.length > 0) {
          this.#lastError = `the broker refused the subscription to ${
            refused.map((t) => JSON.stringify(t)).join(", ")
          }`;
          this.#options.logger.warning(
            "MQTT: the broker refused the subscription to {filters} (smart_home.mqtt.subscribe; check its ACL)",
            { filters: refused.join(", ") },
          );
        }
      }
      settled();
    });
  }

  #onMessage(topic: string, payload: Uint8Array, packet: IPublishPacket): void {
    const now = this.#options.clock.now();
    const text = payloadText(payload, MQTT_EVENT_PAYLOAD_BYTES);
    this.#remember(topic, {
      payload: text.text,
      encoding: text.encoding,
      qos: packet.qos,
      retained: packet.retain,
      time: now,
    });
    this.#lastMessageAt = now;
    if (packet.retain) {
      // State the broker kept, sent because homed subscribed: not news (see the module doc).
      this.#retained++;
      return;
    }
    this.#messages++;
    this.#deliver({
      source: mqttSource(topic),
      sender: "mqtt",
      trust: "household",
      type: "mqtt.message",
      payload: {
        topic,
        payload: text.text,
        qos: packet.qos,
        ...(text.encoding === "utf-8" ? {} : { encoding: text.encoding }),
        ...(text.cut || text.encoding !== "utf-8" ? { bytes: text.bytes } : {}),
      },
    });
  }

  /** Counts a message dropped for its size; names its topic in the log the first time. */
  #onOversize(dropped: DroppedPublish): void {
    const topic = escapeControl(dropped.topic.length > 200 ? `${dropped.topic.slice(0, 200)}…` : dropped.topic);
    this.#oversize++;
    this.#lastOversize = {
      topic,
      bytes: dropped.payloadBytes,
      at: new Date(this.#options.clock.now()).toISOString(),
    };
    const logged = this.#oversizeLogged;
    if (logged.has(topic) || logged.size > MQTT_OVERSIZE_TOPICS_LOGGED) return;
    // One line per topic, so a camera that keeps sending is named once, not on every frame; a flood of new topics
    // stops being named after the first thousand, with a line that says so.
    logged.add(topic);
    if (logged.size > MQTT_OVERSIZE_TOPICS_LOGGED) {
      this.#options.logger.warning(
        "MQTT: messages over smart_home.mqtt.max_payload_bytes ({limit}) came on {count} topics; further ones are " +
          "dropped and counted (status: oversize) without naming them",
        { limit: this.#maxPayloadBytes, count: MQTT_OVERSIZE_TOPICS_LOGGED },
      );
      return;
    }
    this.#options.logger.warning(
      "MQTT: dropped a message of {bytes} bytes on {topic}: over smart_home.mqtt.max_payload_bytes ({limit}); " +
        "later ones on this topic are dropped and counted (status: oversize) without another line",
      { bytes: dropped.payloadBytes, topic, limit: this.#maxPayloadBytes },
    );
  }

  #remember(topic: string, value: MqttValue): void {
    this.#values.delete(topic);
    this.#values.set(topic, value);
    if (this.#values.size > MQTT_LAST_VALUES_LIMIT) this.#values.delete(this.#values.keys().next().value!);
  }

  /** Hands `draft` in now, or after the events already waiting when there are any or the queue refuses it. */
  #deliver(draft: InputDraft): void {
    if (this.#backlog.length === this.#head && this.#emit(draft) !== "full") return;
    if (this.#backlog.length - this.#head >= MQTT_BACKLOG_LIMIT) {
      this.#head++;
      this.#dropped++;
      this.#noteDropped();
    }
    this.#backlog.push(draft);
    if (!this.#draining) void this.#drain();
  }

  /** Emits one event: `full` when the input queue refused it for now; anything else is final. */
  #emit(draft: InputDraft): "done" | "full" | "closed" {
    const context = this.#context;
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
    const signal = this.#abort.signal;
    let refused = 0;
    try {
      while (this.#head < this.#backlog.length && !signal.aborted) {
        const outcome = this.#emit(this.#backlog[this.#head]!);
        if (outcome === "closed") break;
        if (outcome === "done") {
          this.#head++;
          refused = 0;
          // Let the array go once it is read, rather than keep every event that ever waited.
          if (this.#head === this.#backlog.length) [this.#backlog, this.#head] = [[], 0];
          else if (this.#head > 1_024 && this.#head * 2 > this.#backlog.length) {
            [this.#backlog, this.#head] = [this.#backlog.slice(this.#head), 0];
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

/**
 * The source of the events of `topic`: one per topic, since the agent's event log coalesces rows by source and type
 * (one row per topic, with its count and newest payload). Control characters are escaped, so a topic cannot break a
 * log line or start a line of its own in the reference block.
 *
 * @example
 * ```ts
 * mqttSource("home/hall/motion"); // "mqtt:home/hall/motion"
 * mqttSource("home/a\nb"); // "mqtt:home/a\\nb"
 * ```
 */
export function mqttSource(topic: string): string {
  return `mqtt:${escapeControl(topic)}`;
}

/** Ends `client` (politely unless `force`), calling `done` once it is ended; never throws. */
function endClient(client: MqttClient, force: boolean, done: () => void = () => {}): void {
  try {
    client.end(force, {}, () => done());
  } catch {
    done();
  }
}

/** An MQTT.js or socket error in a sentence (`ECONNREFUSED 127.0.0.1:1883`, `Connection refused: Not authorized`). */
function describeError(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
