/**
 * The `smart_home.mqtt` settings as the MQTT device takes them, and their checks: the credentials (the URL's user part
 * when the settings leave them empty), the client id and the payload limit. Apart from `mqtt_device.ts` because these
 * checks run once, when the device is made, and each failure must name the setting and the value to fix — nothing
 * here connects.
 *
 * @module
 */

import type { BrokerAddress } from "./mqtt_client.ts";

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

/** Longest payload of a message homed takes in by default (`smart_home.mqtt.max_payload_bytes`), bytes: 256 KiB. */
export const MQTT_MAX_PAYLOAD_BYTES = 262_144;

/** What `smart_home.mqtt.max_payload_bytes` may be, bytes (as `src/config/schema.ts` allows): 1 KiB to 64 MiB. */
export const MQTT_MAX_PAYLOAD_RANGE = Object.freeze({ min: 1_024, max: 67_108_864 });

/** What {@link checkMqttSettings} gives: the settings the connection uses, defaults filled in. */
export interface CheckedMqttSettings {
  /** The user name, from the settings or else the URL; empty: none. */
  username: string;
  /** The password, from the settings or else the URL; empty: none. */
  password: string;
  clientId: string;
  maxPayloadBytes: number;
}

/**
 * Checks `settings` (a TypeError naming the setting and the value) and fills in the defaults: the credentials of the
 * URL (`address`), a random client id, {@link MQTT_MAX_PAYLOAD_BYTES}.
 *
 * @example
 * ```ts
 * import { parseBrokerUrl } from "./mqtt_client.ts";
 *
 * const settings: MqttSettings = {
 *   url: "mqtt://homed:secret@broker",
 *   username: "",
 *   password: "",
 *   subscribe: [],
 *   publish: [],
 * };
 * const checked = checkMqttSettings(settings, parseBrokerUrl(settings.url, "smart_home.mqtt.url"));
 * checked.username; // "homed": the URL's
 * checked.maxPayloadBytes; // 262144
 * ```
 */
export function checkMqttSettings(settings: MqttSettings, address: BrokerAddress): CheckedMqttSettings {
  const username = settings.username || address.username;
  const password = settings.password || address.password;
  if (password && !username) {
    // MQTT 3.1.1 (§3.1.2.9) allows a password only with a user name.
    throw new TypeError("smart_home.mqtt.password is set but smart_home.mqtt.username is empty; MQTT needs both");
  }
  if (settings.clientId !== undefined && (settings.clientId === "" || settings.clientId.includes("\u0000"))) {
    throw new TypeError(
      `smart_home.mqtt.client_id: ${JSON.stringify(settings.clientId)} is not a client id; ` +
        `use letters and digits, or leave it out for a random one`,
    );
  }
  const clientId = settings.clientId ?? `homed${randomHex(6)}`;
  const maxPayloadBytes = settings.maxPayloadBytes ?? MQTT_MAX_PAYLOAD_BYTES;
  const { min, max } = MQTT_MAX_PAYLOAD_RANGE;
  if (!Number.isInteger(maxPayloadBytes) || maxPayloadBytes < min || maxPayloadBytes > max) {
    throw new TypeError(
      `smart_home.mqtt.max_payload_bytes: ${JSON.stringify(settings.maxPayloadBytes)} is not a size homed ` +
        `allows; use a whole number of bytes from ${min} to ${max} (the default is ${MQTT_MAX_PAYLOAD_BYTES})`,
    );
  }
  return { username, password, clientId, maxPayloadBytes };
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
