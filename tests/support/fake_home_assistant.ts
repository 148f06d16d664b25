/**
 * A strict fake Home Assistant on loopback, speaking HA's real WebSocket API (`/api/websocket`) and a little of its
 * REST API, built from HA's developer docs and `homeassistant/components/websocket_api/` (auth.py, connection.py,
 * commands.py, messages.py): the auth phase (`auth_required` → `auth` → `auth_ok`, or `auth_invalid` and the socket
 * closed), commands with ids that must increase per connection, `result` frames with `success` and HA's error codes
 * and messages word for word (`id_reuse`, `invalid_format`, `unknown_command`, `not_found`…), `event` frames carrying
 * the subscription's id, `pong`, and — once the client asks with `supported_features {coalesce_messages: 1}` —
 * messages queued together sent as one JSON array, as HA does.
 *
 * The registries as HA's `config/*_registry/list` commands give them: floors (`config/floor_registry/list`, HA 2024.4+,
 * from `homeassistant/components/config/floor_registry.py`), areas with their floor, devices, entities with aliases.
 *
 * Scripted: {@link FakeHomeAssistant.setState} pushes `state_changed` to subscribers, `call_service` records the call
 * (a target's areas, floors and devices resolved to their entities, as HA does) and changes the entity's state as HA's
 * integrations would (`light.turn_on` → `on`, `lock.unlock` → `unlocked`…),
 * {@link FakeHomeAssistant.dropConnections} closes every socket (HA restarting), a wrong token gets `auth_invalid`.
 * What a well-behaved client never does (a command before auth, an id that does not increase, a command HA does not
 * know, a malformed one, a REST call without the token…) is answered as HA answers it and recorded as a violation;
 * {@link FakeHomeAssistant.close} fails the test on any, unless the test took them with
 * {@link FakeHomeAssistant.takeViolations}.
 *
 * @module
 */

import assert from "node:assert/strict";
import { waitFor } from "./wait.ts";

/** An entity's state as the fake holds it. */
export interface FakeEntity {
  entity_id: string;
  state: string;
  attributes?: Record<string, unknown>;
  /** The area (an id of {@link FakeHomeAssistantOptions.areas}) in the entity registry. */
  area_id?: string | null;
  /** The device (an id of {@link FakeHomeAssistantOptions.devices}), whose area the entity has when it has none. */
  device_id?: string | null;
  /** Aliases in the entity registry (read with `config/entity_registry/get_entries`). */
  aliases?: string[];
  /** A name set in the registry (null: the integration's). */
  name?: string | null;
  /** Hidden in the registry. */
  hidden?: boolean;
  /** Not in the entity registry at all (a YAML entity without a unique id). */
  unregistered?: boolean;
}

/** One service, as `get_services` lists it. */
export interface FakeService {
  name?: string;
  description?: string;
  /** Field name → description; fields outside these are refused as `extra keys not allowed`. */
  fields?: Record<string, { description?: string; example?: unknown }>;
}

/** A floor in the floor registry (`config/floor_registry/list`). */
export interface FakeFloor {
  floor_id: string;
  name: string;
  aliases?: string[];
  /** The floor's level: 0 the ground floor, 1 the one above, -1 the basement; null: not set. */
  level?: number | null;
  icon?: string | null;
}

/** An area in the area registry (`config/area_registry/list`). */
export interface FakeArea {
  area_id: string;
  name: string;
  aliases?: string[];
  /** The floor (a {@link FakeFloor.floor_id} of {@link FakeHomeAssistantOptions.floors}) it is on; null: none. */
  floor_id?: string | null;
}

/** Options of {@link FakeHomeAssistant}. */
export interface FakeHomeAssistantOptions {
  /** The long-lived token clients must send (default `"fake-ha-token"`). */
  token?: string;
  /** `ha_version` of `auth_required` and `auth_ok`. */
  version?: string;
  entities?: FakeEntity[];
  /**
   * Domain → service → description; a default set with HA's fields for light, switch, fan, lock, cover,
   * alarm_control_panel, climate and media_player.
   */
  services?: Record<string, Record<string, FakeService>>;
  /** Floors, in the registry's order; an area's `floor_id` must name one of them. */
  floors?: FakeFloor[];
  areas?: FakeArea[];
  devices?: Array<{ id: string; name: string; area_id: string | null }>;
}

/** A service call the fake received (over the WebSocket or REST). */
export interface RecordedCall {
  domain: string;
  service: string;
  /** The target's entity ids (its areas, floors and devices resolved to the service domain's entities). */
  entity_ids: string[];
  service_data: Record<string, unknown>;
  via: "websocket" | "rest";
  /** The connection's number (1 for the first socket), 0 for REST. */
  connection: number;
}

/** A command the fake received after auth. */
export interface RecordedCommand {
  connection: number;
  id: unknown;
  type: unknown;
  message: Record<string, unknown>;
}

interface Connection {
  readonly number: number;
  readonly socket: WebSocket;
  phase: "auth" | "ready" | "closed";
  lastId: number;
  coalesce: boolean;
  /** Subscription id → event type (`*` for all). */
  subscriptions: Map<number, string>;
  outbox: string[];
  flushQueued: boolean;
  closed: Promise<void>;
}

