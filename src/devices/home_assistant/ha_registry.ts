/**
 * Home Assistant's registries as the device reads them: areas (with their floor), floors, devices (for the area an
 * entity has through its device), and the entity registry with names, hidden flags and aliases. Each load asks HA for
 * all of them at once; aliases are only in the extended entries, asked in batches. One registry HA will not list
 * costs names or areas, never the connection — only a lost connection fails the load (it is loaded again on the next
 * one). Floors and aliases that an older HA does not know are asked about once.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { HaConnection } from "./ha_connection.ts";
import { HaCommandError } from "./ha_errors.ts";

/** Entity ids per `get_entries` command (aliases), to keep each frame small. */
const ALIAS_BATCH = 200;

/** An entity's entry in HA's entity registry. */
export interface HaRegistryEntry {
  name: string | null;
  originalName: string | null;
  areaId: string | null;
  deviceId: string | null;
  hidden: boolean;
  aliases: string[];
}

/** An area, with its aliases and the floor it is on. */
export interface HaArea {
  id: string;
  name: string;
  aliases: string[];
  floorId: string | null;
}

/** A floor, with its aliases. */
export interface HaFloor {
  name: string;
  aliases: string[];
}

/** One load of the registries. */
export interface HaRegistries {
  areas: Map<string, HaArea>;
  floors: Map<string, HaFloor>;
  /** The area of each device that has one, by device id. */
  deviceAreas: Map<string, string>;
  /** The entity registry, by entity id. */
  registry: Map<string, HaRegistryEntry>;
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

/** Whether the connection went away under the command: the whole load fails then, to be made on the next one. */
function connectionGone(error: unknown): boolean {
  return error instanceof HaCommandError && (error.code === "not_connected" || error.code === "connection_lost");
}

/** Loads the registries from one HA, remembering what that HA is too old to know. */
export class HaRegistryLoader {
  readonly #connection: HaConnection;
  readonly #logger: Logger;
  #aliasesUnsupported = false;
  #floorsUnsupported = false;

  /** Loads through `connection`; a registry HA would not list is logged on `logger`. */
  constructor(connection: HaConnection, logger: Logger) {
    this.#connection = connection;
    this.#logger = logger;
  }

  /**
   * Areas, devices (for the area an entity has through its device) and the entity registry with aliases. `known`
   * says which entities have a state: aliases are asked only for those, hidden ones left out.
   */
  async load(known: (entityId: string) => boolean): Promise<HaRegistries> {
    const [areaList, deviceList, entityList, floorList] = await Promise.all([
      this.#list("config/area_registry/list"),
      this.#list("config/device_registry/list"),
      this.#list("config/entity_registry/list"),
      this.#floorsUnsupported ? Promise.resolve([]) : this.#listFloors(),
    ]);
    const floors = new Map<string, HaFloor>();
    for (const item of floorList) {
      if (!isRecord(item) || typeof item.floor_id !== "string") continue;
      floors.set(item.floor_id, { name: stringOr(item.name, item.floor_id), aliases: stringsOf(item.aliases) });
    }
    const areas = new Map<string, HaArea>();
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
    const registry = new Map<string, HaRegistryEntry>();
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
    await this.#loadAliases(registry, known);
    return { areas, floors, deviceAreas, registry };
  }

  /** One registry's list; an HA that will not give it costs names and areas, not the load. */
  async #list(type: string): Promise<unknown[]> {
    try {
      const result = await this.#connection.command<unknown>(type);
      return Array.isArray(result) ? result : [];
    } catch (error) {
      if (connectionGone(error)) throw error;
      this.#logger.warning("Home Assistant did not list {type}: {error}; names and areas may be missing", {
        type,
        error: (error as Error).message,
      });
      return [];
    }
  }

  /** Floors (Home Assistant 2024.4 and later); an older one without them is asked once. */
  async #listFloors(): Promise<unknown[]> {
    try {
      const result = await this.#connection.command<unknown>("config/floor_registry/list");
      return Array.isArray(result) ? result : [];
    } catch (error) {
      if (connectionGone(error)) throw error;
      if (error instanceof HaCommandError && error.code === "unknown_command") this.#floorsUnsupported = true;
      else {
        this.#logger.warning("Home Assistant did not list its floors: {error}", {
          error: (error as Error).message,
        });
      }
      return [];
    }
  }

  /** Entity aliases are only in the extended entries (`config/entity_registry/get_entries`), asked in batches. */
  async #loadAliases(registry: Map<string, HaRegistryEntry>, known: (entityId: string) => boolean): Promise<void> {
    if (this.#aliasesUnsupported) return;
    const ids = [...registry.keys()].filter((id) => known(id) && !registry.get(id)!.hidden);
    for (let at = 0; at < ids.length; at += ALIAS_BATCH) {
      let result: unknown;
      try {
        result = await this.#connection.command("config/entity_registry/get_entries", {
          entity_ids: ids.slice(at, at + ALIAS_BATCH),
        });
      } catch (error) {
        if (connectionGone(error)) throw error;
        if (error instanceof HaCommandError && error.code === "unknown_command") {
          this.#aliasesUnsupported = true;
          this.#logger.info("This Home Assistant has no entity aliases to read (get_entries is unknown)");
        } else {
          // Aliases are a nicety: without them names and areas still work, and the connection stays.
          this.#logger.warning("Home Assistant did not give entity aliases: {error}", {
            error: (error as Error).message,
          });
        }
        return;
      }
      if (!isRecord(result)) continue;
      for (const [entityId, entry] of Object.entries(result)) {
        const found = registry.get(entityId);
        if (found && isRecord(entry) && Array.isArray(entry.aliases)) {
          found.aliases = entry.aliases.filter((alias): alias is string => typeof alias === "string");
        }
      }
    }
  }
}
