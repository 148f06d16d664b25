/**
 * What the device knows of one Home Assistant: states (`get_states`, kept current by `state_changed` events),
 * services (`get_services`), and the registries ({@link HaRegistryLoader}: areas, floors, devices, entities with
 * aliases) — loaded on every connection and again when HA says a registry or its services changed. The tools, the
 * local intents' targets and the memory graph all read it; it tells the device of state changes and of names that
 * changed, and leaves what they become to the device.
 *
 * A snapshot and the events are ordered by the connection's frame sequence numbers: an event that came while
 * `get_states` was under way is applied on top of the snapshot only when its frame came after the snapshot's.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { HomeTarget } from "../../io/home_target.ts";
import { HaCommandError, type HaConnection } from "./ha_connection.ts";
import { type HaArea, type HaFloor, type HaRegistryEntry, HaRegistryLoader } from "./ha_registry.ts";
import { type HaState, readState } from "./ha_state.ts";
import { haTargets } from "./ha_targets.ts";

/** Options of {@link HaCache}. */
export interface HaCacheOptions {
  /** The connection the cache loads through and whose events keep it current. */
  connection: HaConnection;
  clock: Clock;
  logger: Logger;
  /** An entity's state changed: by an event, or found changed in the snapshot after a reconnect. */
  onChange(entityId: string, before: HaState | undefined, after: HaState | undefined): void;
  /** The registries were loaded: names, areas or aliases may differ. */
  onNames(): void;
  /** An entity came, went, or got another friendly name. */
  onNamesSoon(): void;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Runs `work` once at a time; a call while it runs makes it run once more after. */
class Coalesced {
  readonly #work: () => Promise<void>;
  #running: Promise<void> | undefined;
  #again = false;

  constructor(work: () => Promise<void>) {
    this.#work = work;
  }

  run(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          await this.#work();
        } while (this.#again);
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }
}

/** The device's picture of one Home Assistant. */
export class HaCache {
  readonly #options: HaCacheOptions;
  readonly #connection: HaConnection;
  readonly #registries: HaRegistryLoader;
  #states = new Map<string, HaState>();
  #services = new Map<string, Set<string>>();
  #areas = new Map<string, HaArea>();
  #floors = new Map<string, HaFloor>();
  /** The entities as local intents' targets, made again when names, places or the set of entities change. */
  #targets: HomeTarget[] | undefined;
  #deviceAreas = new Map<string, string>();
  #registry = new Map<string, HaRegistryEntry>();
  /** Whether a snapshot was ever loaded (changes are compared with the previous one on reconnect). */
  #loaded = false;
  /** When the cache last matched HA (ms since the epoch). */
  #seenAt: number | null = null;
  /** While a snapshot loads: the state events that came meanwhile, to apply on top of it when they are newer. */
  #during: Array<{ event: Record<string, unknown>; seq: number }> | undefined;
  readonly #refreshRegistry = new Coalesced(() => this.#loadRegistry());
  readonly #refreshServices = new Coalesced(() => this.#loadServices());

  /** Subscribes to the events that keep the cache current; nothing is loaded before the connection is up. */
  constructor(options: HaCacheOptions) {
    this.#options = options;
    const connection = options.connection;
    this.#connection = connection;
    this.#registries = new HaRegistryLoader(connection, options.logger);
    connection.subscribe(
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
      connection.subscribe({ type: "subscribe_events", event_type: eventType }, () => this.#registryChanged());
    }
    for (const eventType of ["service_registered", "service_removed"]) {
      connection.subscribe({ type: "subscribe_events", event_type: eventType }, () => this.#servicesChanged());
    }
  }

  /** The states, by entity id. */
  get states(): ReadonlyMap<string, HaState> {
    return this.#states;
  }

  /** The services, by domain. */
  get services(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.#services;
  }

  /** Whether a snapshot was ever loaded: before one, nothing here is known. */
  get loaded(): boolean {
    return this.#loaded;
  }

  /** When the cache last matched HA (ms since the epoch), or null before the first snapshot. */
  get seenAt(): number | null {
    return this.#seenAt;
  }

  /** Every area. */
  areas(): HaArea[] {
    return [...this.#areas.values()];
  }

  /** An entity's registry entry, if it has one. */
  entry(entityId: string): HaRegistryEntry | undefined {
    return this.#registry.get(entityId);
  }

  /** The entities with a state that are not hidden, sorted: what the tools, the targets and the graph show. */
  shownIds(): string[] {
    return [...this.#states.keys()].filter((id) => !this.#registry.get(id)?.hidden).sort();
  }

  /** An entity's name: its friendly name, else the registry's, else the object id. */
  nameOf(entityId: string): string {
    const friendly = this.#states.get(entityId)?.attributes.friendly_name;
    const entry = this.#registry.get(entityId);
    const name = typeof friendly === "string" ? friendly : null;
    return name ?? entry?.name ?? entry?.originalName ?? entityId.slice(entityId.indexOf(".") + 1);
  }

  /** An entity's area: its own, else its device's. */
  areaOf(entityId: string): HaArea | undefined {
    const entry = this.#registry.get(entityId);
    const areaId = entry?.areaId ?? (entry?.deviceId ? this.#deviceAreas.get(entry.deviceId) : undefined);
    return areaId ? this.#areas.get(areaId) : undefined;
  }

  /**
   * The entities local intents may act on or read, by their names, aliases, area and floor (hidden ones left out).
   * Made again only when names, places or the set of entities changed; states are read at each use.
   */
  homeTargets(): readonly HomeTarget[] {
    this.#targets ??= haTargets(
      this.shownIds().map((id) => {
        const area = this.areaOf(id);
        const floor = area?.floorId ? this.#floors.get(area.floorId) : undefined;
        return {
          id,
          name: this.nameOf(id),
          aliases: this.#registry.get(id)?.aliases ?? [],
          area,
          floor,
          current: () => this.#states.get(id),
        };
      }),
    );
    return this.#targets;
  }

  /** On every connection: states and services, then the registries; changes missed while away are handed in. */
  async loadAll(): Promise<void> {
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
        this.#options.onChange(entityId, previous.get(entityId), snapshot.get(entityId));
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

  async #loadRegistry(): Promise<void> {
    const loaded = await this.#registries.load((entityId) => this.#states.has(entityId));
    this.#areas = loaded.areas;
    this.#floors = loaded.floors;
    this.#deviceAreas = loaded.deviceAreas;
    this.#registry = loaded.registry;
    this.#targets = undefined;
    this.#options.onNames();
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
    this.#options.onChange(entityId, before, after);
    if (!before || !after || before.attributes.friendly_name !== after.attributes.friendly_name) {
      this.#targets = undefined;
      this.#options.onNamesSoon();
    }
  }
}
