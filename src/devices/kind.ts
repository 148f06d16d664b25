/**
 * The shape of a device kind: everything homed needs to know about one kind of channel or device — its config
 * section, the rights it needs, its secrets, its `homed doctor` checks and how to make its devices — in one
 * descriptor beside the kind's code (`src/devices/<kind>/kind.ts`). The one list of kinds (`kinds.ts`) is what rights,
 * secret redaction, doctor, `homed service install` and the daemon loop over, so none of them names a kind and a
 * kind cannot be half added: a descriptor without `create` or with a mistyped section fails `deno check`.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Hono } from "hono";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import type { Device } from "../io/device.ts";
import type { ChannelInfo } from "../io/io_manager.ts";
import type { Service } from "../service/service.ts";

/** One line of `homed doctor`: passed or not, what was checked, and what to do. */
export interface DoctorCheck {
  ok: boolean;
  /** What was checked (`serial.sensors`, `gpio`, `qq.media`). */
  name: string;
  /** What was found, and when it failed what to do, naming the setting. */
  detail: string;
  /** Passed, but worth a look (printed `warn`; doctor still exits 0). */
  warn?: boolean;
}

/** A device node the systemd unit must let homed open (`DeviceAllow=`), and the group that usually owns it. */
export interface DeviceNode {
  /** A path (`/dev/ttyUSB0`) or a class (`char-alsa`). */
  node: string;
  /** The setting that named a path, checked for what a unit cannot grant (white space); none for a class. */
  setting?: string;
  /** The group that owns such nodes on Debian (`dialout`, `gpio`, `audio`, `video`). */
  group: string;
}

/** What a configured kind needs beyond homed's own rights. */
export interface KindRights {
  /** `host:port` (or a bare host: any port) it connects to. */
  net?: string[];
  /** Programs it runs (the daemon and doctor get `--allow-run` for exactly these). */
  run?: string[];
  /**
   * It receives pictures and voice by URL and homed fetches them (when something sees or hears them): from
   * `media.fetch_hosts`, `media.allow_hosts` and these hosts, any port.
   */
  fetchesMedia?: { hosts: string[] };
  /** Device nodes under systemd (`homed service install`). */
  nodes?: DeviceNode[];
}

/** What homed's media service does for devices (injected: devices sit below media). */
export interface KindMedia {
  /** Media homed holds, by id. */
  read(id: string): Promise<Uint8Array | undefined>;
  /** An utterance (WAV) as text. */
  hear(wav: Uint8Array, signal?: AbortSignal): Promise<string>;
  /** Words as speech (WAV). */
  speak(text: string): Promise<Uint8Array>;
  /** A picture homed took, described (and kept: its media id). */
  look(image: Uint8Array, signal?: AbortSignal): Promise<{ text: string; media?: { id: string; mime: string } }>;
  /** Audio as QQ's voice format (SILK). */
  asSilk(audio: Uint8Array): Promise<Uint8Array>;
}

/** A device in the home the memory graph learns by name (Home Assistant's entities, say). */
export interface LearnedDevice {
  /** Its id where it lives (`light.living_room`). */
  id: string;
  name: string;
  area: string | null;
  aliases: string[];
}

/** What a kind's devices may use of the rest of homed. */
export interface KindContext {
  clock: Clock;
  /** In [0, 1), for reconnect jitter. */
  random: () => number;
  /** Makes a named logger (each kind names its own: `qq`, `ha`, `mqtt`, `serial`…). */
  logger(name: string): Logger;
  media: KindMedia;
  /** Teaches the memory graph the devices' names. */
  learnDevices(devices: LearnedDevice[]): Promise<void>;
  /** The IO layer's device table now (a plugin may bring a kind's device and take it away again). */
  channels(): readonly ChannelInfo[];
  /**
   * Tells the owner, in the persona's language, on one of their own chats other than device `avoid`'s (a chat in
   * trouble — a WeChat session that expired — cannot carry its own news). Nothing when no other chat has an owner.
   */
  tellOwner?(text: OwnerNotice, avoid: string): void;
}

