/**
 * The `ha_states` tool: Home Assistant's entities with their state and key attributes, one compact line each,
 * filtered by area (its name or an alias), domain, or words in the id, name or aliases, at most {@link STATES_LIMIT}
 * lines. It reads the device's cache only, never HA: while HA is away it answers with what was last seen, and says so.
 *
 * @module
 */

import type { DeviceTool } from "../../io/device.ts";
import type { HaCache } from "./ha_cache.ts";
import type { HaConnection } from "./ha_connection.ts";
import type { HaRules } from "./ha_settings.ts";
import { domainOf } from "./ha_state.ts";
import { entityLine } from "./ha_state_text.ts";

/** Most lines `ha_states` gives; the rest are counted. */
export const STATES_LIMIT = 50;

/** What `ha_states` reads. */
export interface StatesToolDeps {
  cache: HaCache;
  connection: HaConnection;
  rules: HaRules;
}

/** What `ha_states` may be asked for; absent: any. */
interface StatesFilter {
  area?: string;
  domain?: string;
  query?: string;
}

function iso(time: number | null): string | null {
  return time === null ? null : new Date(time).toISOString();
}

function normal(text: string): string {
  return text.trim().toLowerCase();
}

/** The `ha_states` tool of a device, reading `deps`. */
export function statesTool(deps: StatesToolDeps): DeviceTool {
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
      listStates(deps, {
        ...(typeof args.area === "string" && args.area.trim() ? { area: args.area } : {}),
        ...(typeof args.domain === "string" && args.domain.trim() ? { domain: args.domain } : {}),
        ...(typeof args.query === "string" && args.query.trim() ? { query: args.query } : {}),
      }),
  };
}

/** The ids of the areas `wanted` names: by name, id or alias, else by part of a name; throws naming the areas. */
function areaIdsOf(cache: HaCache, wanted: string, asked: string): Set<string> {
  const areas = cache.areas();
  let matched = areas.filter((area) =>
    normal(area.name) === wanted || area.id === wanted || area.aliases.some((alias) => normal(alias) === wanted)
  );
  if (matched.length === 0) matched = areas.filter((area) => normal(area.name).includes(wanted));
  if (matched.length === 0) {
    const known = areas.map((area) => area.name).sort().join(", ") || "none";
    throw new Error(`No Home Assistant area is called ${JSON.stringify(asked)}; areas: ${known}`);
  }
  return new Set(matched.map((area) => area.id));
}

function listStates(deps: StatesToolDeps, filter: StatesFilter): string {
  const { cache, connection, rules } = deps;
  const connected = connection.state === "connected";
  if (!cache.loaded) {
    const why = rules.whyNot(connection.lastError);
    throw new Error(`Home Assistant is not connected yet${why}; its states are not known, try again later`);
  }
  const areaIds = filter.area === undefined ? undefined : areaIdsOf(cache, normal(filter.area), filter.area);
  const domain = filter.domain === undefined ? undefined : normal(filter.domain);
  const query = filter.query === undefined ? undefined : normal(filter.query);
  const lines: string[] = [];
  for (const entityId of [...cache.states.keys()].sort()) {
    const entry = cache.entry(entityId);
    if (entry?.hidden) continue;
    if (domain !== undefined && domainOf(entityId) !== domain) continue;
    const area = cache.areaOf(entityId);
    if (areaIds && (!area || !areaIds.has(area.id))) continue;
    const name = cache.nameOf(entityId);
    if (
      query !== undefined &&
      ![entityId, name, ...(entry?.aliases ?? [])].some((text) => normal(text).includes(query))
    ) continue;
    lines.push(entityLine(entityId, name, area, cache.states.get(entityId)!));
  }
  const stale = connected
    ? ""
    : `Home Assistant is not connected${rules.whyNot(connection.lastError)}; as last seen at ${iso(cache.seenAt)}:\n`;
  if (lines.length === 0) return `${stale}No Home Assistant entity matches ${JSON.stringify(filter)}`;
  const shown = lines.slice(0, STATES_LIMIT);
  const rest = lines.length - shown.length;
  const more = rest > 0 ? `\n… and ${rest} more; narrow it down with area, domain or query` : "";
  return `${stale}${lines.length} ${lines.length === 1 ? "entity" : "entities"}:\n${shown.join("\n")}${more}`;
}