/** A state object as HA sends it (`get_states`, `state_changed`, REST). */
export interface StateObject {
  entity_id: string;
  state: string;
  attributes: Record<string, unknown>;
  last_changed: string;
  last_reported: string;
  last_updated: string;
  context: { id: string; parent_id: null; user_id: string | null };
}

/** A service's fields by name (HA's `services.yaml`), described by nothing more. */
function fields(...names: string[]): Record<string, { description?: string }> {
  return Object.fromEntries(names.map((name) => [name, {}]));
}

/** `light.turn_on` and `light.toggle`'s fields in HA 2026 (`color_temp` in mireds and `kelvin` are gone). */
const LIGHT_ON_FIELDS = fields(
  "transition",
  "rgb_color",
  "rgbw_color",
  "rgbww_color",
  "color_name",
  "hs_color",
  "xy_color",
  "color_temp_kelvin",
  "brightness",
  "brightness_pct",
  "brightness_step",
  "brightness_step_pct",
  "white",
  "profile",
  "flash",
  "effect",
);

const DEFAULT_SERVICES: Record<string, Record<string, FakeService>> = {
  homeassistant: { turn_on: {}, turn_off: {}, toggle: {} },
  light: {
    turn_on: { fields: LIGHT_ON_FIELDS },
    turn_off: { fields: fields("transition", "flash") },
    toggle: { fields: LIGHT_ON_FIELDS },
  },
  switch: { turn_on: {}, turn_off: {}, toggle: {} },
  fan: {
    turn_on: { fields: fields("percentage", "preset_mode") },
    turn_off: { fields: {} },
    toggle: { fields: {} },
    set_percentage: { fields: fields("percentage") },
    increase_speed: { fields: fields("percentage_step") },
    decrease_speed: { fields: fields("percentage_step") },
    oscillate: { fields: fields("oscillating") },
    set_direction: { fields: fields("direction") },
    set_preset_mode: { fields: fields("preset_mode") },
  },
  lock: { lock: { fields: { code: {} } }, unlock: { fields: { code: {} } }, open: { fields: { code: {} } } },
  cover: {
    open_cover: {},
    close_cover: {},
    stop_cover: {},
    toggle: { fields: {} },
    set_cover_position: { fields: { position: {} } },
    open_cover_tilt: { fields: {} },
    close_cover_tilt: { fields: {} },
    stop_cover_tilt: { fields: {} },
    toggle_cover_tilt: { fields: {} },
    set_cover_tilt_position: { fields: fields("tilt_position") },
  },
  alarm_control_panel: {
    alarm_disarm: { fields: { code: {} } },
    alarm_arm_away: { fields: { code: {} } },
    alarm_arm_home: { fields: { code: {} } },
  },
  climate: {
    turn_on: { fields: {} },
    turn_off: { fields: {} },
    toggle: { fields: {} },
    set_temperature: { fields: fields("temperature", "target_temp_high", "target_temp_low", "hvac_mode") },
    set_hvac_mode: { fields: { hvac_mode: {} } },
    set_humidity: { fields: fields("humidity") },
    set_fan_mode: { fields: fields("fan_mode") },
    set_preset_mode: { fields: fields("preset_mode") },
    set_swing_mode: { fields: fields("swing_mode") },
  },
  media_player: {
    turn_on: {},
    turn_off: {},
    toggle: { fields: {} },
    media_play: {},
    media_pause: {},
    media_play_pause: { fields: {} },
    media_stop: { fields: {} },
    media_next_track: { fields: {} },
    media_previous_track: { fields: {} },
    volume_up: { fields: {} },
    volume_down: { fields: {} },
    volume_set: { fields: { volume_level: {} } },
    volume_mute: { fields: fields("is_volume_muted") },
    select_source: { fields: fields("source") },
  },
};

/** The state a service leaves its entity in, as HA's integrations do; undefined: no change. */
const EFFECTS: Record<string, string> = {
  turn_on: "on",
  turn_off: "off",
  lock: "locked",
  unlock: "unlocked",
  open: "open",
  open_cover: "open",
  close_cover: "closed",
  alarm_disarm: "disarmed",
  alarm_arm_away: "armed_away",
  alarm_arm_home: "armed_home",
  media_play: "playing",
  media_pause: "paused",
};

/** The state `toggle` leaves an entity of `domain` in, as each domain's entity base class does. */
function toggled(domain: string, state: string, attributes: Record<string, unknown>): string {
  switch (domain) {
    case "cover":
      return state === "open" || state === "opening" ? "closed" : "open";
    case "media_player":
      return state === "off" || state === "standby" ? "on" : "off";
    case "climate":
      return state === "off" ? climateOn(attributes) : "off";
    default:
      return state === "on" ? "off" : "on";
  }
}

/** `climate.turn_on` without a mode: the first of the entity's `hvac_modes` that is not off (HA picks one so). */
function climateOn(attributes: Record<string, unknown>): string {
  const modes = Array.isArray(attributes.hvac_modes) ? attributes.hvac_modes : [];
  const mode = modes.find((candidate) => typeof candidate === "string" && candidate !== "off");
  return typeof mode === "string" ? mode : "heat";
}

