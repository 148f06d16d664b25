/**
 * The daemon's smart-home step: when configured, the Home Assistant device (`smart_home.home_assistant`) and the MQTT
 * device (`smart_home.mqtt`). What they need of the rest of homed is injected: teaching the memory graph the devices'
 * names. Their sensitive calls wait for the owner through the tool registry's gate (`src/policy/`), like any tool's.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import type { Device } from "../io/device.ts";
import { type AuditEntry, HomeAssistantDevice, type LearnedEntity } from "./home_assistant/ha_device.ts";
import { MqttDevice } from "./mqtt/mqtt_device.ts";

/** Options of {@link setupSmartHome}. */
export interface SmartHomeSetupOptions {
  config: Pick<Config, "smart_home">;
  /** Teaches the memory graph the devices (`MemoryService.learnDevices`). */
  learnDevices?(devices: LearnedEntity[]): Promise<void>;
  clock: Clock;
  random: () => number;
  /** Makes each part's logger (`smart_home`, `ha`, `mqtt`). */
  logger: (name: string) => Logger;
}

/** What the smart home gives the daemon. */
export interface SmartHome {
  devices: Device[];
  /** Home Assistant's part of `GET /api/smart_home/actions`: every service call, newest first. */
  actions(): AuditEntry[];
}

/**
 * Makes the smart-home parts.
 *
 * @example
 * ```ts
 * declare const options: SmartHomeSetupOptions;
 * const home = setupSmartHome(options);
 * home.devices.map((device) => device.name); // ["ha", "mqtt"] with both configured
 * ```
 */
export function setupSmartHome(options: SmartHomeSetupOptions): SmartHome {
  const { config, clock, random, logger } = options;
  const { home_assistant: ha, mqtt } = config.smart_home;
  const devices: Device[] = [];
  let home: HomeAssistantDevice | undefined;
  if (ha) {
    home = new HomeAssistantDevice({
      settings: {
        url: ha.url,
        token: ha.token,
        domains: ha.domains,
        confirm: ha.confirm,
        subscribe: ha.subscribe,
        turns: ha.turns,
      },
      ...(options.learnDevices ? { learnEntities: (entities) => options.learnDevices!(entities) } : {}),
      clock,
      random,
      logger: logger("ha"),
    });
    devices.push(home);
  }
  if (mqtt) {
    devices.push(
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
    );
  }
  return {
    devices,
    actions: () => home?.actions() ?? [],
  };
}
