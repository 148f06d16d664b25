/**
 * What one message from the broker becomes: its topic's last value, and — when it is news, not a retained value —
 * a device event (`mqtt.message` from source `mqtt:<topic>`, sender `mqtt`, trust `household`) whose payload is
 * `{ topic, payload, qos }`: the payload as text, cut at {@link MQTT_EVENT_PAYLOAD_BYTES} and marked, or base64 / a
 * note for binary (`encoding` and `bytes` then say so; see `payload_text.ts`). It has no `retain` field: an emitted
 * message is never a retained one. Control characters in a topic are escaped in the source, so a topic cannot start
 * a line of its own in a log or the reference block.
 *
 * Apart from `mqtt_device.ts` because this mapping is what the agent sees of MQTT, and is a pure function of the
 * message, checked without a broker.
 *
 * @module
 */

import type { IPublishPacket } from "mqtt";
import type { InputDraft } from "../../io/device.ts";
import { escapeControl } from "../../text/untrusted.ts";
import { payloadText } from "./payload_text.ts";

/** Longest payload text an event carries, in bytes; longer ones are cut and marked. */
export const MQTT_EVENT_PAYLOAD_BYTES = 4_096;

/** Most topics whose last value is kept. */
export const MQTT_LAST_VALUES_LIMIT = 1_000;

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

/** What {@link inboundMessage} makes of a message. */
export interface InboundMessage {
  /** The topic's value now. */
  value: MqttValue;
  /** The device event; undefined for a retained message (state the broker kept, sent because homed subscribed). */
  event: InputDraft | undefined;
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

/**
 * The value and (unless retained) the event of a message on `topic` that arrived at `now` (ms since the epoch).
 *
 * @example
 * ```ts
 * const payload = new TextEncoder().encode("on");
 * const live = inboundMessage("home/hall/motion", payload, { qos: 0, retain: false }, 0);
 * live.event?.payload; // { topic: "home/hall/motion", payload: "on", qos: 0 }
 * inboundMessage("home/hall/motion", payload, { qos: 0, retain: true }, 0).event; // undefined
 * ```
 */
export function inboundMessage(
  topic: string,
  payload: Uint8Array,
  packet: Pick<IPublishPacket, "qos" | "retain">,
  now: number,
): InboundMessage {
  const text = payloadText(payload, MQTT_EVENT_PAYLOAD_BYTES);
  const value: MqttValue = {
    payload: text.text,
    encoding: text.encoding,
    qos: packet.qos,
    retained: packet.retain,
    time: now,
  };
  if (packet.retain) return { value, event: undefined };
  return {
    value,
    event: {
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
    },
  };
}

/**
 * Records `value` as `topic`'s last value in `values`, the most recently heard last; past
 * {@link MQTT_LAST_VALUES_LIMIT} topics, the least recently heard is forgotten.
 *
 * @example
 * ```ts
 * const values = new Map<string, MqttValue>();
 * rememberValue(values, "home/hall/motion", { payload: "on", encoding: "utf-8", qos: 0, retained: false, time: 0 });
 * values.size; // 1
 * ```
 */
export function rememberValue(values: Map<string, MqttValue>, topic: string, value: MqttValue): void {
  values.delete(topic);
  values.set(topic, value);
  if (values.size > MQTT_LAST_VALUES_LIMIT) values.delete(values.keys().next().value!);
}
