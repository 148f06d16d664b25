/**
 * The one list of device kinds, and the loops over it that rights, secret redaction, `homed doctor`, the systemd
 * unit and the daemon use — so none of them names a kind. Adding a kind is a folder with its `kind.ts` and one line
 * here (the recipe is in this folder's README).
 *
 * @module
 */

import type { Config } from "../config/schema.ts";
import { cameraKind } from "./camera/kind.ts";
import { gpioKind } from "./gpio/kind.ts";
import { homeAssistantKind } from "./home_assistant/kind.ts";
import {
  type DeviceNode,
  type DoctorCheck,
  type KindContext,
  type KindParts,
  type KindRights,
  listKind,
} from "./kind.ts";
import { microphoneKind } from "./microphone/kind.ts";
import { mqttKind } from "./mqtt/kind.ts";
import { qqKind } from "./qq/kind.ts";
import { serialKind } from "./serial/kind.ts";
import { speakerKind } from "./speaker/kind.ts";
import { telegramKind } from "./telegram/kind.ts";
import { weixinKind } from "./weixin/kind.ts";

/** Every kind, in the order their devices join the IO layer. */
export const DEVICE_KINDS = [
  listKind(qqKind),
  listKind(serialKind),
  listKind(gpioKind),
  listKind(microphoneKind),
  listKind(speakerKind),
  listKind(cameraKind),
  listKind(homeAssistantKind),
  listKind(mqttKind),
  listKind(telegramKind),
  listKind(weixinKind),
] as const;

/** What the configured kinds need, together: each list without repeats. */
export interface NeededRights {
  net: string[];
  run: string[];
  /** Some kind receives media by URL; the extra hosts it is fetched from (any port). */
  fetchesMedia?: { hosts: string[] };
  nodes: DeviceNode[];
}

/**
 * The rights the configured kinds need (`homed flags`, the start-up check, the systemd unit).
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Config; // with smart_home.mqtt.url "mqtt://broker.local"
 * kindRights(config).net; // ["broker.local:1883"]
 * ```
 */
export function kindRights(config: Config): NeededRights {
  const all: KindRights[] = DEVICE_KINDS.map((kind) => kind.rights(config));
  const media = all.flatMap((rights) => rights.fetchesMedia ? [rights.fetchesMedia] : []);
  return {
    net: unique(all.flatMap((rights) => rights.net ?? [])),
    run: unique(all.flatMap((rights) => rights.run ?? [])),
    ...(media.length ? { fetchesMedia: { hosts: unique(media.flatMap((fetches) => fetches.hosts)) } } : {}),
    nodes: all.flatMap((rights) => rights.nodes ?? []),
  };
}

/**
 * The secrets of the configured kinds' sections (tokens, passwords), for the log's redaction.
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Config;
 * kindSecrets(config); // e.g. [onebot.access_token, smart_home.home_assistant.token]
 * ```
 */
export function kindSecrets(config: Config): string[] {
  return unique(DEVICE_KINDS.flatMap((kind) => kind.secrets(config)));
}

/**
 * `homed doctor`'s lines for the configured kinds, in the list's order.
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Config;
 * for (const check of await kindChecks(config)) console.log(check.ok ? "ok" : "FAIL", check.name, check.detail);
 * ```
 */
export async function kindChecks(config: Config): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  for (const kind of DEVICE_KINDS) checks.push(...await kind.doctor(config));
  return checks;
}

/**
 * The IO layer's routes: the kinds' defaults under `io.routes`, which win.
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Config; // with devices.microphone and devices.speaker
 * ioRoutes(config); // { mic: "speaker", ...config.io.routes }
 * ```
 */
export function ioRoutes(config: Config): Record<string, string> {
  return Object.assign({}, ...DEVICE_KINDS.map((kind) => kind.routes(config)), config.io.routes);
}

/** What every configured kind gives the daemon, merged. */
export interface MadeKinds {
  devices: KindParts["devices"];
  natives: NonNullable<KindParts["natives"]>;
  http: NonNullable<KindParts["http"]>;
  services: NonNullable<KindParts["services"]>;
  /** The kinds' actions, newest first per kind. */
  actions(): object[];
}

/**
 * Makes every configured kind's devices and parts.
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 * import type { KindContext } from "./kind.ts";
 *
 * declare const config: Config;
 * declare const context: KindContext;
 * const made = createKinds(config, context);
 * made.devices.map((device) => device.name); // e.g. ["qq", "serial", "ha"]
 * ```
 */
export function createKinds(config: Config, context: KindContext): MadeKinds {
  const parts = DEVICE_KINDS.map((kind) => kind.create(config, context));
  return {
    devices: parts.flatMap((part) => part.devices),
    natives: Object.assign({}, ...parts.map((part) => part.natives ?? {})),
    http: parts.flatMap((part) => part.http ?? []),
    services: parts.flatMap((part) => part.services ?? []),
    actions: () => parts.flatMap((part) => part.actions?.() ?? []),
  };
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}

// `homed weixin login` (a command of the CLI, above devices/) runs WeChat's QR login and keeps its credentials: the
// kind's folder is reached through this list only.
export { weixinLogin, WeixinLoginError, type WeixinLoginStep } from "./weixin/weixin_login.ts";
export { loadWeixinLogin, saveWeixinLogin, type WeixinCredentials, weixinDir } from "./weixin/weixin_state.ts";
