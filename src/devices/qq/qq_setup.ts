/**
 * The daemon's QQ parts: the core QQ device (with `onebot.enabled`), the `onebot` native a plugin may use instead,
 * which of the two the reverse WebSocket serves, and the forward-WebSocket client.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config/schema.ts";
import type { Device } from "../../io/device.ts";
import type { ChannelInfo } from "../../io/io_manager.ts";
import type { ServiceHost } from "../../service/service_host.ts";
import { ForwardClient } from "./forward_client.ts";
import { QqDevice, type QqMedia } from "./qq_device.ts";
import { OneBotRefusals } from "./refusals.ts";

/** Options of {@link setupQq}. */
export interface QqSetupOptions {
  /** The `onebot` section. */
  config: Config["onebot"];
  clock: Clock;
  /** In [0, 1), for the forward client's jitter. */
  random: () => number;
  /** The `qq` logger. */
  logger: Logger;
  /** The media the device sends (spoken replies, pictures) and QQ's voice format. */
  media?: QqMedia;
}

/** What {@link setupQq} gives the daemon. */
export interface QqSetup {
  /** The core QQ device, with `onebot.enabled`; otherwise undefined. */
  device: QqDevice | undefined;
  /**
   * The device factories a plugin's `native` may name: `onebot`, which gives no device while the core one is on (the
   * plugin, plugins/qq, then adds its instructions to homed's own QQ).
   */
  natives: Readonly<Record<string, () => Device | undefined>>;
  /** The device the reverse WebSocket serves now: the core one, or the plugin's while it is in the device table. */
  serving(table: { channels(): readonly ChannelInfo[] }): QqDevice | undefined;
  /** Starts the `onebot-forward` client when the core device is on and `onebot.forward_url` is set. */
  startForward(services: ServiceHost): Promise<void>;
}

/**
 * Makes the QQ parts from the `onebot` section.
 *
 * @example
 * ```ts
 * import { systemClock } from "../../clock.ts";
 * import { loadConfig } from "../../config/load.ts";
 * import { log } from "../../log/logging.ts";
 *
 * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const qq = setupQq({ config: config.onebot, clock: systemClock, random: Math.random, logger: log("qq") });
 * qq.device?.name; // "qq" with onebot.enabled
 * ```
 */
export function setupQq(options: QqSetupOptions): QqSetup {
  const { config: onebot, clock, logger } = options;
  // One count of refused connections for the daemon's life: a plugin's device is made again at each reload.
  const refusals = new OneBotRefusals({ clock, logger });
  const makeQq = () =>
    new QqDevice({
      settings: {
        owner: onebot.owner,
        allowUsers: onebot.allow_users,
        allowGroups: onebot.allow_groups,
        approveFriends: onebot.approve_friends,
        groupPrefix: onebot.group_prefix,
        actionTimeoutMs: onebot.action_timeout,
        splitAt: onebot.split_at,
        minSendIntervalMs: onebot.min_send_interval,
        queueLimit: onebot.queue_limit,
        maxFrameBytes: onebot.max_frame_bytes,
      },
      clock,
      logger,
      refusals,
      ...(options.media ? { media: options.media } : {}),
    });
  const qq = onebot.enabled ? makeQq() : undefined;
  // With onebot.enabled: false, a plugin with native: "onebot" (plugins/qq) may provide the QQ device instead.
  let pluginQq: QqDevice | undefined;
  return {
    device: qq,
    natives: {
      onebot: () => {
        // QQ is on through onebot.enabled: homed's own device serves, and the plugin (plugins/qq, shipped) is not
        // refused for it on every start.
        if (qq) return undefined;
        pluginQq = makeQq();
        return pluginQq;
      },
    },
    serving: (table) =>
      qq ?? (pluginQq && table.channels().some((channel) => channel.name === pluginQq!.name) ? pluginQq : undefined),
    async startForward(services) {
      if (!qq || onebot.forward_url === "") return;
      await services.start(
        new ForwardClient({
          url: onebot.forward_url,
          accessToken: onebot.access_token,
          device: qq,
          clock,
          random: options.random,
          logger,
        }),
      );
    },
  };
}
