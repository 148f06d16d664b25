/**
 * MQTT's kind (`smart_home.mqtt`): one broker, its `subscribe` topics as device events, `mqtt_publish` limited to
 * `publish`.
 *
 * @module
 */

import type { Config } from "../../config/schema.ts";
import { hostPort } from "../../net/host_port.ts";
import type { DeviceKind } from "../kind.ts";
import { MqttDevice } from "./mqtt_device.ts";

type MqttSection = NonNullable<Config["smart_home"]["mqtt"]>;

/** `smart_home.mqtt`. */
export const mqttKind: DeviceKind<MqttSection> = {
  key: "smart_home.mqtt",
  example:
    '{ url: "mqtt://127.0.0.1:1883", username: homed, password: "${MQTT_PASSWORD}", subscribe: ["home/+/motion"], publish: ["home/+/set"] }',
  section: (config) => config.smart_home.mqtt ?? undefined,
  rights: (mqtt) => ({ net: [hostPort(mqtt.url)] }),
  secrets: (mqtt) => [mqtt.password],
  create: (mqtt, { clock, random, logger }) => ({
    devices: [
      new MqttDevice({
        settings: {
          url: mqtt.url,
          username: mqtt.username,
          password: mqtt.password,
          subscribe: mqtt.subscribe,
          publish: mqtt.publish,
          maxPayloadBytes: mqtt.max_payload_bytes,
        },
        clock,
        random,
        logger: logger("mqtt"),
      }),
    ],
  }),
};