/** Command → its required and optional keys besides `id` and `type` (HA's voluptuous schemas). */
const SCHEMAS: Record<string, { required: string[]; optional: string[] }> = {
  supported_features: { required: ["features"], optional: [] },
  ping: { required: [], optional: [] },
  get_states: { required: [], optional: [] },
  get_services: { required: [], optional: [] },
  get_config: { required: [], optional: [] },
  subscribe_events: { required: [], optional: ["event_type"] },
  unsubscribe_events: { required: ["subscription"], optional: [] },
  call_service: { required: ["domain", "service"], optional: ["target", "service_data", "return_response"] },
  "config/area_registry/list": { required: [], optional: [] },
  "config/floor_registry/list": { required: [], optional: [] },
  "config/device_registry/list": { required: [], optional: [] },
  "config/entity_registry/list": { required: [], optional: [] },
  "config/entity_registry/get_entries": { required: ["entity_ids"], optional: [] },
};

/** HA's `valid_entity_id`. */
const ENTITY_ID = /^(?!.+__)(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)$/;

/** HA's timestamps: ISO 8601 with microseconds and `+00:00`. */
function haTime(ms = Date.now()): string {
  return new Date(ms).toISOString().replace("Z", "000+00:00");
}

function contextId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 26).toUpperCase();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Python's `repr` of a JSON value, as voluptuous's `humanize_error` prints the offending value. */
function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return `'${value.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (isRecord(value)) return `{${Object.entries(value).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(", ")}}`;
  return String(value);
}

/** The fake server. */
export class FakeHomeAssistant {
  /** Service calls, in order. */
  readonly calls: RecordedCall[] = [];
  /** Every command received after auth, in order. */
  readonly commands: RecordedCommand[] = [];
  /** What broke the protocol, each naming its connection. */
  readonly violations: string[] = [];
  /** Sockets opened (each one a connection attempt that reached the fake). */
  socketsOpened = 0;
  /** Auth frames with a wrong token. */
  authFailures = 0;
  readonly #token: string;
  readonly #version: string;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #connections = new Set<Connection>();
  readonly #states = new Map<string, StateObject>();
  readonly #entities = new Map<string, FakeEntity>();
  readonly #services: Record<string, Record<string, FakeService>>;
  readonly #floors: Array<
    { floor_id: string; name: string; aliases: string[]; level: number | null; icon: string | null }
  >;
  readonly #areas: Array<{ area_id: string; name: string; aliases: string[]; floor_id: string | null }>;
  readonly #devices: Array<{ id: string; name: string; area_id: string | null }>;
  readonly #stalled = new Set<string>();
  #userId = "9f1c0a6e2b7d4c1e8a5f3b2d1c0e9f8a";

  private constructor(options: FakeHomeAssistantOptions) {
    this.#token = options.token ?? "fake-ha-token";
    this.#version = options.version ?? "2026.11.0";
    this.#services = structuredClone(options.services ?? DEFAULT_SERVICES);
    this.#floors = (options.floors ?? []).map((floor) => ({
      floor_id: floor.floor_id,
      name: floor.name,
      aliases: floor.aliases ?? [],
      level: floor.level ?? null,
      icon: floor.icon ?? null,
    }));
    this.#areas = (options.areas ?? []).map((area) => ({
      area_id: area.area_id,
      name: area.name,
      aliases: area.aliases ?? [],
      floor_id: area.floor_id ?? null,
    }));
    for (const area of this.#areas) this.#checkFloor(area.area_id, area.floor_id);
    this.#devices = options.devices ?? [];
    for (const entity of options.entities ?? []) {
      this.#entities.set(entity.entity_id, entity);
      this.#states.set(entity.entity_id, this.#stateObject(entity.entity_id, entity.state, entity.attributes ?? {}));
    }
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (request) => this.#handle(request),
    );
  }

  /**
   * Starts a fake on a free loopback port.
   *
   * @example
   * ```ts
   * await using ha = FakeHomeAssistant.start({
   *   entities: [{ entity_id: "light.kitchen", state: "off", attributes: { friendly_name: "Kitchen light" } }],
   * });
   * ha.url; // "http://127.0.0.1:<port>", the value for smart_home.home_assistant.url
   * ```
   */
  static start(options: FakeHomeAssistantOptions = {}): FakeHomeAssistant {
    return new FakeHomeAssistant(options);
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** The token clients must send. */
  get token(): string {
    return this.#token;
  }

  /** Connections past the auth phase, open now. */
  get connections(): number {
    return [...this.#connections].filter((connection) => connection.phase === "ready").length;
  }

  /** Open subscriptions to `eventType` over all connections. */
  subscriptions(eventType = "state_changed"): number {
    let count = 0;
    for (const connection of this.#connections) {
      if (connection.phase !== "ready") continue;
      for (const type of connection.subscriptions.values()) if (type === eventType) count++;
    }
    return count;
  }

  /** The current state of `entityId`, as `get_states` gives it. */
  state(entityId: string): StateObject | undefined {
    const state = this.#states.get(entityId);
    return state ? structuredClone(state) : undefined;
  }

  /** Commands of `type` received so far. */
  commandsOf(type: string): RecordedCommand[] {
    return this.commands.filter((command) => command.type === type);
  }

  /** Resolves once `count` commands of `type` arrived (over all connections). */
  received(type: string, count = 1, limitMs = 10_000): Promise<void> {
    return waitFor(
      () => this.commandsOf(type).length >= count,
      `${count} ${type} command(s) at the fake Home Assistant (got ${this.commandsOf(type).length})`,
      { limitMs, everyMs: 5 },
    );
  }

  /**
   * Sets an entity's state (creating it when new) and pushes `state_changed` to every subscriber, as HA does when an
   * integration writes a state. Attributes replace the old ones when given.
   */
  setState(entityId: string, state: string, attributes?: Record<string, unknown>): void {
    const old = this.#states.get(entityId);
    const next = this.#stateObject(entityId, state, attributes ?? old?.attributes ?? {}, old);
    this.#states.set(entityId, next);
    if (!this.#entities.has(entityId)) this.#entities.set(entityId, { entity_id: entityId, state });
    this.#fire("state_changed", { entity_id: entityId, old_state: old ?? null, new_state: next }, next.context);
  }

  /** Removes an entity (`new_state: null`). */
  removeEntity(entityId: string): void {
    const old = this.#states.get(entityId);
    if (!old) return;
    this.#states.delete(entityId);
    this.#entities.delete(entityId);
    this.#fire("state_changed", { entity_id: entityId, old_state: old, new_state: null }, old.context);
  }

  /** Changes an entity's registry entry (area, aliases, name) and fires `entity_registry_updated`. */
  updateEntity(entityId: string, changes: Pick<FakeEntity, "area_id" | "aliases" | "name" | "hidden">): void {
    const entity = this.#entities.get(entityId);
    if (!entity) throw new Error(`FakeHomeAssistant: no entity ${entityId}`);
    Object.assign(entity, changes);
    this.#fire("entity_registry_updated", { action: "update", entity_id: entityId, changes: Object.keys(changes) });
  }

  /** Adds or renames an area (or moves it to another floor) and fires `area_registry_updated`. */
  setArea(area: FakeArea): void {
    const existing = this.#areas.find((candidate) => candidate.area_id === area.area_id);
    const floorId = area.floor_id === undefined ? existing?.floor_id ?? null : area.floor_id;
    this.#checkFloor(area.area_id, floorId);
    if (existing) {
      Object.assign(existing, { name: area.name, aliases: area.aliases ?? existing.aliases, floor_id: floorId });
    } else this.#areas.push({ area_id: area.area_id, name: area.name, aliases: area.aliases ?? [], floor_id: floorId });
    this.#fire("area_registry_updated", { action: existing ? "update" : "create", area_id: area.area_id });
  }

  /** Adds or renames a floor and fires `floor_registry_updated`, as HA's floor registry does. */
  setFloor(floor: FakeFloor): void {
    const existing = this.#floors.find((candidate) => candidate.floor_id === floor.floor_id);
    const next = {
      floor_id: floor.floor_id,
      name: floor.name,
      aliases: floor.aliases ?? existing?.aliases ?? [],
      level: floor.level === undefined ? existing?.level ?? null : floor.level,
      icon: floor.icon === undefined ? existing?.icon ?? null : floor.icon,
    };
    if (existing) Object.assign(existing, next);
    else this.#floors.push(next);
    this.#fire("floor_registry_updated", { action: existing ? "update" : "create", floor_id: floor.floor_id });
  }

  /** An area on a floor the registry does not have is a mistake in the test's house, not something HA allows. */
  #checkFloor(areaId: string, floorId: string | null): void {
    if (floorId !== null && !this.#floors.some((floor) => floor.floor_id === floorId)) {
      throw new Error(`FakeHomeAssistant: area ${areaId} is on floor ${floorId}, which is not in the floors option`);
    }
  }

  /** Closes every socket, as HA does when it restarts; resolves once they are closed. */
  async dropConnections(code = 1001): Promise<void> {
    const closing = [...this.#connections];
    for (const connection of closing) {
      try {
        connection.socket.close(code, "");
      } catch { /* already closing */ }
    }
    await Promise.all(closing.map((connection) => connection.closed));
  }

  /** Commands of `type` are taken and never answered from now on (HA busy or hung), until {@link unstall}. */
  stall(type: string): void {
    this.#stalled.add(type);
  }

  /** Commands of `type` are answered again. */
  unstall(type: string): void {
    this.#stalled.delete(type);
  }

  /** The violations so far, taken (so `close()` does not fail on those the test provoked on purpose). */
  takeViolations(): string[] {
    return this.violations.splice(0);
  }

  /** Closes every socket, stops the server, and fails when any violation was recorded. */
  async close(): Promise<void> {
    await this.dropConnections(1000);
    await this.#server.shutdown();
    assert.deepEqual(this.violations, [], "the fake Home Assistant saw frames that break the protocol");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- HTTP ----------------------------------------------------------------------------------------------------------

  #handle(request: Request): Response | Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/api/websocket") {
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        return new Response("Upgrade to websocket required", { status: 400 });
      }
      const { socket, response } = Deno.upgradeWebSocket(request);
      this.#accept(socket);
      return response;
    }
    if (url.pathname.startsWith("/api/")) return this.#rest(request, url);
    return new Response("404: Not Found", { status: 404 });
  }

  async #rest(request: Request, url: URL): Promise<Response> {
    if (request.headers.get("authorization") !== `Bearer ${this.#token}`) {
      this.violations.push(`REST ${request.method} ${url.pathname} without the right bearer token`);
      await request.body?.cancel();
      return new Response("401: Unauthorized", { status: 401, headers: { "content-type": "text/plain" } });
    }
    const path = url.pathname;
    if (request.method === "GET" && path === "/api/") return Response.json({ message: "API running." });
    if (request.method === "GET" && path === "/api/states") return Response.json([...this.#states.values()]);
    const one = /^\/api\/states\/([^/]+)$/.exec(path);
    if (request.method === "GET" && one) {
      const state = this.#states.get(decodeURIComponent(one[1]!));
      return state ? Response.json(state) : Response.json({ message: "Entity not found." }, { status: 404 });
    }
    const call = /^\/api\/services\/([^/]+)\/([^/]+)$/.exec(path);
    if (request.method === "POST" && call) {
      let body: unknown = {};
      const text = await request.text();
      if (text.trim()) {
        try {
          body = JSON.parse(text);
        } catch {
          return Response.json({ message: "Data should be valid JSON." }, { status: 400 });
        }
      }
      if (!isRecord(body)) return Response.json({ message: "Data should be a JSON object." }, { status: 400 });
      const domain = decodeURIComponent(call[1]!);
      const service = decodeURIComponent(call[2]!);
      if (!this.#services[domain]?.[service]) {
        return Response.json({ message: `Service ${domain}.${service} not found.` }, { status: 400 });
      }
      const { entity_id, ...data } = body;
      const ids = entity_id === undefined ? [] : Array.isArray(entity_id) ? entity_id.map(String) : [String(entity_id)];
      const before = new Map(ids.map((id) => [id, this.#states.get(id)?.last_updated]));
      this.#perform({ domain, service, entity_ids: ids, service_data: data, via: "rest", connection: 0 });
      const changed = ids.filter((id) => this.#states.get(id)?.last_updated !== before.get(id));
      return Response.json(changed.map((id) => this.#states.get(id)));
    }
    await request.body?.cancel();
    return Response.json({ message: "Not found" }, { status: 404 });
  }

  // --- WebSocket -----------------------------------------------------------------------------------------------------

  #accept(socket: WebSocket): void {
    let resolveClosed = () => {};
    const connection: Connection = {
      number: ++this.socketsOpened,
      socket,
      phase: "auth",
      lastId: 0,
      coalesce: false,
      subscriptions: new Map(),
      outbox: [],
      flushQueued: false,
      closed: new Promise<void>((resolve) => (resolveClosed = resolve)),
    };
    this.#connections.add(connection);
    socket.addEventListener("open", () => {
      socket.send(JSON.stringify({ type: "auth_required", ha_version: this.#version }));
    });
    socket.addEventListener("message", (event) => this.#onMessage(connection, event.data));
    socket.addEventListener("error", () => {});
    socket.addEventListener("close", () => {
      connection.phase = "closed";
      this.#connections.delete(connection);
      resolveClosed();
    });
  }

  #violation(connection: Connection, what: string): void {
    this.violations.push(`connection ${connection.number}: ${what}`);
  }

  /** Queues a message; with coalescing on, those queued in one turn go as one JSON array (HA's writer). */
  #send(connection: Connection, message: Record<string, unknown>): void {
    if (connection.phase === "closed") return;
    connection.outbox.push(JSON.stringify(message));
    if (connection.flushQueued) return;
    connection.flushQueued = true;
    queueMicrotask(() => {
      connection.flushQueued = false;
      const queued = connection.outbox.splice(0);
      if (connection.socket.readyState !== WebSocket.OPEN) return;
      if (connection.coalesce && queued.length > 1) connection.socket.send(`[${queued.join(",")}]`);
      else for (const text of queued) connection.socket.send(text);
    });
  }

  #result(connection: Connection, id: unknown, result: unknown = null): void {
    this.#send(connection, { id, type: "result", success: true, result });
  }

  #error(connection: Connection, id: unknown, code: string, message: string): void {
    this.#send(connection, { id, type: "result", success: false, error: { code, message } });
  }

  #onMessage(connection: Connection, data: unknown): void {
    if (typeof data !== "string") {
      this.#violation(connection, "sent a binary frame");
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      this.#violation(connection, `sent a frame that is not JSON: ${data.slice(0, 60)}`);
      connection.socket.close(1003, "");
      return;
    }
    if (connection.phase === "auth") return this.#auth(connection, message);
    if (connection.phase !== "ready") return;
    this.#command(connection, message);
  }

  #auth(connection: Connection, message: unknown): void {
    const fail = (text: string) => {
      this.#send(connection, { type: "auth_invalid", message: text });
      // HA sends auth_invalid, then disconnects.
      queueMicrotask(() => queueMicrotask(() => connection.socket.close(1000, "")));
      connection.phase = "closed";
    };
    if (!isRecord(message) || message.type !== "auth") {
      this.#violation(connection, `sent ${JSON.stringify(message).slice(0, 60)} before auth`);
      if (!isRecord(message) || message.type === undefined) {
        return fail("Auth message incorrectly formatted: required key not provided @ data['type']. Got None");
      }
      return fail(
        `Auth message incorrectly formatted: not a valid value for dictionary value @ data['type']. Got ${
          pyRepr(message.type)
        }`,
      );
    }
    const extra = Object.keys(message).find((key) => !["type", "access_token", "api_password"].includes(key));
    if (extra) {
      this.#violation(connection, `sent an auth frame with the extra key ${extra}`);
      return fail(
        `Auth message incorrectly formatted: extra keys not allowed @ data['${extra}']. Got ${pyRepr(message[extra])}`,
      );
    }
    if (message.access_token !== this.#token) {
      this.authFailures++;
      return fail("Invalid access token or password");
    }
    connection.phase = "ready";
    this.#send(connection, { type: "auth_ok", ha_version: this.#version });
  }

  #command(connection: Connection, message: unknown): void {
    // connection.py: the message must be an object with a positive integer id and a string type.
    if (
      !isRecord(message) || typeof message.id !== "number" || !Number.isInteger(message.id) || message.id <= 0 ||
      typeof message.type !== "string" || message.type === ""
    ) {
      this.#violation(
        connection,
        `sent a command without an integer id and a type: ${JSON.stringify(message).slice(0, 80)}`,
      );
      const id = isRecord(message) ? message.id ?? 0 : 0;
      return this.#error(connection, id, "invalid_format", "Message incorrectly formatted.");
    }
    const { id, type } = message as { id: number; type: string };
    this.commands.push({ connection: connection.number, id, type, message });
    if (id <= connection.lastId) {
      this.#violation(connection, `sent id ${id} after ${connection.lastId}: ids must increase`);
      return this.#error(connection, id, "id_reuse", "Identifier values have to increase.");
    }
    const schema = SCHEMAS[type];
    if (!schema) {
      this.#violation(connection, `sent the unknown command ${type}`);
      // HA does not move last_id on an unknown command.
      return this.#error(connection, id, "unknown_command", "Unknown command.");
    }
    connection.lastId = id;
    if (this.#stalled.has(type)) return;
    const missing = schema.required.find((key) => !(key in message));
    if (missing) {
      this.#violation(connection, `sent ${type} without ${missing}`);
      return this.#error(
        connection,
        id,
        "invalid_format",
        `required key not provided @ data['${missing}']. Got None`,
      );
    }
    const extra = Object.keys(message).find((key) =>
      key !== "id" && key !== "type" && !schema.required.includes(key) && !schema.optional.includes(key)
    );
    if (extra) {
      this.#violation(connection, `sent ${type} with the extra key ${extra}`);
      return this.#error(
        connection,
        id,
        "invalid_format",
        `extra keys not allowed @ data['${extra}']. Got ${pyRepr(message[extra])}`,
      );
    }
    this.#run(connection, id, type, message);
  }

  #run(connection: Connection, id: number, type: string, message: Record<string, unknown>): void {
    switch (type) {
      case "supported_features": {
        if (!isRecord(message.features)) {
          return this.#error(
            connection,
            id,
            "invalid_format",
            `expected dict for dictionary value @ data['features']. Got ${pyRepr(message.features)}`,
          );
        }
        connection.coalesce = message.features.coalesce_messages === 1;
        return this.#result(connection, id);
      }
      case "ping":
        return this.#send(connection, { id, type: "pong" });
      case "get_states":
        return this.#result(connection, id, [...this.#states.values()]);
      case "get_services":
        return this.#result(connection, id, this.#serviceDescriptions());
      case "get_config":
        return this.#result(connection, id, {
          location_name: "Home",
          time_zone: "Europe/Berlin",
          version: this.#version,
          state: "RUNNING",
          unit_system: { temperature: "°C", length: "km" },
          components: Object.keys(this.#services),
        });
      case "subscribe_events": {
        const eventType = message.event_type === undefined ? "*" : message.event_type;
        if (typeof eventType !== "string") {
          return this.#error(
            connection,
            id,
            "invalid_format",
            `expected str for dictionary value @ data['event_type']. Got ${pyRepr(eventType)}`,
          );
        }
        connection.subscriptions.set(id, eventType);
        return this.#result(connection, id);
      }
      case "unsubscribe_events": {
        const subscription = message.subscription;
        if (typeof subscription === "number" && connection.subscriptions.delete(subscription)) {
          return this.#result(connection, id);
        }
        this.#violation(connection, `unsubscribed ${pyRepr(subscription)}, which is no subscription`);
        return this.#error(connection, id, "not_found", "Subscription not found.");
      }
      case "call_service":
        return this.#callService(connection, id, message);
      case "config/area_registry/list":
        return this.#result(
          connection,
          id,
          this.#areas.map((area) => ({
            aliases: [...area.aliases],
            area_id: area.area_id,
            floor_id: area.floor_id,
            humidity_entity_id: null,
            icon: null,
            labels: [],
            name: area.name,
            picture: null,
            temperature_entity_id: null,
            created_at: 0.0,
            modified_at: 0.0,
          })),
        );
      case "config/floor_registry/list":
        // floor_registry.py's _entry_dict, in the registry's order.
        return this.#result(
          connection,
          id,
          this.#floors.map((floor) => ({
            aliases: [...floor.aliases],
            created_at: 0.0,
            floor_id: floor.floor_id,
            icon: floor.icon,
            level: floor.level,
            name: floor.name,
            modified_at: 0.0,
          })),
        );
      case "config/device_registry/list":
        return this.#result(
          connection,
          id,
          this.#devices.map((device) => ({
            area_id: device.area_id,
            config_entries: [],
            disabled_by: null,
            entry_type: null,
            id: device.id,
            identifiers: [],
            labels: [],
            manufacturer: "Fake",
            model: null,
            name_by_user: null,
            name: device.name,
            via_device_id: null,
          })),
        );
      case "config/entity_registry/list":
        return this.#result(
          connection,
          id,
          [...this.#entities.values()].filter((entity) => !entity.unregistered).map((entity) =>
            this.#partialEntry(entity)
          ),
        );
      case "config/entity_registry/get_entries": {
        const ids = message.entity_ids;
        if (!Array.isArray(ids) || ids.some((entityId) => typeof entityId !== "string" || !ENTITY_ID.test(entityId))) {
          return this.#error(
            connection,
            id,
            "invalid_format",
            `Entity IDs are invalid for dictionary value @ data['entity_ids']. Got ${pyRepr(ids)}`,
          );
        }
        const result: Record<string, unknown> = {};
        for (const entityId of ids as string[]) {
          const entity = this.#entities.get(entityId);
          result[entityId] = entity && !entity.unregistered
            ? { ...this.#partialEntry(entity), aliases: [...(entity.aliases ?? [])], capabilities: null }
            : null;
        }
        return this.#result(connection, id, result);
      }
    }
  }

  #partialEntry(entity: FakeEntity): Record<string, unknown> {
    return {
      area_id: entity.area_id ?? null,
      categories: {},
      config_entry_id: null,
      created_at: 0.0,
      device_id: entity.device_id ?? null,
      disabled_by: null,
      entity_category: null,
      entity_id: entity.entity_id,
      has_entity_name: false,
      hidden_by: entity.hidden ? "user" : null,
      icon: null,
      id: `reg-${entity.entity_id}`,
      labels: [],
      modified_at: 0.0,
      name: entity.name ?? null,
      options: {},
      original_name: null,
      platform: "fake",
      translation_key: null,
      unique_id: entity.entity_id,
    };
  }

  #serviceDescriptions(): Record<string, Record<string, unknown>> {
    const out: Record<string, Record<string, unknown>> = {};
    for (const [domain, services] of Object.entries(this.#services)) {
      out[domain] = {};
      for (const [service, description] of Object.entries(services)) {
        out[domain][service] = {
          name: description.name ?? service.replaceAll("_", " "),
          description: description.description ?? "",
          fields: description.fields ?? {},
          ...(domain === "homeassistant" ? {} : { target: { entity: [{ domain: [domain] }] } }),
        };
      }
    }
    return out;
  }

  #callService(connection: Connection, id: number, message: Record<string, unknown>): void {
    const domain = message.domain;
    const service = message.service;
    if (typeof domain !== "string" || typeof service !== "string") {
      return this.#error(
        connection,
        id,
        "invalid_format",
        `expected str for dictionary value @ data['domain']. Got ${pyRepr(domain)}`,
      );
    }
    const data = message.service_data ?? {};
    if (!isRecord(data)) {
      return this.#error(
        connection,
        id,
        "invalid_format",
        `expected dict for dictionary value @ data['service_data']. Got ${pyRepr(data)}`,
      );
    }
    const target = message.target ?? {};
    if (!isRecord(target)) {
      return this.#error(
        connection,
        id,
        "invalid_format",
        `expected dict for dictionary value @ data['target']. Got ${pyRepr(target)}`,
      );
    }
    const raw = target.entity_id;
    const ids = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    for (const entityId of ids) {
      if (typeof entityId !== "string" || !ENTITY_ID.test(entityId)) {
        return this.#error(
          connection,
          id,
          "invalid_format",
          `Entity ID ${
            String(entityId)
          } is an invalid entity ID for dictionary value @ data['target']['entity_id']. Got ${pyRepr(raw)}`,
        );
      }
    }
    const description = this.#services[domain]?.[service];
    if (!description) return this.#error(connection, id, "not_found", `Service ${domain}.${service} not found.`);
    if (description.fields) {
      const extra = Object.keys(data).find((key) => !(key in description.fields!));
      if (extra) {
        return this.#error(
          connection,
          id,
          "invalid_format",
          `extra keys not allowed @ data['${extra}']. Got ${pyRepr(data[extra])}`,
        );
      }
    }
    this.#perform({
      domain,
      service,
      entity_ids: this.#targetIds(domain, ids as string[], target),
      service_data: data,
      via: "websocket",
      connection: connection.number,
    });
    // blocking=True: the result goes after the state_changed events the service caused.
    this.#result(connection, id, { context: { id: contextId(), parent_id: null, user_id: this.#userId } });
  }

  /**
   * The entities a call's target names, as HA's `async_extract_referenced_entity_ids` finds them: the `entity_id`s as
   * given, then those of each `device_id`, `area_id` (directly, or through a device when the entity has no area of
   * its own) and `floor_id` (its areas) — hidden ones left out, and only the service's own domain's (but for
   * `homeassistant.*`).
   */
  #targetIds(domain: string, explicit: string[], target: Record<string, unknown>): string[] {
    const list = (value: unknown) =>
      new Set((value === undefined ? [] : Array.isArray(value) ? value : [value]).filter((v) => typeof v === "string"));
    const devices = list(target.device_id);
    const areas = list(target.area_id);
    for (const floor of list(target.floor_id)) {
      for (const area of this.#areas) if (area.floor_id === floor) areas.add(area.area_id);
    }
    const ids = [...explicit];
    if (devices.size === 0 && areas.size === 0) return ids;
    for (const entity of this.#entities.values()) {
      if (entity.hidden || ids.includes(entity.entity_id) || !this.#states.has(entity.entity_id)) continue;
      if (domain !== "homeassistant" && !entity.entity_id.startsWith(`${domain}.`)) continue;
      const device = this.#devices.find((candidate) => candidate.id === entity.device_id);
      const area = entity.area_id ?? device?.area_id ?? null;
      if ((entity.device_id && devices.has(entity.device_id)) || (area !== null && areas.has(area))) {
        ids.push(entity.entity_id);
      }
    }
    return ids;
  }

  /** Records a call and changes the targeted entities as HA's integrations would (unknown entities: nothing). */
  #perform(call: RecordedCall): void {
    this.calls.push(call);
    for (const entityId of call.entity_ids) {
      const old = this.#states.get(entityId);
      if (!old) continue; // HA logs "referenced entities … are missing" and carries on
      const attributes = { ...old.attributes };
      let state = EFFECTS[call.service] ?? old.state;
      if (call.service === "toggle") state = toggled(call.domain, old.state, attributes);
      else if (call.domain === "climate" && call.service === "turn_on") state = climateOn(attributes);
      if (call.domain === "light" && state === "on") {
        const pct = call.service_data.brightness_pct;
        if (typeof pct === "number") attributes.brightness = Math.round((pct * 255) / 100);
        else if (typeof call.service_data.brightness === "number") attributes.brightness = call.service_data.brightness;
        else attributes.brightness ??= 255;
        const kelvin = call.service_data.color_temp_kelvin;
        if (typeof kelvin === "number") {
          Object.assign(attributes, { color_temp_kelvin: kelvin, color_mode: "color_temp" });
        }
      }
      if (call.domain === "light" && state === "off") attributes.brightness = null;
      if (call.domain === "fan") {
        const pct = call.service_data.percentage;
        if (typeof pct === "number") {
          attributes.percentage = pct;
          if (call.service === "set_percentage") state = pct > 0 ? "on" : "off";
        } else if (state === "on") attributes.percentage ??= 100;
        if (state === "off") attributes.percentage = 0;
      }
      if (call.domain === "cover" && "current_position" in attributes && state !== old.state) {
        if (state === "open") attributes.current_position = 100;
        if (state === "closed") attributes.current_position = 0;
      }
      if (call.service === "set_temperature" && typeof call.service_data.temperature === "number") {
        attributes.temperature = call.service_data.temperature;
      }
      if (call.service === "set_hvac_mode" && typeof call.service_data.hvac_mode === "string") {
        state = call.service_data.hvac_mode;
      }
      if (call.service === "set_cover_position" && typeof call.service_data.position === "number") {
        attributes.current_position = call.service_data.position;
        state = call.service_data.position > 0 ? "open" : "closed";
      }
      if (call.service === "volume_set" && typeof call.service_data.volume_level === "number") {
        attributes.volume_level = call.service_data.volume_level;
      }
      this.setState(entityId, state, attributes);
    }
  }

  #stateObject(
    entityId: string,
    state: string,
    attributes: Record<string, unknown>,
    old?: StateObject,
  ): StateObject {
    const now = haTime();
    return {
      entity_id: entityId,
      state,
      attributes: structuredClone(attributes),
      last_changed: old && old.state === state ? old.last_changed : now,
      last_reported: now,
      last_updated: now,
      context: { id: contextId(), parent_id: null, user_id: null },
    };
  }

  /** Sends an event to every subscription to its type (or to all events). */
  #fire(eventType: string, data: Record<string, unknown>, context?: StateObject["context"]): void {
    const event = {
      event_type: eventType,
      data,
      origin: "LOCAL",
      time_fired: haTime(),
      context: context ?? { id: contextId(), parent_id: null, user_id: null },
    };
    for (const connection of this.#connections) {
      if (connection.phase !== "ready") continue;
      for (const [id, type] of connection.subscriptions) {
        if (type === eventType || type === "*") this.#send(connection, { id, type: "event", event });
      }
    }
  }
}
