/**
 * homed's connection to the MQTT broker: MQTT.js over a socket homed opens (see `mqtt_client.ts`), `clean: true`,
 * MQTT.js's own reconnect turned off: homed reconnects with backoff (1 s doubling to 60 s, ±25 % jitter, starting
 * over once a connection has lasted 10 s) and subscribes to every filter again on each connection — a new client each
 * time, so nothing of a lost connection (a publish waiting for its acknowledgement) is silently sent later on the
 * next. While not connected a publish fails at once saying so; nothing is queued.
 *
 * Apart from `mqtt_device.ts` because the connection's life — attempts, backoff, subscriptions, one warning per
 * outage, a stop that never waits long — is its own concern; what the messages become is the device's.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { IClientOptions, IPublishPacket, MqttClient } from "mqtt";
import { type Clock, deadline } from "../../clock.ts";
import { Backoff, dial } from "../../service/backoff.ts";
import { LinkState } from "../../service/link_state.ts";
import { type BrokerAddress, newMqttClient } from "./mqtt_client.ts";
import type { DroppedPublish } from "./oversize_filter.ts";
import type { TopicFilters } from "./topic_filter.ts";

/** The reconnect backoff: first wait, longest wait, and how long a connection must last for the wait to start over. */
export interface MqttBackoff {
  initialMs: number;
  maxMs: number;
  stableMs: number;
}

/** Reconnect backoff of homed's MQTT connection. */
export const MQTT_BACKOFF: MqttBackoff = Object.freeze({ initialMs: 1_000, maxMs: 60_000, stableMs: 10_000 });

/** Longest wait for the broker's CONNACK on each attempt (MQTT.js `connectTimeout`). */
export const MQTT_CONNECT_TIMEOUT_MS = 10_000;

/** Longest `mqtt_publish` waits for the broker's acknowledgement. */
export const MQTT_PUBLISH_TIMEOUT_MS = 10_000;

/** Longest `start()` waits for the first connection and its subscriptions; the attempt goes on after that. */
export const MQTT_START_WAIT_MS = 3_000;

/** Longest `stop()` waits for a polite DISCONNECT before the socket is destroyed. */
const STOP_MS = 3_000;
/** MQTT keep-alive, seconds: a dead broker behind a live network is noticed within about 1.5 times this. */
const KEEPALIVE_S = 30;

/** Where the connection is. */
export type MqttState = "connecting" | "connected" | "reconnecting" | "closed";

/** One connection's end: whether it came up, for how long, and why it ended. */
interface Session {
  connected: boolean;
  lastedMs: number;
  why: string;
}

/** Options of {@link BrokerConnection}. */
export interface BrokerConnectionOptions {
  address: BrokerAddress;
  clientId: string;
  /** Empty: none. */
  username: string;
  /** Empty: none. Never logged nor shown. */
  password: string;
  /** The filters subscribed to on every connection. */
  subscribe: TopicFilters;
  /** Longer payloads are dropped as they stream in (`broker_socket.ts`). */
  maxPayloadBytes: number;
  backoff: MqttBackoff;
  /** Jitter of the reconnect backoff. */
  random: () => number;
  /** Longest a publish waits for the broker's acknowledgement. */
  publishTimeoutMs: number;
  clock: Clock;
  logger: Logger;
  /** Each message the broker sends, retained ones included. */
  onMessage(topic: string, payload: Uint8Array, packet: IPublishPacket): void;
  /** Each message dropped unread for its size. */
  onOversize(dropped: DroppedPublish): void;
}

/**
 * One broker, connected to again and again until stopped. Its state, reconnects, `connectedAt` (of the current or
 * last connection), `nextRetryAt` and last error (a failed or closed connection, or a refused subscription) are
 * {@link LinkState}'s.
 */