/** A notice for the owner, in both languages homed speaks (the persona's is chosen). */
export interface OwnerNotice {
  en: string;
  zh: string;
}

/** A route the HTTP API mounts for a kind (the OneBot reverse WebSocket). */
export interface KindRoute {
  mount<Variables extends object>(app: Hono<{ Variables: Variables }>): void;
}

/** What a kind gives the daemon. */
export interface KindParts {
  /** Its devices, in order (none when the section turns it off). */
  devices: Device[];
  /** Device factories a plugin's `native` may name. */
  natives?: Record<string, () => Device | undefined>;
  /** Routes of the HTTP API. */
  http?: KindRoute[];
  /** Services started once the agent runs (a client that dials out and hands in messages). */
  services?: Service[];
  /** Its part of `GET /api/smart_home/actions`: every action it took, newest first. */
  actions?(): readonly object[];
}

/**
 * One kind, typed by its config section: every function gets the section `section` found, so a descriptor reading a
 * key its section does not have fails `deno check`.
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 * import { type DeviceKind } from "./kind.ts";
 *
 * type Speaker = NonNullable<Config["devices"]["speaker"]>;
 * declare const speakerKind: DeviceKind<Speaker>;
 * speakerKind.key; // "devices.speaker"
 * ```
 */
export interface DeviceKind<Section> {
  /** Where its section is in the config (`devices.serial`, `smart_home.mqtt`): for messages and the docs. */
  readonly key: string;
  /**
   * Its section as YAML (flow style, secrets as `${VARIABLES}`), a working example: the contract test every kind
   * passes (`kinds_contract_test.ts`) turns the kind on with it, its peers made unreachable.
   */
  readonly example: string;
  /** Its section, or undefined when the config does not turn it on (it then costs nothing). */
  section(config: Config): Section | undefined;
  /** The rights its devices need. */
  rights?(section: Section, config: Config): KindRights;
  /** The secrets in its section, kept out of every log line. */
  secrets?(section: Section): readonly string[];
  /** Its `homed doctor` lines. */
  doctor?(section: Section, config: Config): Promise<DoctorCheck[]>;
  /** Routes the IO layer gets by default, under `io.routes` (which win): the `mic` answered on the `speaker`. */
  routes?(section: Section, config: Config): Record<string, string>;
  /** Makes its devices and what else it gives homed. */
  create(section: Section, context: KindContext, config: Config): KindParts;
}

/** A kind with its section's type closed over: what the list holds and loops over. */
export interface ListedKind {
  readonly key: string;
  readonly example: string;
  rights(config: Config): KindRights;
  secrets(config: Config): readonly string[];
  doctor(config: Config): Promise<DoctorCheck[]>;
  routes(config: Config): Record<string, string>;
  create(config: Config, context: KindContext): KindParts;
}

/**
 * Lists a kind: each call finds its section once and hands it on; an unconfigured kind gives nothing.
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 * import { listKind } from "./kind.ts";
 *
 * const speaker = listKind({
 *   key: "devices.speaker",
 *   example: '{ command: ["aplay", "-q"] }',
 *   section: (config: Config) => config.devices.speaker ?? undefined,
 *   rights: (section) => ({ run: [section.command[0]!] }),
 *   create: () => ({ devices: [] }),
 * });
 * speaker.key; // "devices.speaker"
 * ```
 */
export function listKind<Section>(kind: DeviceKind<Section>): ListedKind {
  return {
    key: kind.key,
    example: kind.example,
    rights(config) {
      const section = kind.section(config);
      return section === undefined || !kind.rights ? {} : kind.rights(section, config);
    },
    secrets(config) {
      const section = kind.section(config);
      return section === undefined || !kind.secrets ? [] : kind.secrets(section).filter((secret) => secret !== "");
    },
    async doctor(config) {
      const section = kind.section(config);
      return section === undefined || !kind.doctor ? [] : await kind.doctor(section, config);
    },
    routes(config) {
      const section = kind.section(config);
      return section === undefined || !kind.routes ? {} : kind.routes(section, config);
    },
    create(config, context) {
      const section = kind.section(config);
      return section === undefined ? { devices: [] } : kind.create(section, context, config);
    },
  };
}
