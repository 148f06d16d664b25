/**
 * The tool `mqtt_publish {"topic", "payload", "retain"?, "qos"?}`: one MQTT message to the home's broker, only to
 * topics matching a `smart_home.mqtt.publish` filter, for household members and the owner. Apart from
 * `mqtt_device.ts` because this is what the LLM is told and may send — the spec, its limits and its defaults — while
 * the publish itself is the device's.
 *
 * @module
 */

import type { DeviceTool } from "../../io/device.ts";
import type { TopicFilters } from "./topic_filter.ts";

/** Longest payload `mqtt_publish` takes, in characters. */
export const MQTT_PUBLISH_MAX_CHARS = 16_384;

/** What {@link publishTool} needs of the device. */
export interface PublishToolOptions {
  /** The broker's URL without any password, as the description names it. */
  broker: string;
  /** `smart_home.mqtt.publish`. */
  filters: TopicFilters;
  /** Longest the publish waits for the broker's acknowledgement; the tool's own deadline is a little longer. */
  publishTimeoutMs: number;
  /** Publishes the checked message (`MqttDevice.publish`). */
  publish(topic: string, payload: string, options: { retain: boolean; qos: 0 | 1 | 2 }): Promise<string>;
}

/**
 * `mqtt_publish`, for the topics `options.filters` allow.
 *
 * @example
 * ```ts
 * import { TopicFilters } from "./topic_filter.ts";
 *
 * const tool = publishTool({
 *   broker: "mqtt://127.0.0.1:1883",
 *   filters: new TopicFilters(["home/+/set"], "smart_home.mqtt.publish"),
 *   publishTimeoutMs: 10_000,
 *   publish: (topic, payload) => Promise.resolve(`Published ${payload.length} bytes to ${topic}`),
 * });
 * tool.timeoutMs; // 12000
 * ```
 */
export function publishTool(options: PublishToolOptions): DeviceTool {
  return {
    name: "mqtt_publish",
    effect: "act",
    allow: "household",
    description: `Publish one MQTT message to the home's broker (${options.broker}) now, e.g. to switch a ` +
      `device. Allowed topics (smart_home.mqtt.publish): ${options.filters.describe()}; in these "+" stands for one ` +
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
    timeoutMs: options.publishTimeoutMs + 2_000,
    execute: (args) => {
      const payload = String(args.payload);
      if (payload.length > MQTT_PUBLISH_MAX_CHARS) {
        throw new Error(`payload: at most ${MQTT_PUBLISH_MAX_CHARS} characters, got ${payload.length}`);
      }
      const qos = args.qos === 0 || args.qos === 2 ? args.qos : 1;
      return options.publish(String(args.topic), payload, { retain: args.retain === true, qos });
    },
  };
}