export class BrokerConnection extends LinkState<MqttState> {
  readonly #options: BrokerConnectionOptions;
  #run: Promise<void> | undefined;
  #client: MqttClient | undefined;
  #subscribed: string[] = [];

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   * import { parseBrokerUrl } from "./mqtt_client.ts";
   * import { TopicFilters } from "./topic_filter.ts";
   *
   * const connection = new BrokerConnection({
   *   address: parseBrokerUrl("mqtt://127.0.0.1:1883", "smart_home.mqtt.url"),
   *   clientId: "homed-example",
   *   username: "",
   *   password: "",
   *   subscribe: new TopicFilters(["home/+/motion"], "smart_home.mqtt.subscribe"),
   *   maxPayloadBytes: 262_144,
   *   backoff: MQTT_BACKOFF,
   *   random: Math.random,
   *   publishTimeoutMs: MQTT_PUBLISH_TIMEOUT_MS,
   *   clock: systemClock,
   *   logger: getLogger(["homed", "mqtt"]),
   *   onMessage: (topic) => console.log(topic),
   *   onOversize: () => {},
   * });
   * connection.state; // "closed" until start()
   * ```
   */
  constructor(options: BrokerConnectionOptions) {
    super("closed");
    this.#options = options;
  }

  /** The filters the broker granted on the current connection. */
  get subscribed(): readonly string[] {
    return this.#subscribed;
  }

  /**
   * Connects, and again whenever the connection fails or ends, until `signal` is aborted; resolves once the first
   * attempt connected and subscribed or failed, or after a few seconds.
   */
  async start(signal: AbortSignal): Promise<void> {
    // A broker that does not answer must not hold up homed's start; the attempt goes on.
    const dialling = dial({
      clock: this.#options.clock,
      waitMs: MQTT_START_WAIT_MS,
      loop: (settled) => this.#loop(settled, signal),
      onError: (error) => this.#options.logger.error("The MQTT connection stopped working: {error}", { error }),
      onEnd: () => this.moveTo("closed"),
    });
    this.#run = dialling.run;
    await dialling.started;
  }

  /**
   * Disconnects (politely, then by closing the socket), once the start's signal was aborted; never waits more than a
   * few seconds.
   */
  async stop(): Promise<void> {
    const client = this.#client;
    if (client) endClient(client, this.state !== "connected" || Object.keys(client.outgoing).length > 0);
    const limit = deadline(this.#options.clock, STOP_MS);
    try {
      if (this.#run && (await limit.race(this.#run)).late) {
        client?.stream?.destroy();
        await this.#run;
      }
    } finally {
      limit.cancel();
    }
  }

  /**
   * Publishes on the current connection and resolves once the broker acknowledged it (QoS 1 or 2) or it was written
   * (QoS 0), within the publish deadline; rejects at once while not connected, and says what may have happened when
   * the connection ends or the deadline passes first.
   */
  async publish(topic: string, payload: string, qos: 0 | 1 | 2, retain: boolean): Promise<void> {
    const display = this.#options.address.display;
    const client = this.#client;
    if (!client || this.state !== "connected" || !client.connected) {
      const why = this.lastError ? `: ${this.lastError}` : "";
      throw new Error(
        `Not connected to the MQTT broker at ${display} (${this.state}${why}); the message was not ` +
          `sent. homed reconnects by itself: try again in a while`,
      );
    }
    const acked = new Promise<void>((resolve, reject) => {
      client.publish(topic, payload, { qos, retain }, (error) => (error ? reject(error) : resolve()));
    });
    const limit = deadline(this.#options.clock, this.#options.publishTimeoutMs);
    let raced;
    try {
      raced = await limit.race(acked);
    } catch (error) {
      throw new Error(
        `The connection to the MQTT broker at ${display} ended before the message to ${JSON.stringify(topic)} was ${
          qos === 0 ? "sent" : "acknowledged"
        } (${(error as Error).message}); it may not have arrived`,
      );
    } finally {
      limit.cancel();
    }
    if (raced.late) {
      throw new Error(
        `The MQTT broker at ${display} did not acknowledge the message to ${JSON.stringify(topic)} within ${
          this.#options.publishTimeoutMs / 1_000
        } s; it may or may not have arrived`,
      );
    }
  }

  /** Connects, and again with backoff whenever the connection fails or ends, until the device stops. */
  async #loop(settled: () => void, signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#options;
    const url = this.#options.address.display;
    const { initialMs, maxMs, stableMs } = this.#options.backoff;
    const backoff = new Backoff(
      { minMs: initialMs, maxMs, jitter: 0.25, capAfterJitter: true },
      this.#options.random,
    );
    let outage = false;
    while (!signal.aborted) {
      this.moveTo(this.everUp ? "reconnecting" : "connecting");
      const session = await this.#session(settled, signal);
      settled();
      if (signal.aborted) break;
      this.moveTo("reconnecting");
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
      if (!(await this.waitToRetry(clock.now() + wait, () => clock.sleep(wait, signal)))) break;
    }
  }

  /** One connection, from the attempt to its end. */
  async #session(settled: () => void, signal: AbortSignal): Promise<Session> {
    const { clock, logger, username, password } = this.#options;
    const options: IClientOptions = {
      clientId: this.#options.clientId,
      protocolVersion: 4,
      clean: true,
      keepalive: KEEPALIVE_S,
      connectTimeout: MQTT_CONNECT_TIMEOUT_MS,
      // homed reconnects itself, with backoff and a new client each time.
      reconnectPeriod: 0,
      resubscribe: false,
      // Nothing waits for a connection: a publish while disconnected fails at once.
      queueQoSZero: false,
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
    };
    const client = await newMqttClient(this.#options.address, options, {
      maxPayloadBytes: this.#options.maxPayloadBytes,
      onDropped: (dropped) => this.#options.onOversize(dropped),
    });
    if (signal.aborted) return { connected: false, lastedMs: 0, why: "stopped" };
    this.#client = client;
    let connectedSince: number | undefined;
    let why = "the connection closed";
    const ended = new Promise<Session>((resolve) => {
      client.on("error", (error) => {
        why = describeError(error);
        this.linkFailed(why);
      });
      client.on("connect", () => {
        connectedSince = clock.monotonic();
        const again = this.linkUp("connected", clock.now());
        logger.info(
          again ? "MQTT: connected again to {url} as {client}" : "MQTT: connected to {url} as {client}",
          { url: this.#options.address.display, client: this.#options.clientId },
        );
        this.#subscribeAll(client, settled);
      });
      client.on("message", (topic, payload, packet) => this.#options.onMessage(topic, payload, packet));
      client.once("close", () => {
        if (this.#client === client) {
          this.#client = undefined;
          this.#subscribed = [];
          if (!signal.aborted) this.moveTo("reconnecting");
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
    const subscribe = this.#options.subscribe;
    const filters = subscribe.filters;
    if (filters.length === 0) {
      settled();
      return;
    }
    // QoS 1: a device's QoS 1 messages stay acknowledged hop by hop; QoS 0 ones still come as QoS 0.
    client.subscribe(Object.fromEntries(filters.map((filter) => [filter, { qos: 1 as const }])), (error, granted) => {
      if (error) {
        this.linkFailed(`subscribing failed: ${describeError(error)}`);
        this.#options.logger.warning("MQTT: subscribing to {filters} failed: {error}", {
          filters: subscribe.describe(),
          error: describeError(error),
        });
      } else {
        const refused = (granted ?? []).filter((grant) => grant.qos === 128).map((grant) => grant.topic);
        this.#subscribed = (granted ?? []).filter((grant) => grant.qos !== 128).map((grant) => grant.topic);
        if (refused.length > 0) {
          this.linkFailed(`the broker refused the subscription to ${refused.map((t) => JSON.stringify(t)).join(", ")}`);
          this.#options.logger.warning(
            "MQTT: the broker refused the subscription to {filters} (smart_home.mqtt.subscribe; check its ACL)",
            { filters: refused.join(", ") },
          );
        }
      }
      settled();
    });
  }
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
