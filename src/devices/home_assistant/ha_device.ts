/**
 * The Home Assistant device (`ha`): one HA instance over its WebSocket API ({@link HaConnection}), configured under
 * `smart_home.home_assistant`. It keeps a cache of what HA reports — states (`get_states`, kept current by
 * `state_changed` events), services (`get_services`), areas, devices and the entity registry (with aliases) —
 * loaded on every connection and again when HA says a registry or its services changed.
 *
 * Tools (both for household members and the owner): `ha_states {"area"?, "domain"?, "query"?}` lists entities in
 * compact lines; `ha_call_service {"domain", "service", "entity_id", "data"?}` calls a service, checked first against
 * what HA reports (the entity exists and is in that domain, the domain has that service) and limited to
 * `smart_home.home_assistant.domains`. A service on a `confirm` domain or entity (locks, alarms, the garage door) is
 * declared `sensitive`: the tool registry's gate holds it for the owner's yes before it reaches this device. Every call
 * that reaches it — refused, confirmed, done or failed — is in the audit list ({@link HomeAssistantDevice.actions})
 * with the turn and who asked.
 *
 * State changes of `subscribe` entities become device events (`ha.state`, one source per entity, `ha:<entity_id>`,
 * so the agent's event log keeps one row per entity however chatty it is). When the input queue is full, changes
 * wait here coalesced per entity (the latest state, the first `from`, a count) and go as the queue takes them. After
 * a reconnect, the changes missed while away are handed in too (compared with the new snapshot).
 *
 * Entity names, areas and aliases go to `learnEntities` (the memory graph) whenever they change.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, sleepWith } from "../../clock.ts";
import type { Trust } from "../../identity/trust.ts";
import type { Device, DeviceContext, DeviceTool, InputDraft } from "../../io/device.ts";
import { LaneFullError } from "../../io/fair_queue.ts";
import { waitForRoom } from "../../io/lane_room.ts";
import { ShuttingDown } from "../../io/turn_error.ts";
import type { OutputEvent } from "../../io/event.ts";
import type { HomeTarget } from "../../io/home_target.ts";
import { untrustedLine } from "../../text/untrusted.ts";
import type { ToolContext } from "../../tools/tool.ts";
import { HaCommandError, HaConnection, type HaConnectionState, shownUrl } from "./ha_connection.ts";
import { haTargets } from "./ha_targets.ts";

/** `smart_home.home_assistant`, as the device takes it. */
export interface HomeAssistantSettings {
  /** HA's base URL, e.g. `http://homeassistant.local:8123`. */
  url: string;
  /** A long-lived access token (never logged). */
  token: string;
  /** Domains whose services the butler may call (`light`, `switch`…). */
  domains: string[];
  /** Domains (`lock`) or entity ids and globs (`cover.garage`) whose services run only on the owner's yes. */
  confirm: string[];
  /** Entity ids or globs (`binary_sensor.*door*`) whose state changes become device events. */
  subscribe: string[];
  /**
   * Entity ids or globs whose state changes are *messages* to the butler (a turn starts, answered where
   * `io.routes` sends `ha:<entity>` — the owner's QQ, say): the rules a household wants acted on ("the front door
   * opened"). Empty by default: changes are only recorded.
   */
  turns?: string[];
}

/** The turn a call was asked in. */
interface AskingTurn {
  eventId: string;
  source: string;
  sender: string;
  trust: Trust;
}

/** One entity as the memory graph learns it. */
export interface LearnedEntity {
  id: string;
  name: string;
  area: string | null;
  aliases: string[];
}

/** Options of {@link HomeAssistantDevice}. */
export interface HomeAssistantDeviceOptions {
  settings: HomeAssistantSettings;
  /** Called with every entity's name, area and aliases whenever any of them changes. */
  learnEntities?: (entities: LearnedEntity[]) => void | Promise<void>;
  clock: Clock;
  logger: Logger;
  /** Jitter of the reconnect backoff (`Math.random` by default). */
  random?: () => number;
  /** Deadline of each command, 10 s by default. */
  commandTimeoutMs?: number;
  /** Largest frame taken from HA, 32 MiB by default. */
  maxFrameBytes?: number;
  /** Interval of the keepalive ping, 30 s by default; 0: none. */
  pingIntervalMs?: number;
}

/** What an audited action came to. */
export type AuditOutcome = "refused" | "asked" | "confirmed" | "done" | "failed";

/** One action the butler was asked to take, for `GET /api/smart_home/actions`. */
export interface AuditEntry {
  /** `ha-1`, `ha-2`… */
  id: string;
  /** When it was asked (ISO 8601). */
  at: string;
  /** The id of the input event whose turn asked for it. */
  turn: string;
  source: string;
  sender: string;
  trust: Trust;
  domain: string;
  service: string;
  entity_id: string;
  /** The service data, codes and passwords masked. */
  data: Record<string, unknown>;
  /** Whether it needed the owner's yes. */
  confirm: boolean;
  /** Where it stands now. */
  outcome: AuditOutcome;
  /** HA's answer, the refusal, or the error. */
  detail: string;
  /** Every step, oldest first. */
  steps: Array<{ at: string; outcome: AuditOutcome; detail: string }>;
}

/** The device's `/api/status` entry. */
export interface HomeAssistantStatus {
  /** `smart_home.home_assistant.url`, without credentials. */
  url: string;
  state: HaConnectionState;
  ha_version: string | null;
  /** Entities in the state cache. */
  entities: number;
  /** Entities matching `subscribe`. */
  subscribed: number;
  reconnects: number;
  last_error: string | null;
  /** Actions in the audit list. */
  actions: number;
  connected_at: string | null;
  next_retry_at: string | null;
  /** `ha.state` events handed in. */
  events: number;
  /** State changes folded into a waiting one of the same entity (the input queue was full). */
  coalesced: number;
  /** State changes waiting for the input queue. */
  waiting_events: number;
}

