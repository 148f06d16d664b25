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
 * This file ties the parts together — start, stop, publish, status. The parts, each beside it: the settings and their
 * checks (`mqtt_settings.ts`); the connection, reconnected with backoff (`broker_connection.ts`); what a message
 * becomes (`inbound_message.ts`); events waiting for the input queue, at most {@link MQTT_BACKLOG_LIMIT}
 * (`event_backlog.ts`); messages over `smart_home.mqtt.max_payload_bytes`, dropped unread, counted and logged once
 * per topic (`oversize_report.ts`); the tool (`publish_tool.ts`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { IPublishPacket } from "mqtt";
import type { Clock } from "../../clock.ts";
import type { Device, DeviceContext, DeviceTool } from "../../io/device.ts";
import type { OutputEvent } from "../../io/event.ts";
import {
  BrokerConnection,
  MQTT_BACKOFF,
  MQTT_PUBLISH_TIMEOUT_MS,
  type MqttBackoff,
  type MqttState,
} from "./broker_connection.ts";
import { EventBacklog } from "./event_backlog.ts";
import { inboundMessage, type MqttValue, rememberValue } from "./inbound_message.ts";
import { type BrokerAddress, parseBrokerUrl } from "./mqtt_client.ts";
import { checkMqttSettings, type MqttSettings } from "./mqtt_settings.ts";
import { type LastOversize, OversizeReport } from "./oversize_report.ts";
import { publishTool } from "./publish_tool.ts";
import { TopicFilters, validateTopicName } from "./topic_filter.ts";

// What this file exported before its parts moved beside it: importers need no change.
export {
  MQTT_BACKOFF,
  MQTT_CONNECT_TIMEOUT_MS,
  MQTT_PUBLISH_TIMEOUT_MS,
  MQTT_START_WAIT_MS,
  type MqttBackoff,
} from "./broker_connection.ts";
export { MQTT_BACKLOG_LIMIT } from "./event_backlog.ts";
export { MQTT_EVENT_PAYLOAD_BYTES, MQTT_LAST_VALUES_LIMIT, mqttSource, type MqttValue } from "./inbound_message.ts";
export { MQTT_MAX_PAYLOAD_BYTES, MQTT_MAX_PAYLOAD_RANGE, type MqttSettings } from "./mqtt_settings.ts";
export { MQTT_OVERSIZE_TOPICS_LOGGED } from "./oversize_report.ts";
export { MQTT_PUBLISH_MAX_CHARS } from "./publish_tool.ts";

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

/** The device as `/api/status` shows it. */
export interface MqttStatus {
  /** The broker URL, without any password. */
  url: string;
  client_id: string;
  state: MqttState;
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
  last_oversize: LastOversize | null;
  /** Events waiting for the input queue. */
  backlog: number;
  /** While not connected: when the next attempt is due (ISO 8601), else null. */
  next_retry_at: string | null;
}

/** The `mqtt` device: homed's connection to the home's MQTT broker. */
export class MqttDevice implements Device {
  readonly name = "mqtt";
  readonly type = "mqtt";
  readonly description: string;
  readonly #options: MqttDeviceOptions;
  readonly #address: BrokerAddress;
  readonly #clientId: string;
  readonly #maxPayloadBytes: number;
  readonly #publish: TopicFilters;
  readonly #connection: BrokerConnection;
  readonly #backlog: EventBacklog;
  readonly #oversize: OversizeReport;
  readonly #tools: readonly DeviceTool[];
  readonly #values = new Map<string, MqttValue>();
  #context: DeviceContext | undefined;
  #abort = new AbortController();
  #messages = 0;
  #retained = 0;
  #published = 0;
  #lastMessageAt: number | null = null;

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
    const { settings, clock, logger } = options;
    this.#options = options;
    this.#address = parseBrokerUrl(settings.url, "smart_home.mqtt.url");
    const { username, password, clientId, maxPayloadBytes } = checkMqttSettings(settings, this.#address);
    this.#clientId = clientId;
    this.#maxPayloadBytes = maxPayloadBytes;
    const subscribe = new TopicFilters(settings.subscribe, "smart_home.mqtt.subscribe");
    this.#publish = new TopicFilters(settings.publish, "smart_home.mqtt.publish");
    const publishTimeoutMs = options.publishTimeoutMs ?? MQTT_PUBLISH_TIMEOUT_MS;
    this.#connection = new BrokerConnection({
      address: this.#address,
      clientId,
      username,
      password,
      subscribe,
      maxPayloadBytes,
      backoff: { ...MQTT_BACKOFF, ...options.backoff },
      random: options.random ?? Math.random,
      publishTimeoutMs,
      clock,
      logger,
      onMessage: (topic, payload, packet) => this.#onMessage(topic, payload, packet),
      onOversize: (dropped) => this.#oversize.note(dropped),
    });
    this.#backlog = new EventBacklog({
      clock,
      logger,
      context: () => this.#context,
      signal: () => this.#abort.signal,
    });
    this.#oversize = new OversizeReport({ clock, logger, limit: maxPayloadBytes });
    this.description = `MQTT broker ${this.#address.display}: events from ${subscribe.describe()}; ` +
      `publishes to ${this.#publish.describe()}`;
    this.#tools = this.#publish.size === 0 ? [] : [publishTool({
      broker: this.#address.display,
      filters: this.#publish,
      publishTimeoutMs,
      publish: (topic, payload, options) => this.publish(topic, payload, options),
    })];
  }

  tools(): readonly DeviceTool[] {
    return this.#tools;
  }

  /** Connects; resolves once the first attempt connected and subscribed or failed, or after a few seconds. */
  async start(context: DeviceContext): Promise<void> {
    // Started already: a second start would dial the broker twice.
    if (this.#context) return;
    this.#context = context;
    this.#abort = new AbortController();
    await this.#connection.start(this.#abort.signal);
  }

  /** Disconnects (politely, then by closing the socket) and stops reconnecting; never waits more than a few seconds. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error("The MQTT device stopped"));
    try {
      await this.#connection.stop();
    } finally {
      this.#context = undefined;
      this.#backlog.clear();
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
    const connection = this.#connection;
    const lastOversize = this.#oversize.last;
    const status: MqttStatus = {
      url: this.#address.display,
      client_id: this.#clientId,
      state: connection.state,
      connected_at: iso(connection.connectedAt),
      reconnects: connection.reconnects,
      messages: this.#messages,
      retained: this.#retained,
      last_message_at: iso(this.#lastMessageAt),
      last_error: connection.lastError,
      subscribed: [...connection.subscribed],
      published: this.#published,
      dropped: this.#backlog.dropped,
      max_payload_bytes: this.#maxPayloadBytes,
      oversize: this.#oversize.count,
      last_oversize: lastOversize === null ? null : { ...lastOversize },
      backlog: this.#backlog.size,
      next_retry_at: iso(connection.nextRetryAt),
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
    await this.#connection.publish(topic, payload, qos, retain);
    const bytes = new TextEncoder().encode(payload).length;
    this.#published++;
    const kept = retain ? ", retained" : "";
    return `Published ${bytes} bytes to ${topic} (QoS ${qos}${kept}); ${
      qos === 0 ? "it was sent (QoS 0 has no acknowledgement)" : "the broker acknowledged it"
    }`;
  }

  /** A message from the broker: its topic's last value, and an event unless it is retained (see the module doc). */
  #onMessage(topic: string, payload: Uint8Array, packet: IPublishPacket): void {
    const now = this.#options.clock.now();
    const { value, event } = inboundMessage(topic, payload, packet, now);
    rememberValue(this.#values, topic, value);
    this.#lastMessageAt = now;
    if (!event) {
      // State the broker kept, sent because homed subscribed: not news (see the module doc).
      this.#retained++;
      return;
    }
    this.#messages++;
    this.#backlog.deliver(event);
  }
}
