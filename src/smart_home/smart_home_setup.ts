/**
 * The daemon's smart-home step: the owner's confirmations (always: any tool may ask), and — when configured — the
 * Home Assistant device (`smart_home.home_assistant`) and the MQTT device (`smart_home.mqtt`). What they need of
 * the rest of homed is injected: sending the question to the owner, teaching the memory graph the devices' names.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import type { Device } from "../io/device.ts";
import { type ConfirmationOutcome, Confirmations } from "./confirmations.ts";
import { type AuditEntry, HomeAssistantDevice, type LearnedEntity } from "./home_assistant/ha_device.ts";
import { MqttDevice } from "./mqtt/mqtt_device.ts";

/** Options of {@link setupSmartHome}. */
export interface SmartHomeSetupOptions {
  config: Pick<Config, "smart_home" | "onebot">;
  /** Sends a message to a channel (the IO manager's `send`, known once it exists). */
  send(channel: string, text: string): Promise<void>;
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
  confirmations: Confirmations;
  /** `GET /api/smart_home/actions`: every action the butler took or asked for, newest first. */
  audit(): { actions: AuditEntry[]; confirmations: ConfirmationOutcome[] };
}

const OUTCOMES_KEPT = 500;

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
  const outcomes: ConfirmationOutcome[] = [];
  const confirmations = new Confirmations({
    // Asked on the owner's own QQ when someone else asked; with no owner set, only the owner's own requests can wait.
    ownerChannel: config.onebot.enabled && config.onebot.owner !== "" ? `qq:private:${config.onebot.owner}` : undefined,
    send: (channel, text) => options.send(channel, text),
    timeoutMs: ha?.confirm_timeout ?? 120_000,
    clock,
    logger: logger("smart_home"),
    onOutcome: (outcome) => {
      outcomes.unshift(outcome);
      outcomes.length = Math.min(outcomes.length, OUTCOMES_KEPT);
    },
  });
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
      askOwner: (request) => confirmations.ask(request),
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
    confirmations,
    audit: () => ({ actions: home?.actions() ?? [], confirmations: [...outcomes] }),
  };
}
