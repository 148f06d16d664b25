/**
 * QQ's kind (`onebot`): the QQ device through OneBot V11 (with `onebot.enabled`), the reverse WebSocket every
 * implementation connects to (mounted always: it says how to turn QQ on), the forward-WebSocket client when
 * `onebot.forward_url` is set, and the `onebot` native a plugin may use instead of the core device.
 *
 * @module
 */

import type { Hono } from "hono";
import type { Config } from "../../config/schema.ts";
import { hostPort } from "../../net/host_port.ts";
import type { DeviceKind, KindContext, KindParts } from "../kind.ts";
import { ForwardClient } from "./forward_client.ts";
import { QqDevice } from "./qq_device.ts";
import { checkOnebotMedia } from "./qq_doctor.ts";
import { OneBotRefusals } from "./refusals.ts";
import { onebotRoutes } from "./reverse_ws.ts";

type OnebotSection = Config["onebot"];

/** `onebot`: always listed (its endpoint answers even with QQ off); its device, rights and client only when on. */
export const qqKind: DeviceKind<OnebotSection> = {
  key: "onebot",
  example: '{ enabled: true, access_token: "${ONEBOT_ACCESS_TOKEN}", forward_url: "ws://127.0.0.1:3001" }',
  section: (config) => config.onebot,
  rights: (onebot) =>
    onebot.enabled
      ? {
        net: onebot.forward_url === "" ? [] : [hostPort(onebot.forward_url)],
        // A forward-WebSocket implementation's own address, any port: it may serve its media there.
        fetchesMedia: { hosts: onebot.forward_url === "" ? [] : [new URL(onebot.forward_url).hostname] },
      }
      : {},
  secrets: (onebot) => [onebot.access_token],
  doctor: (_onebot, config) => {
    const media = checkOnebotMedia(config);
    return Promise.resolve(media ? [media] : []);
  },
  create: createQq,
};

/** The QQ parts: the core device, the native a plugin may name, the reverse WebSocket and the forward client. */
function createQq(onebot: OnebotSection, context: KindContext): KindParts {
  const { clock, logger: loggerOf, media } = context;
  const logger = loggerOf("qq");
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
      media: { read: (id) => media.read(id), voice: (audio) => media.asSilk(audio) },
    });
  const qq = onebot.enabled ? makeQq() : undefined;
  // With onebot.enabled: false, a plugin with native: "onebot" (plugins/qq) may provide the QQ device instead.
  let pluginQq: QqDevice | undefined;
  // The device the reverse WebSocket serves now: the core one, or the plugin's while it is in the device table.
  const serving = () =>
    qq ?? (pluginQq && context.channels().some((channel) => channel.name === pluginQq!.name) ? pluginQq : undefined);
  return {
    devices: qq ? [qq] : [],
    natives: {
      onebot: () => {
        // QQ is on through onebot.enabled: homed's own device serves, and the plugin (plugins/qq, shipped) is not
        // refused for it on every start.
        if (qq) return undefined;
        pluginQq = makeQq();
        return pluginQq;
      },
    },
    http: [{
      mount<Variables extends object>(app: Hono<{ Variables: Variables }>) {
        onebotRoutes<Variables>({ path: onebot.path, accessToken: onebot.access_token, device: serving })(app);
      },
    }],
    services: qq && onebot.forward_url !== ""
      ? [
        new ForwardClient({
          url: onebot.forward_url,
          accessToken: onebot.access_token,
          device: qq,
          clock,
          random: context.random,
          logger,
        }),
      ]
      : [],
  };
}