/** Most entries the audit list keeps (the oldest go first). */
export const AUDIT_LIMIT = 500;
/** Most lines `ha_states` gives; the rest are counted. */
export const STATES_LIMIT = 50;
/** Deadline of `call_service` (HA answers once the service has run). */
const CALL_TIMEOUT_MS = 15_000;
/** Longest `data` taken, as JSON. */
const MAX_DATA_CHARS = 4_096;
/** Entity ids per `get_entries` command (aliases), to keep each frame small. */
const ALIAS_BATCH = 200;
/** Keys of service data that are targets: a target goes in `entity_id`, where it is checked. */
const TARGET_KEYS = ["entity_id", "device_id", "area_id", "floor_id", "label_id"];
/** Keys of service data that are secrets (an alarm code): masked in the audit list, the summary and logs. */
const SECRET_KEY = /code|pin|password|passcode|secret|token/i;

/** Attributes worth a word in `ha_states`, by domain. */
const KEY_ATTRIBUTES: Record<string, readonly string[]> = {
  light: ["brightness", "color_temp_kelvin"],
  climate: ["current_temperature", "temperature", "hvac_action"],
  water_heater: ["current_temperature", "temperature"],
  humidifier: ["humidity"],
  cover: ["current_position"],
  fan: ["percentage"],
  media_player: ["media_title", "volume_level", "source"],
  vacuum: ["battery_level"],
  binary_sensor: ["device_class"],
  weather: ["temperature", "humidity"],
};

/** How a service reads in the owner's question. */
const VERBS: Record<string, string> = {
  unlock: "Unlock",
  lock: "Lock",
  open: "Open",
  open_cover: "Open",
  close_cover: "Close",
  stop_cover: "Stop",
  set_cover_position: "Move",
  toggle: "Toggle",
  turn_on: "Turn on",
  turn_off: "Turn off",
  alarm_disarm: "Disarm",
  alarm_arm_away: "Arm (away)",
  alarm_arm_home: "Arm (home)",
  alarm_arm_night: "Arm (night)",
  alarm_arm_vacation: "Arm (vacation)",
  alarm_arm_custom_bypass: "Arm (custom bypass)",
  alarm_trigger: "Trigger",
};

const DOMAIN = /^[a-z0-9_]+$/;
const ENTITY_PATTERN = /^[a-z0-9_*?]+\.[a-z0-9_*?]+$/;

/** A state as HA reports it. */
interface HaState {
  entity_id: string;
  state: string;
  attributes: Record<string, unknown>;
  last_changed: string | undefined;
  last_updated: string | undefined;
}

interface RegistryEntry {
  name: string | null;
  originalName: string | null;
  areaId: string | null;
  deviceId: string | null;
  hidden: boolean;
  aliases: string[];
}

interface Area {
  id: string;
  name: string;
  aliases: string[];
  floorId: string | null;
}

interface Floor {
  name: string;
  aliases: string[];
}

