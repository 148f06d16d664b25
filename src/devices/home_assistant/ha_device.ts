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
 * This file puts the parts together and is the device to the IO manager; each part is a file of its own: the settings
 * checked (`ha_settings.ts`), the cache (`ha_cache.ts`, its registries in `ha_registry.ts`), the state events
 * (`ha_events.ts`), learning (`ha_learn.ts`), the two tools (`ha_states_tool.ts`, `ha_call_tool.ts`) and the audit
 * list (`ha_audit.ts`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { Device, DeviceContext, DeviceTool } from "../../io/device.ts";
import type { OutputEvent } from "../../io/event.ts";
import type { HomeTarget } from "../../io/home_target.ts";
import { type AuditEntry, HaAudit } from "./ha_audit.ts";
import { HaCache } from "./ha_cache.ts";
import { callTool } from "./ha_call_tool.ts";
import { HaConnection, type HaConnectionState, shownUrl } from "./ha_connection.ts";
import { HaStateEvents } from "./ha_events.ts";
import { HaLearner, type LearnedEntity } from "./ha_learn.ts";
import { HaRules, type HomeAssistantSettings } from "./ha_settings.ts";
import { statesTool } from "./ha_states_tool.ts";

export type { AuditEntry, AuditOutcome } from "./ha_audit.ts";
export type { LearnedEntity } from "./ha_learn.ts";
export type { HomeAssistantSettings } from "./ha_settings.ts";

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

function iso(time: number | null): string | null {
  return time === null ? null : new Date(time).toISOString();
}

/** The `ha` device: one Home Assistant. */
export class HomeAssistantDevice implements Device {
  readonly name = "ha";
  readonly type = "home_assistant";
  readonly description: string;
  readonly #options: HomeAssistantDeviceOptions;
  readonly #settings: HomeAssistantSettings;
  readonly #rules: HaRules;
  readonly #connection: HaConnection;
  readonly #cache: HaCache;
  readonly #events: HaStateEvents;
  readonly #learner: HaLearner;
  readonly #audit: HaAudit;
  readonly #tools: readonly DeviceTool[];

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
    const rules = new HaRules(settings);
    this.#rules = rules;
    const { clock, logger } = options;
    this.#connection = new HaConnection({
      url: settings.url,
      token: settings.token,
      clock,
      logger,
      ...(options.random ? { random: options.random } : {}),
      ...(options.commandTimeoutMs !== undefined ? { commandTimeoutMs: options.commandTimeoutMs } : {}),
      ...(options.maxFrameBytes !== undefined ? { maxFrameBytes: options.maxFrameBytes } : {}),
      ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
      onConnected: () => this.#cache.loadAll(),
    });
    // The parts call each other through arrows: each is made before any of them is called.
    this.#cache = new HaCache({
      connection: this.#connection,
      clock,
      logger,
      onChange: (entityId, before, after) => this.#events.changed(entityId, before, after),
      onNames: () => this.#learner.learn(),
      onNamesSoon: () => this.#learner.learnSoon(),
    });
    this.#events = new HaStateEvents({
      clock,
      logger,
      subscribed: rules.subscribed,
      turns: rules.turns,
      nameOf: (entityId) => this.#cache.nameOf(entityId),
    });
    this.#learner = new HaLearner({ learnEntities: options.learnEntities, cache: this.#cache, logger });
    this.#audit = new HaAudit(clock);
    this.description = `Home Assistant at ${shownUrl(settings.url)}: states of its entities, and services of ` +
      `${rules.domainList()}`;
    const deps = { cache: this.#cache, connection: this.#connection, rules, audit: this.#audit, logger };
    this.#tools = [statesTool(deps), callTool(deps)];
  }

  tools(): readonly DeviceTool[] {
    return this.#tools;
  }

  /**
   * Connects; resolves once the first attempt ended (a few seconds at most). A refused token or an HA that is not
   * there is logged and shown in the status — the device stays, trying again with backoff, and homed runs on.
   */
  async start(context: DeviceContext): Promise<void> {
    this.#events.attach(context);
    if (this.#settings.token.trim() === "") {
      this.#options.logger.error(
        "smart_home.home_assistant.token is empty; make a long-lived access token in your Home Assistant profile",
      );
    }
    await this.#connection.start();
  }

  async stop(): Promise<void> {
    this.#events.abort(new Error("The Home Assistant device stopped"));
    await this.#connection.stop();
    await this.#events.flushing;
    await this.#learner.learning;
    this.#events.detach();
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

  /** The audit list, newest first (at most `AUDIT_LIMIT` of `ha_audit.ts`). */
  actions(): AuditEntry[] {
    return this.#audit.list();
  }

  status(): Record<string, unknown> {
    const connection = this.#connection;
    const states = this.#cache.states;
    let subscribed = 0;
    for (const entityId of states.keys()) if (this.#rules.subscribed(entityId)) subscribed++;
    const status: HomeAssistantStatus = {
      url: shownUrl(this.#settings.url),
      state: connection.state,
      ha_version: connection.haVersion,
      entities: states.size,
      subscribed,
      reconnects: connection.reconnects,
      last_error: this.#rules.problem(connection.lastError),
      actions: this.#audit.size,
      connected_at: iso(connection.connectedAt),
      next_retry_at: iso(connection.nextRetryAt),
      events: this.#events.sent,
      coalesced: this.#events.coalesced,
      waiting_events: this.#events.waiting,
    };
    return { ...status };
  }

  /**
   * The entities local intents may act on or read, by their names, aliases, area and floor (hidden ones left out).
   * Made again only when names, places or the set of entities changed; states are read at each use.
   */
  homeTargets(): readonly HomeTarget[] {
    return this.#cache.homeTargets();
  }
}
