/**
 * Personal WeChat's kind (`weixin`): the `weixin` device over Tencent's iLink bot API, with the token from
 * `weixin.token` or the one `homed weixin login` stored in the data dir. It dials the API base and the CDN base (a QR
 * login may be redirected to another host, which `rights` cannot know ahead: the login, not the daemon, follows it).
 *
 * @module
 */

import type { Config } from "../../config/schema.ts";
import { hostPort } from "../../net/host_port.ts";
import type { DeviceKind, DoctorCheck, KindContext, KindParts, OwnerNotice } from "../kind.ts";
import { WeixinDevice } from "./weixin_device.ts";
import { WeixinConsoleLogin } from "./weixin_routes.ts";
import { loadWeixinLogin, weixinDir } from "./weixin_state.ts";

type WeixinSection = NonNullable<Config["weixin"]>;

/**
 * `weixin`: on when the section is set (not null).
 *
 * @example
 * ```ts
 * weixinKind.key; // "weixin"
 * ```
 */
export const weixinKind: DeviceKind<WeixinSection> = {
  key: "weixin",
  // The API and CDN bases are spelled out (they are the defaults) so that the contract test, which points every URL
  // of an example at a closed loopback port, never dials Tencent's hosts.
  example: '{ token: "${WEIXIN_TOKEN}", owner: "o9cq80abc@im.wechat", base_url: "https://ilinkai.weixin.qq.com", ' +
    'cdn_url: "https://novac2c.cdn.weixin.qq.com/c2c" }',
  section: (config) => config.weixin ?? undefined,
  rights: (weixin) => ({ net: [...new Set([hostPort(weixin.base_url), hostPort(weixin.cdn_url)])] }),
  secrets: (weixin) => [weixin.token],
  doctor: (weixin, config) => checkWeixin(weixin, config.daemon.data_dir),
  create: createWeixin,
};

function createWeixin(weixin: WeixinSection, context: KindContext, config: Config): KindParts {
  const device = new WeixinDevice({
    settings: {
      token: weixin.token,
      baseUrl: weixin.base_url.replace(/\/+$/, ""),
      cdnUrl: weixin.cdn_url.replace(/\/+$/, ""),
      owner: weixin.owner,
      allowUsers: weixin.allow_users,
      splitAt: weixin.split_at,
      minSendIntervalMs: weixin.min_send_interval,
      pollTimeoutMs: weixin.poll_timeout,
      queueLimit: weixin.queue_limit,
      dataDir: config.daemon.data_dir,
    },
    clock: context.clock,
    logger: context.logger("weixin"),
    random: context.random,
    media: { read: (id) => context.media.read(id) },
    ...(context.tellOwner ? { tellOwner: (notice: OwnerNotice) => context.tellOwner!(notice, "weixin") } : {}),
  });
  // The console's QR login and `homed weixin login`'s re-check reach this device through the kind's own routes.
  const login = new WeixinConsoleLogin({
    baseUrl: weixin.base_url.replace(/\/+$/, ""),
    dataDir: config.daemon.data_dir,
    owner: weixin.owner,
    clock: context.clock,
    logger: context.logger("weixin"),
    device,
  });
  return { devices: [device], http: [login.route()], services: [login] };
}

/**
 * `homed doctor`'s WeChat lines: a token (set, or stored by a login) of a plausible form, and who is answered.
 *
 * @example
 * ```ts
 * import type { Config } from "../../config/schema.ts";
 *
 * declare const config: Config;
 * for (const check of await checkWeixin(config.weixin!, config.daemon.data_dir)) console.log(check.name, check.detail);
 * ```
 */
export async function checkWeixin(weixin: WeixinSection, dataDir: string): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  let stored: Awaited<ReturnType<typeof loadWeixinLogin>>;
  let unreadable = "";
  try {
    stored = await loadWeixinLogin(dataDir);
  } catch (error) {
    unreadable = (error as Error).message;
  }
  const token = weixin.token !== "" ? weixin.token : stored?.botToken ?? "";
  const source = weixin.token !== "" ? "weixin.token" : `the login stored in ${weixinDir(dataDir)}`;
  if (token === "") {
    checks.push({
      ok: false,
      name: "weixin.token",
      detail: `no WeChat token: run \`homed weixin login\` and scan the QR code with the WeChat account the butler ` +
        `answers as (or set weixin.token)${unreadable ? `; the stored login is unreadable: ${unreadable}` : ""}`,
    });
  } else if (/\s/.test(token) || token.length < 16) {
    checks.push({
      ok: false,
      name: "weixin.token",
      detail: `the token from ${source} does not look like an iLink bot token (16 or more characters, no spaces): ` +
        "run `homed weixin login` again",
    });
  } else {
    checks.push({ ok: true, name: "weixin.token", detail: `a token from ${source}` });
  }
  if (weixin.owner === "" && weixin.allow_users.length === 0) {
    checks.push({
      ok: true,
      warn: true,
      name: "weixin.owner",
      detail: "nobody is answered on WeChat: set weixin.owner (the login prints the id of who scanned) or " +
        "weixin.allow_users",
    });
  }
  return checks;
}
