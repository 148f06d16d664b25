/**
 * Home Assistant's kind (`smart_home.home_assistant`): one HA instance over its WebSocket API, its entities taught to
 * the memory graph, every service call in `GET /api/smart_home/actions`. Its sensitive calls wait for the owner
 * through the tool registry's gate (`src/policy/`), like any tool's.
 *
 * @module
 */

import type { Config } from "../../config/schema.ts";
import { hostPort } from "../../net/host_port.ts";
import type { DeviceKind } from "../kind.ts";
import { HomeAssistantDevice } from "./ha_device.ts";

type HomeAssistantSection = NonNullable<Config["smart_home"]["home_assistant"]>;

/** `smart_home.home_assistant`. */
export const homeAssistantKind: DeviceKind<HomeAssistantSection> = {
  key: "smart_home.home_assistant",
  example:
    '{ url: "http://homeassistant.local:8123", token: "${HA_TOKEN}", domains: [light, switch, lock], confirm: [lock] }',
  section: (config) => config.smart_home.home_assistant ?? undefined,
  rights: (ha) => ({ net: [hostPort(ha.url)] }),
  secrets: (ha) => [ha.token],
  create: (ha, { clock, random, logger, learnDevices }) => {
    const home = new HomeAssistantDevice({
      settings: {
        url: ha.url,
        token: ha.token,
        domains: ha.domains,
        confirm: ha.confirm,
        subscribe: ha.subscribe,
        turns: ha.turns,
      },
      learnEntities: (entities) => learnDevices(entities),
      clock,
      random,
      logger: logger("ha"),
    });
    return { devices: [home], actions: () => home.actions() };
  },
};
