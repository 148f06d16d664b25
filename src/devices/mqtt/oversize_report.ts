/**
 * Telling about messages dropped for their size. A message whose payload is over `smart_home.mqtt.max_payload_bytes`
 * (`MQTT_MAX_PAYLOAD_BYTES`, 256 KiB, by default) is dropped as it streams in, before anything holds it whole
 * (`broker_socket.ts`; MQTT.js alone would read it whole first — a 20 MB camera image cost 60 to 100 MB), and
 * acknowledged to the broker; here it is counted (`status().oversize`, `last_oversize`) and logged once per topic,
 * naming the topic, its size and the setting. MQTT 3.1.1 cannot tell the broker a limit, so the broker still sends
 * the bytes; only homed's memory is spared.
 *
 * Apart from `mqtt_device.ts` because its log must stay bounded whatever a broker sends: a camera that keeps sending
 * is named once, and a flood of new topics stops being named after {@link MQTT_OVERSIZE_TOPICS_LOGGED}.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import { escapeControl } from "../../text/untrusted.ts";
import type { DroppedPublish } from "./oversize_filter.ts";

/** Most topics named in an oversize-message warning; past them oversize messages are only counted. */
export const MQTT_OVERSIZE_TOPICS_LOGGED = 1_000;

/** The last message dropped for its size, as status shows it. */
export interface LastOversize {
  /** Its topic, control characters escaped, cut at 200. */
  topic: string;
  /** Its payload's size. */
  bytes: number;
  /** When it arrived (ISO 8601). */
  at: string;
}

/** Options of {@link OversizeReport}. */
export interface OversizeReportOptions {
  clock: Clock;
  logger: Logger;
  /** `smart_home.mqtt.max_payload_bytes`, for the log lines. */
  limit: number;
}

/** The count, the last one and the log lines of messages dropped for their size. */
export class OversizeReport {
  readonly #options: OversizeReportOptions;
  #count = 0;
  #last: LastOversize | null = null;
  /** Topics whose oversize message was logged: each is named once (at most {@link MQTT_OVERSIZE_TOPICS_LOGGED}). */
  readonly #logged = new Set<string>();

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const report = new OversizeReport({ clock: systemClock, logger: getLogger(["homed", "mqtt"]), limit: 262_144 });
   * report.note({ topic: "home/camera/image", payloadBytes: 20_000_000, qos: 0, retain: false, packetId: null });
   * report.count; // 1
   * report.last?.bytes; // 20000000
   * ```
   */
  constructor(options: OversizeReportOptions) {
    this.#options = options;
  }

  /** Messages dropped unread because their payload was over the limit. */
  get count(): number {
    return this.#count;
  }

  /** The last of them, or null. */
  get last(): LastOversize | null {
    return this.#last;
  }

  /** Counts a message dropped for its size; names its topic in the log the first time. */
  note(dropped: DroppedPublish): void {
    const topic = escapeControl(dropped.topic.length > 200 ? `${dropped.topic.slice(0, 200)}…` : dropped.topic);
    this.#count++;
    this.#last = {
      topic,
      bytes: dropped.payloadBytes,
      at: new Date(this.#options.clock.now()).toISOString(),
    };
    const logged = this.#logged;
    if (logged.has(topic) || logged.size > MQTT_OVERSIZE_TOPICS_LOGGED) return;
    // One line per topic, so a camera that keeps sending is named once, not on every frame; a flood of new topics
    // stops being named after the first thousand, with a line that says so.
    logged.add(topic);
    if (logged.size > MQTT_OVERSIZE_TOPICS_LOGGED) {
      this.#options.logger.warning(
        "MQTT: messages over smart_home.mqtt.max_payload_bytes ({limit}) came on {count} topics; further ones are " +
          "dropped and counted (status: oversize) without naming them",
        { limit: this.#options.limit, count: MQTT_OVERSIZE_TOPICS_LOGGED },
      );
      return;
    }
    this.#options.logger.warning(
      "MQTT: dropped a message of {bytes} bytes on {topic}: over smart_home.mqtt.max_payload_bytes ({limit}); " +
        "later ones on this topic are dropped and counted (status: oversize) without another line",
      { bytes: dropped.payloadBytes, topic, limit: this.#options.limit },
    );
  }
}