/** A state change that waits for the input queue. */
interface HeldChange {
  draft: InputDraft;
  changes: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function stringOr<T>(value: unknown, fallback: T): string | T {
  return typeof value === "string" ? value : fallback;
}

function readState(value: unknown): HaState | undefined {
  if (!isRecord(value) || typeof value.entity_id !== "string" || typeof value.state !== "string") return undefined;
  return {
    entity_id: value.entity_id,
    state: value.state,
    attributes: isRecord(value.attributes) ? value.attributes : {},
    last_changed: stringOr(value.last_changed, undefined),
    last_updated: stringOr(value.last_updated, undefined),
  };
}

function domainOf(entityId: string): string {
  return entityId.slice(0, entityId.indexOf("."));
}

/**
 * A matcher for entity ids and globs (`*` any run of characters, `?` one).
 *
 * @example
 * ```ts
 * const door = entityMatcher(["binary_sensor.*door*", "lock.front"]);
 * door("binary_sensor.back_door_contact"); // true
 * door("binary_sensor.motion"); // false
 * ```
 */
export function entityMatcher(patterns: readonly string[]): (entityId: string) => boolean {
  const exact = new Set(patterns.filter((pattern) => !/[*?]/.test(pattern)));
  const globs = patterns.filter((pattern) => /[*?]/.test(pattern)).map((pattern) =>
    new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`)
  );
  return (entityId) => exact.has(entityId) || globs.some((glob) => glob.test(entityId));
}

/**
 * The owner's question for a service call: a verb, the entity, and the service.
 *
 * @example
 * ```ts
 * actionSummary("lock", "unlock", "lock.front_door", {}); // "Unlock lock.front_door (lock.unlock)"
 * actionSummary("alarm_control_panel", "alarm_disarm", "alarm_control_panel.home", { code: "1234" });
 * // 'Disarm alarm_control_panel.home (alarm_control_panel.alarm_disarm) with {"code":"***"}'
 * ```
 */
export function actionSummary(
  domain: string,
  service: string,
  entityId: string,
  data: Record<string, unknown>,
): string {
  const verb = VERBS[service] ?? `${service.charAt(0).toUpperCase()}${service.slice(1).replaceAll("_", " ")}`;
  const masked = maskData(data);
  const extra = Object.keys(masked).length ? ` with ${JSON.stringify(masked)}` : "";
  return `${verb} ${entityId} (${domain}.${service})${extra}`;
}

function maskData(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, SECRET_KEY.test(key) ? "***" : value]));
}

function shownValue(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "null";
  return untrustedLine(text.length > 40 ? `${text.slice(0, 39)}…` : text);
}

function iso(time: number | null): string | null {
  return time === null ? null : new Date(time).toISOString();
}

function normal(text: string): string {
  return text.trim().toLowerCase();
}

/** Runs `work` once at a time; a call while it runs makes it run once more after. */
class Coalesced {
  #running: Promise<void> | undefined;
  #again = false;

  constructor(private readonly work: () => Promise<void>) {}

  run(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          await this.work();
        } while (this.#again);
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }
}

/** The `ha` device: one Home Assistant. */
export class HomeAssistantDevice implements Device {
  readonly name = "ha";
  readonly type = "home_assistant";
  readonly description: string;
  readonly #options: HomeAssistantDeviceOptions;
  readonly #settings: HomeAssistantSettings;
  readonly #connection: HaConnection;
  readonly #subscribed: (entityId: string) => boolean;
  readonly #turns: (entityId: string) => boolean;
  readonly #confirmEntity: (entityId: string) => boolean;
  readonly #confirmDomains: ReadonlySet<string>;
  readonly #allowedDomains: ReadonlySet<string>;
  readonly #tools: readonly DeviceTool[];
  #context: DeviceContext | undefined;
  #abort = new AbortController();
  #states = new Map<string, HaState>();
  #services = new Map<string, Set<string>>();
  #areas = new Map<string, Area>();
  #floors = new Map<string, Floor>();
  /** The entities as local intents' targets, made again when names, places or the set of entities change. */
  #targets: HomeTarget[] | undefined;
  #deviceAreas = new Map<string, string>();
  #registry = new Map<string, RegistryEntry>();
  /** Whether a snapshot was ever loaded (changes are compared with the previous one on reconnect). */
  #loaded = false;
  /** When the cache last matched HA (ms since the epoch). */
  #seenAt: number | null = null;
  /** While a snapshot loads: the state events that came meanwhile, to apply on top of it when they are newer. */
  #during: Array<{ event: Record<string, unknown>; seq: number }> | undefined;
  #audit: AuditEntry[] = [];
  #auditSeq = 0;
  #events = 0;
  #coalesced = 0;
  #held = new Map<string, HeldChange>();
  #flushing: Promise<void> | undefined;
  #learned = "";
  #learning: Promise<void> = Promise.resolve();
  #learnQueued = false;
  #aliasesUnsupported = false;
  #floorsUnsupported = false;
  readonly #refreshRegistry = new Coalesced(() => this.#loadRegistry());
  readonly #refreshServices = new Coalesced(() => this.#loadServices());

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const ha = new HomeAssistantDevice({
   *   settings: {
   *     url: "http://homeassistant.local:8123",
   *     token: Deno.env.get("HA_TOKEN") ?? "",
   *     domains: ["light", "switch", "climate", "cover", "media_player"],
   *     confirm: ["lock", "alarm_control_panel", "cover.garage"],
   *     subscribe: ["binary_sensor.*door*"],
   *   },
   *   clock: systemClock,
   *   logger: getLogger(["homed", "ha"]),
   * });
   * ha.tools().map((tool) => tool.name); // ["ha_states", "ha_call_service"]
   * ```
   */
  constructor(options: HomeAssistantDeviceOptions) {
    this.#options = options;
    const settings = options.settings;
    this.#settings = settings;
    for (const domain of settings.domains) {
      if (!DOMAIN.test(domain)) {
        throw new TypeError(
          `smart_home.home_assistant.domains: ${JSON.stringify(domain)} is not a Home Assistant domain ` +
            `(lower-case letters, digits and _, such as light or media_player)`,
        );
      }
    }
    for (const entry of settings.confirm) {
      if (!DOMAIN.test(entry) && !ENTITY_PATTERN.test(entry)) {
        throw new TypeError(
          `smart_home.home_assistant.confirm: ${JSON.stringify(entry)} is neither a domain (lock) nor an entity id ` +
            `or glob (cover.garage, cover.*garage*)`,
        );
      }
    }
    for (const entry of settings.subscribe) {
      if (!ENTITY_PATTERN.test(entry)) {
        throw new TypeError(
          `smart_home.home_assistant.subscribe: ${JSON.stringify(entry)} is not an entity id or glob ` +
            `(binary_sensor.front_door, binary_sensor.*door*)`,
        );
      }
    }
    this.#confirmDomains = new Set(settings.confirm.filter((entry) => DOMAIN.test(entry)));
    this.#confirmEntity = entityMatcher(settings.confirm.filter((entry) => !DOMAIN.test(entry)));
    // A confirm domain is callable, on the owner's yes: `confirm: [lock]` would mean nothing otherwise.
    this.#allowedDomains = new Set([...settings.domains, ...this.#confirmDomains]);
    this.#subscribed = entityMatcher(settings.subscribe);
    this.#turns = entityMatcher(settings.turns ?? []);
    this.#connection = new HaConnection({
      url: settings.url,
      token: settings.token,
      clock: options.clock,
      logger: options.logger,
      ...(options.random ? { random: options.random } : {}),
      ...(options.commandTimeoutMs !== undefined ? { commandTimeoutMs: options.commandTimeoutMs } : {}),
      ...(options.maxFrameBytes !== undefined ? { maxFrameBytes: options.maxFrameBytes } : {}),
      ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
      onConnected: () => this.#loadAll(),
    });
    this.#connection.subscribe(
      { type: "subscribe_events", event_type: "state_changed" },
      (event, seq) => this.#onStateEvent(event, seq),
    );
    for (
      const eventType of [
        "area_registry_updated",
        "device_registry_updated",
        "entity_registry_updated",
        "floor_registry_updated",
      ]
    ) {
      this.#connection.subscribe({ type: "subscribe_events", event_type: eventType }, () => this.#registryChanged());
    }
    for (const eventType of ["service_registered", "service_removed"]) {
      this.#connection.subscribe({ type: "subscribe_events", event_type: eventType }, () => this.#servicesChanged());
    }
    this.description = `Home Assistant at ${shownUrl(settings.url)}: states of its entities, and services of ` +
      `${this.#domainList()}`;
    this.#tools = [this.#statesTool(), this.#callTool()];
  }

  tools(): readonly DeviceTool[] {
    return this.#tools;
  }

  /**
   * Connects; resolves once the first attempt ended (a few seconds at most). A refused token or an HA that is not
   * there is logged and shown in the status — the device stays, trying again with backoff, and homed runs on.
   */
  async start(context: DeviceContext): Promise<void> {
    this.#context = context;
    this.#abort = new AbortController();
    if (this.#settings.token.trim() === "") {
      this.#options.logger.error(
        "smart_home.home_assistant.token is empty; make a long-lived access token in your Home Assistant profile",
      );
    }
    await this.#connection.start();
  }

  async stop(): Promise<void> {
    this.#abort.abort(new Error("The Home Assistant device stopped"));
    await this.#connection.stop();
    await this.#flushing;
    await this.#learning;
    this.#context = undefined;
  }

  /** Home Assistant takes no output: it is reached through its tools. */
  outputCapabilities(): number {
    return 0;
  }

  send(event: OutputEvent): Promise<void> {
    return Promise.reject(
      new TypeError(`The Home Assistant device (ha) takes no ${event.type} output; use its tools`),
    );
  }

  /** The audit list, newest first (at most {@link AUDIT_LIMIT}). */
  actions(): AuditEntry[] {
    return this.#audit.map((entry) => structuredClone(entry)).reverse();
  }

  status(): Record<string, unknown> {
    const connection = this.#connection;
    let subscribed = 0;
    for (const entityId of this.#states.keys()) if (this.#subscribed(entityId)) subscribed++;
    const status: HomeAssistantStatus = {
      url: shownUrl(this.#settings.url),
      state: connection.state,
      ha_version: connection.haVersion,
      entities: this.#states.size,
      subscribed,
      reconnects: connection.reconnects,
      last_error: this.#settings.token.trim() === ""
        ? "smart_home.home_assistant.token is empty"
        : connection.lastError,
      actions: this.#audit.length,
      connected_at: iso(connection.connectedAt),
      next_retry_at: iso(connection.nextRetryAt),
      events: this.#events,
      coalesced: this.#coalesced,
      waiting_events: this.#held.size,
    };
    return { ...status };
  }

  // --- the cache ---------------------------------------------------------------------------------------------------

  /** On every connection: states and services, then the registries; changes missed while away are handed in. */
  async #loadAll(): Promise<void> {
    this.#during = [];
    let snapshot: Map<string, HaState>;
    try {
      const [states] = await Promise.all([
        this.#connection.request<unknown[]>("get_states", {}, { timeoutMs: 30_000 }),
        this.#loadServices(),
      ]);
      snapshot = new Map();
      for (const item of Array.isArray(states.result) ? states.result : []) {
        const state = readState(item);
        if (state) snapshot.set(state.entity_id, state);
      }
      // Events that came after the snapshot's frame are newer than it: applied on top. Earlier ones are in it.
      for (const { event, seq } of this.#during) {
        if (seq <= states.seq) continue;
        const entityId = event.entity_id;
        if (typeof entityId !== "string") continue;
        const next = readState(event.new_state);
        if (next) snapshot.set(entityId, next);
        else snapshot.delete(entityId);
      }
    } finally {
      this.#during = undefined;
    }
    const previous = this.#states;
    this.#states = snapshot;
    this.#targets = undefined;
    this.#seenAt = this.#options.clock.now();
    if (this.#loaded) {
      // What changed while the connection was down (HA restarted, a door opened meanwhile).
      for (const entityId of new Set([...previous.keys(), ...snapshot.keys()])) {
        this.#changed(entityId, previous.get(entityId), snapshot.get(entityId));
      }
    }
    this.#loaded = true;
    await this.#loadRegistry();
  }

  async #loadServices(): Promise<void> {
    const result = await this.#connection.command<unknown>("get_services");
    const services = new Map<string, Set<string>>();
    if (isRecord(result)) {
      for (const [domain, list] of Object.entries(result)) {
        if (isRecord(list)) services.set(domain, new Set(Object.keys(list)));
      }
    }
    this.#services = services;
  }

  /** Areas, devices (for the area an entity has through its device) and the entity registry with aliases. */
  async #loadRegistry(): Promise<void> {
    const { logger } = this.#options;
    const list = async (type: string): Promise<unknown[]> => {
      try {
        const result = await this.#connection.command<unknown>(type);
        return Array.isArray(result) ? result : [];
      } catch (error) {
        if (error instanceof HaCommandError && (error.code === "not_connected" || error.code === "connection_lost")) {
          throw error;
        }
        logger.warning("Home Assistant did not list {type}: {error}; names and areas may be missing", {
          type,
          error: (error as Error).message,
        });
        return [];
      }
    };
    const [areaList, deviceList, entityList, floorList] = await Promise.all([
      list("config/area_registry/list"),
      list("config/device_registry/list"),
      list("config/entity_registry/list"),
      this.#floorsUnsupported ? Promise.resolve([]) : this.#listFloors(),
    ]);
    const floors = new Map<string, Floor>();
    for (const item of floorList) {
      if (!isRecord(item) || typeof item.floor_id !== "string") continue;
      floors.set(item.floor_id, { name: stringOr(item.name, item.floor_id), aliases: stringsOf(item.aliases) });
    }
    const areas = new Map<string, Area>();
    for (const item of areaList) {
      if (!isRecord(item) || typeof item.area_id !== "string") continue;
      areas.set(item.area_id, {
        id: item.area_id,
        name: stringOr(item.name, item.area_id),
        aliases: stringsOf(item.aliases),
        floorId: stringOr(item.floor_id, null),
      });
    }
    const deviceAreas = new Map<string, string>();
    for (const item of deviceList) {
      if (isRecord(item) && typeof item.id === "string" && typeof item.area_id === "string") {
        deviceAreas.set(item.id, item.area_id);
      }
    }
    const registry = new Map<string, RegistryEntry>();
    for (const item of entityList) {
      if (!isRecord(item) || typeof item.entity_id !== "string") continue;
      registry.set(item.entity_id, {
        name: stringOr(item.name, null),
        originalName: stringOr(item.original_name, null),
        areaId: stringOr(item.area_id, null),
        deviceId: stringOr(item.device_id, null),
        hidden: item.hidden_by !== null && item.hidden_by !== undefined,
        aliases: [],
      });
    }
    await this.#loadAliases(registry);
    this.#areas = areas;
    this.#floors = floors;
    this.#deviceAreas = deviceAreas;
    this.#registry = registry;
    this.#targets = undefined;
    this.#learn();
  }

  /** Floors (Home Assistant 2024.4 and later); an older one without them is asked once. */
  async #listFloors(): Promise<unknown[]> {
    try {
      const result = await this.#connection.command<unknown>("config/floor_registry/list");
      return Array.isArray(result) ? result : [];
    } catch (error) {
      if (error instanceof HaCommandError && (error.code === "not_connected" || error.code === "connection_lost")) {
        throw error;
      }
      if (error instanceof HaCommandError && error.code === "unknown_command") this.#floorsUnsupported = true;
      else {
        this.#options.logger.warning("Home Assistant did not list its floors: {error}", {
          error: (error as Error).message,
        });
      }
      return [];
    }
  }

  /**
   * The entities local intents may act on or read, by their names, aliases, area and floor (hidden ones left out).
   * Made again only when names, places or the set of entities changed; states are read at each use.
   */
  homeTargets(): readonly HomeTarget[] {
    this.#targets ??= haTargets(
      [...this.#states.keys()].filter((id) => !this.#registry.get(id)?.hidden).sort().map((id) => {
        const area = this.#areaOf(id);
        const floor = area?.floorId ? this.#floors.get(area.floorId) : undefined;
        return {
          id,
          name: this.#nameOf(id),
          aliases: this.#registry.get(id)?.aliases ?? [],
          area,
          floor,
          current: () => this.#states.get(id),
        };
      }),
    );
    return this.#targets;
  }

  /** Entity aliases are only in the extended entries (`config/entity_registry/get_entries`), asked in batches. */
  async #loadAliases(registry: Map<string, RegistryEntry>): Promise<void> {
    if (this.#aliasesUnsupported) return;
    const ids = [...registry.keys()].filter((id) => this.#states.has(id) && !registry.get(id)!.hidden);
    for (let at = 0; at < ids.length; at += ALIAS_BATCH) {
      let result: unknown;
      try {
        result = await this.#connection.command("config/entity_registry/get_entries", {
          entity_ids: ids.slice(at, at + ALIAS_BATCH),
        });
      } catch (error) {
        if (error instanceof HaCommandError && (error.code === "not_connected" || error.code === "connection_lost")) {
          throw error;
        }
        if (error instanceof HaCommandError && error.code === "unknown_command") {
          this.#aliasesUnsupported = true;
          this.#options.logger.info("This Home Assistant has no entity aliases to read (get_entries is unknown)");
        } else {
          // Aliases are a nicety: without them names and areas still work, and the connection stays.
          this.#options.logger.warning("Home Assistant did not give entity aliases: {error}", {
            error: (error as Error).message,
          });
        }
        return;
      }
      if (!isRecord(result)) continue;
      for (const [entityId, entry] of Object.entries(result)) {
        const known = registry.get(entityId);
        if (known && isRecord(entry) && Array.isArray(entry.aliases)) {
          known.aliases = entry.aliases.filter((alias): alias is string => typeof alias === "string");
        }
      }
    }
  }

  #registryChanged(): void {
    this.#refreshRegistry.run().catch((error) => this.#refreshFailed("registries", error));
  }

  #servicesChanged(): void {
    this.#refreshServices.run().catch((error) => this.#refreshFailed("services", error));
  }

  #refreshFailed(what: string, error: unknown): void {
    // Loaded again on the next connection anyway.
    const level = error instanceof HaCommandError && error.code !== "timeout" ? "debug" : "warning";
    this.#options.logger[level]("Reloading the Home Assistant {what} failed: {error}", {
      what,
      error: (error as Error).message,
    });
  }

  #onStateEvent(event: unknown, seq: number): void {
    if (!isRecord(event) || !isRecord(event.data)) return;
    const data = event.data;
    const entityId = data.entity_id;
    if (typeof entityId !== "string") return;
    this.#during?.push({ event: data, seq });
    const before = this.#states.get(entityId);
    const after = readState(data.new_state);
    if (after) this.#states.set(entityId, after);
    else this.#states.delete(entityId);
    this.#seenAt = this.#options.clock.now();
    this.#changed(entityId, before, after);
    if (!before || !after || before.attributes.friendly_name !== after.attributes.friendly_name) {
      this.#targets = undefined;
      this.#learnSoon();
    }
  }

  // --- device events -----------------------------------------------------------------------------------------------

  /** A state change of a `subscribe` entity becomes an `ha.state` event (attribute-only changes do not). */
  #changed(entityId: string, before: HaState | undefined, after: HaState | undefined): void {
    const turns = this.#turns(entityId);
    if (!turns && !this.#subscribed(entityId)) return;
    const from = before?.state ?? null;
    const to = after?.state ?? null;
    if (from === to) return;
    if (turns) {
      // A rule: the change is a message (a turn), not only a record; a full lane falls back to the record below.
      const at = after?.last_changed ?? new Date(this.#options.clock.now()).toISOString();
      const text = `Home Assistant: ${this.#nameOf(entityId)} (${entityId}) changed from ${from ?? "unknown"} to ` +
        `${to ?? "unknown"} at ${at}`;
      const message: InputDraft = {
        source: `ha:${entityId}`,
        sender: "home-assistant",
        trust: "household",
        type: "message",
        payload: { text },
      };
      if (this.#emit(message) === "sent") return;
    }
    const draft: InputDraft = {
      source: `ha:${entityId}`,
      sender: "home-assistant",
      trust: "household",
      type: "ha.state",
      payload: {
        entity_id: entityId,
        name: this.#nameOf(entityId),
        from,
        to,
        at: after?.last_changed ?? new Date(this.#options.clock.now()).toISOString(),
      },
    };
    const held = this.#held.get(entityId);
    if (held) {
      // Folded into the one that waits: the latest state, from where it was before the first.
      this.#held.delete(entityId);
      this.#held.set(entityId, {
        draft: { ...draft, payload: { ...draft.payload, from: held.draft.payload.from, changes: held.changes + 1 } },
        changes: held.changes + 1,
      });
      this.#coalesced++;
      return;
    }
    if (this.#held.size === 0 && this.#emit(draft) !== "full") return;
    this.#held.set(entityId, { draft, changes: 1 });
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
  }

  /** Hands one event in: "sent", "full" (the input queue refused it for now), or "dropped". */
  #emit(draft: InputDraft): "sent" | "full" | "dropped" {
    const context = this.#context;
    if (!context) return "dropped";
    try {
      context.emit(draft);
      this.#events++;
      return "sent";
    } catch (error) {
      if (error instanceof LaneFullError) return "full";
      if (!(error instanceof ShuttingDown)) {
        this.#options.logger.warning("A Home Assistant state event was refused: {error}", { error });
      }
      return "dropped";
    }
  }

  /** Hands in the changes that wait, oldest first, as the input queue takes them. */
  async #flush(): Promise<void> {
    const signal = this.#abort.signal;
    let refused = 0;
    while (this.#held.size > 0 && !signal.aborted) {
      const [entityId, held] = this.#held.entries().next().value!;
      const outcome = this.#emit(held.draft);
      if (outcome !== "full") {
        this.#held.delete(entityId);
        refused = 0;
        continue;
      }
      refused++;
      try {
        // A reader that takes inputs as they come frees the lane within a few microtasks; a slower one is polled.
        await waitForRoom(refused, (ms) => sleepWith(this.#options.clock, ms, signal));
      } catch {
        break;
      }
    }
    if (signal.aborted) this.#held.clear();
  }

  // --- names, areas, learning -------------------------------------------------------------------------------------

  #nameOf(entityId: string): string {
    const friendly = this.#states.get(entityId)?.attributes.friendly_name;
    const entry = this.#registry.get(entityId);
    return stringOr(friendly, null) ?? entry?.name ?? entry?.originalName ?? entityId.slice(entityId.indexOf(".") + 1);
  }

  #areaOf(entityId: string): Area | undefined {
    const entry = this.#registry.get(entityId);
    const areaId = entry?.areaId ?? (entry?.deviceId ? this.#deviceAreas.get(entry.deviceId) : undefined);
    return areaId ? this.#areas.get(areaId) : undefined;
  }

  #learnSoon(): void {
    if (!this.#options.learnEntities || this.#learnQueued) return;
    this.#learnQueued = true;
    queueMicrotask(() => {
      this.#learnQueued = false;
      this.#learn();
    });
  }

  /** Hands the entities to `learnEntities` when their names, areas or aliases differ from the last time. */
  #learn(): void {
    const learn = this.#options.learnEntities;
    if (!learn) return;
    const entities: LearnedEntity[] = [...this.#states.keys()].filter((id) => !this.#registry.get(id)?.hidden)
      .sort().map((id) => ({
        id,
        name: this.#nameOf(id),
        area: this.#areaOf(id)?.name ?? null,
        aliases: [...(this.#registry.get(id)?.aliases ?? [])],
      }));
    const signature = JSON.stringify(entities);
    if (signature === this.#learned) return;
    this.#learned = signature;
    this.#learning = this.#learning.then(() => learn(entities)).catch((error) => {
      this.#options.logger.warning("Learning the Home Assistant entities failed: {error}", { error });
    });
  }

  // --- tools -------------------------------------------------------------------------------------------------------

  #domainList(): string {
    const plain = this.#settings.domains.join(", ") || "none";
    const confirm = this.#settings.confirm.length
      ? `; only with the owner's yes: ${this.#settings.confirm.join(", ")}`
      : "";
    return `${plain}${confirm}`;
  }

  #statesTool(): DeviceTool {
    return {
      name: "ha_states",
      effect: "read",
      allow: "household",
      description: "List Home Assistant entities with their state and key attributes, one per line: entity id, " +
        "name, state, attributes, [area]. Filter by area name, domain (light, sensor…) or a query matched in ids, " +
        `names and aliases; at most ${STATES_LIMIT} lines.`,
      parameters: {
        type: "object",
        properties: {
          area: { type: "string", maxLength: 100, description: "An area's name or alias, e.g. Kitchen" },
          domain: { type: "string", maxLength: 64, description: "An entity domain, e.g. light or sensor" },
          query: { type: "string", maxLength: 100, description: "Words in the entity's id, name or alias" },
        },
        additionalProperties: false,
      },
      timeoutMs: 5_000,
      execute: (args) =>
        this.#listStates({
          ...(typeof args.area === "string" && args.area.trim() ? { area: args.area } : {}),
          ...(typeof args.domain === "string" && args.domain.trim() ? { domain: args.domain } : {}),
          ...(typeof args.query === "string" && args.query.trim() ? { query: args.query } : {}),
        }),
    };
  }

  #listStates(filter: { area?: string; domain?: string; query?: string }): string {
    const connected = this.#connection.state === "connected";
    if (!this.#loaded) {
      throw new Error(
        `Home Assistant is not connected yet${this.#whyNot()}; its states are not known, try again later`,
      );
    }
    let areaIds: Set<string> | undefined;
    if (filter.area !== undefined) {
      const wanted = normal(filter.area);
      const areas = [...this.#areas.values()];
      let matched = areas.filter((area) =>
        normal(area.name) === wanted || area.id === wanted || area.aliases.some((alias) => normal(alias) === wanted)
      );
      if (matched.length === 0) matched = areas.filter((area) => normal(area.name).includes(wanted));
      if (matched.length === 0) {
        const known = areas.map((area) => area.name).sort().join(", ") || "none";
        throw new Error(`No Home Assistant area is called ${JSON.stringify(filter.area)}; areas: ${known}`);
      }
      areaIds = new Set(matched.map((area) => area.id));
    }
    const domain = filter.domain === undefined ? undefined : normal(filter.domain);
    const query = filter.query === undefined ? undefined : normal(filter.query);
    const lines: string[] = [];
    for (const entityId of [...this.#states.keys()].sort()) {
      const entry = this.#registry.get(entityId);
      if (entry?.hidden) continue;
      if (domain !== undefined && domainOf(entityId) !== domain) continue;
      const area = this.#areaOf(entityId);
      if (areaIds && (!area || !areaIds.has(area.id))) continue;
      const name = this.#nameOf(entityId);
      if (
        query !== undefined &&
        ![entityId, name, ...(entry?.aliases ?? [])].some((text) => normal(text).includes(query))
      ) continue;
      lines.push(this.#line(entityId, name, area));
    }
    const stale = connected
      ? ""
      : `Home Assistant is not connected${this.#whyNot()}; as last seen at ${iso(this.#seenAt)}:\n`;
    if (lines.length === 0) return `${stale}No Home Assistant entity matches ${JSON.stringify(filter)}`;
    const shown = lines.slice(0, STATES_LIMIT);
    const rest = lines.length - shown.length;
    const more = rest > 0 ? `\n… and ${rest} more; narrow it down with area, domain or query` : "";
    return `${stale}${lines.length} ${lines.length === 1 ? "entity" : "entities"}:\n${shown.join("\n")}${more}`;
  }

  /** `light.kitchen "Kitchen light" on (brightness 180) [Kitchen]` */
  #line(entityId: string, name: string, area: Area | undefined): string {
    const state = this.#states.get(entityId)!;
    const unit = state.attributes.unit_of_measurement;
    const value = typeof unit === "string" && unit ? `${state.state} ${unit}` : state.state;
    const attributes = (KEY_ATTRIBUTES[domainOf(entityId)] ?? [])
      .filter((key) => state.attributes[key] !== undefined && state.attributes[key] !== null)
      .map((key) => `${key} ${shownValue(state.attributes[key])}`);
    const label = name && name !== entityId ? ` ${JSON.stringify(untrustedLine(name))}` : "";
    return `${entityId}${label} ${shownValue(value)}${attributes.length ? ` (${attributes.join(", ")})` : ""}${
      area ? ` [${untrustedLine(area.name)}]` : ""
    }`;
  }

  #whyNot(): string {
    const why = this.#settings.token.trim() === ""
      ? "smart_home.home_assistant.token is empty"
      : this.#connection.lastError;
    return why ? ` (${why})` : "";
  }

  #callTool(): DeviceTool {
    return {
      name: "ha_call_service",
      allow: "household",
      description: `Call a Home Assistant service on one entity, e.g. {"domain":"light","service":"turn_on",` +
        `"entity_id":"light.kitchen","data":{"brightness_pct":40}}. Allowed domains: ${this.#domainList()}. ` +
        "Find entity ids with ha_states first. A service that needs the owner's yes is not run at once: the owner " +
        "is asked, and it runs only when they agree.",
      parameters: {
        type: "object",
        properties: {
          domain: { type: "string", pattern: "^[a-z0-9_]+$", maxLength: 64, description: "The service's domain" },
          service: { type: "string", pattern: "^[a-z0-9_]+$", maxLength: 64, description: "e.g. turn_on" },
          entity_id: { type: "string", maxLength: 255, description: "The entity, e.g. light.kitchen" },
          data: { type: "object", description: 'Service data, e.g. {"brightness_pct": 40}' },
        },
        required: ["domain", "service", "entity_id"],
        additionalProperties: false,
      },
      timeoutMs: CALL_TIMEOUT_MS + 5_000,
      // The registry's gate holds a sensitive call for the owner: `confirm` domains and entities.
      effect: (args) => this.#sensitive(String(args.domain), String(args.entity_id)) ? "sensitive" : "act",
      describeCall: (args) => {
        const refusal = this.#check(String(args.domain), String(args.service), String(args.entity_id), args.data ?? {});
        if (refusal) throw new Error(refusal);
        return actionSummary(
          String(args.domain),
          String(args.service),
          String(args.entity_id),
          isRecord(args.data) ? args.data : {},
        );
      },
      execute: (args, context) => this.#call(args, context),
    };
  }

  #sensitive(domain: string, entityId: string): boolean {
    return this.#confirmDomains.has(domain) || this.#confirmEntity(entityId);
  }

  async #call(args: Record<string, unknown>, context: ToolContext): Promise<string> {
    const domain = String(args.domain);
    const service = String(args.service);
    const entityId = String(args.entity_id);
    const data = args.data === undefined ? {} : args.data;
    const turn: AskingTurn = {
      eventId: context.eventId,
      source: context.source,
      sender: context.sender,
      trust: context.trust,
    };
    const entry = this.#record(turn, domain, service, entityId, isRecord(data) ? data : {});
    const refusal = this.#check(domain, service, entityId, data);
    if (refusal) {
      this.#step(entry, "refused", refusal);
      throw new Error(refusal);
    }
    const serviceData = data as Record<string, unknown>;
    // A sensitive call reaches here only on the owner's yes: the registry's gate held it until then.
    if (this.#sensitive(domain, entityId)) {
      entry.confirm = true;
      this.#step(entry, "confirmed", "the owner said yes");
    }
    return await this.#execute(entry, domain, service, entityId, serviceData);
  }

  /** Why the call may not go to HA, or undefined when it may. */
  #check(domain: string, service: string, entityId: string, data: unknown): string | undefined {
    if (!this.#allowedDomains.has(domain)) {
      return `Domain ${JSON.stringify(domain)} is not in smart_home.home_assistant.domains (${this.#domainList()}); ` +
        "homed does not call its services";
    }
    if (this.#connection.state !== "connected") {
      return `Home Assistant is not connected${this.#whyNot()}; nothing was done`;
    }
    const state = this.#states.get(entityId);
    if (!state) {
      const same = [...this.#states.keys()].filter((id) => domainOf(id) === domain && !this.#registry.get(id)?.hidden)
        .sort();
      const hint = same.length
        ? `; ${domain} entities: ${same.slice(0, 20).join(", ")}${same.length > 20 ? ", …" : ""}`
        : "";
      return `Home Assistant has no entity ${JSON.stringify(entityId)}${hint}`;
    }
    if (domainOf(entityId) !== domain) {
      return `${entityId} is not a ${domain} entity; call a ${domainOf(entityId)} service on it`;
    }
    const services = this.#services.get(domain);
    if (!services?.has(service)) {
      const known = [...(services ?? [])].sort().join(", ") || "none";
      return `Home Assistant has no service ${domain}.${service}; ${domain} services: ${known}`;
    }
    if (!isRecord(data)) return `data must be an object of service fields, got ${JSON.stringify(data)}`;
    const target = TARGET_KEYS.find((key) => key in data);
    if (target) {
      return `data may not hold ${target}: the one entity the call is for goes in entity_id, where it is checked`;
    }
    const size = JSON.stringify(data).length;
    if (size > MAX_DATA_CHARS) return `data is ${size} characters of JSON; at most ${MAX_DATA_CHARS}`;
    return undefined;
  }

  /** Calls the service and says what HA answered and the entity's state after. */
  async #execute(
    entry: AuditEntry,
    domain: string,
    service: string,
    entityId: string,
    data: Record<string, unknown>,
  ): Promise<string> {
    try {
      await this.#connection.command("call_service", {
        domain,
        service,
        target: { entity_id: entityId },
        ...(Object.keys(data).length ? { service_data: data } : {}),
      }, { timeoutMs: CALL_TIMEOUT_MS });
    } catch (error) {
      const message = `${domain}.${service} on ${entityId} failed: ${(error as Error).message}`;
      this.#step(entry, "failed", message);
      this.#options.logger.warning("Home Assistant action {id} ({sender}): {message}", {
        id: entry.id,
        sender: entry.sender,
        message,
      });
      throw new Error(message);
    }
    const state = this.#states.get(entityId);
    const now = state ? `; ${entityId} is now ${shownValue(state.state)}${this.#attributesOf(entityId, state)}` : "";
    const text = `Home Assistant ran ${domain}.${service} on ${entityId}${now}`;
    this.#step(entry, "done", text);
    this.#options.logger.info("Home Assistant action {id} ({sender}, turn {turn}): {text}", {
      id: entry.id,
      sender: entry.sender,
      turn: entry.turn,
      text,
    });
    return text;
  }

  #attributesOf(entityId: string, state: HaState): string {
    const parts = (KEY_ATTRIBUTES[domainOf(entityId)] ?? [])
      .filter((key) => state.attributes[key] !== undefined && state.attributes[key] !== null)
      .map((key) => `${key} ${shownValue(state.attributes[key])}`);
    return parts.length ? ` (${parts.join(", ")})` : "";
  }

  #record(
    turn: AskingTurn,
    domain: string,
    service: string,
    entityId: string,
    data: Record<string, unknown>,
  ): AuditEntry {
    const at = new Date(this.#options.clock.now()).toISOString();
    const entry: AuditEntry = {
      id: `ha-${++this.#auditSeq}`,
      at,
      turn: turn.eventId,
      source: turn.source,
      sender: turn.sender,
      trust: turn.trust,
      domain,
      service,
      entity_id: entityId,
      data: maskData(data),
      confirm: false,
      outcome: "asked",
      detail: "",
      steps: [],
    };
    this.#audit.push(entry);
    while (this.#audit.length > AUDIT_LIMIT) this.#audit.shift();
    return entry;
  }

  #step(entry: AuditEntry, outcome: AuditOutcome, detail: string): void {
    entry.outcome = outcome;
    entry.detail = detail;
    entry.steps.push({ at: new Date(this.#options.clock.now()).toISOString(), outcome, detail });
  }
}
