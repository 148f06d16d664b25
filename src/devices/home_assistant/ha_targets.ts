/**
 * Home Assistant's entities as {@link HomeTarget}s: what local intents may switch, set or read without a model, each
 * action planned as one `ha_call_service` call — so the registry's gate, the domain list and the owner's yes apply
 * exactly as to the model's calls.
 *
 * @module
 */

import {
  checkPercent,
  type HomeAction,
  type HomeTarget,
  type HomeTargetKind,
  type PlannedCall,
  type RefusedAction,
} from "../../io/home_target.ts";

/** An entity as the device knows it: its names, its place and a way to read its state now. */
export interface HaEntityView {
  id: string;
  name: string;
  aliases: readonly string[];
  area: { name: string; aliases: readonly string[] } | undefined;
  floor: { name: string; aliases: readonly string[] } | undefined;
  /** The state now (read at each use: a target outlives many state changes). */
  current(): { state: string; attributes: Record<string, unknown> } | undefined;
}

/** Domains local intents know, and the kind each one is. */
const KINDS: Record<string, HomeTargetKind> = {
  light: "light",
  switch: "switch",
  input_boolean: "switch",
  fan: "fan",
  cover: "cover",
  lock: "lock",
  climate: "climate",
  media_player: "media_player",
  sensor: "sensor",
  binary_sensor: "binary_sensor",
};

/** What a service may do on a domain, by action; absent: the action does not apply to it. */
const SERVICES: Partial<Record<HomeTargetKind, Partial<Record<HomeAction["kind"], string>>>> = {
  light: { turn_on: "turn_on", turn_off: "turn_off", toggle: "toggle" },
  switch: { turn_on: "turn_on", turn_off: "turn_off", toggle: "toggle" },
  fan: { turn_on: "turn_on", turn_off: "turn_off", toggle: "toggle" },
  media_player: { turn_on: "turn_on", turn_off: "turn_off", toggle: "toggle" },
  climate: { turn_on: "turn_on", turn_off: "turn_off", toggle: "toggle" },
  // "打开车库门" is open; a cover has no "on".
  cover: { turn_on: "open_cover", open: "open_cover", turn_off: "close_cover", close: "close_cover", toggle: "toggle" },
  // "打开前门" on a lock means unlock it: the owner's yes guards it like any unlock.
  lock: { lock: "lock", close: "lock", turn_off: "lock", unlock: "unlock", open: "unlock", turn_on: "unlock" },
};

/** Colour temperatures HA lights take when the light does not say its own range. */
const KELVIN_RANGE = { min: 1_500, max: 9_000 };
/** Thermostat set points when the device does not say its own range. */
const TEMPERATURE_RANGE = { min: 7, max: 35 };

/**
 * The targets of `entities` whose domain local intents know (others are left out).
 *
 * @example
 * ```ts
 * const [light] = haTargets([{
 *   id: "light.kitchen",
 *   name: "Kitchen light",
 *   aliases: ["厨房灯"],
 *   area: { name: "Kitchen", aliases: ["厨房"] },
 *   floor: undefined,
 *   current: () => ({ state: "off", attributes: {} }),
 * }]);
 * light!.plan({ kind: "brightness", percent: 40 });
 * // { tool: "ha_call_service", args: { domain: "light", service: "turn_on", entity_id: "light.kitchen", data: { brightness_pct: 40 } } }
 * ```
 */
export function haTargets(entities: readonly HaEntityView[]): HomeTarget[] {
  const targets: HomeTarget[] = [];
  for (const entity of entities) {
    const domain = entity.id.slice(0, entity.id.indexOf("."));
    const kind = KINDS[domain];
    if (kind) targets.push(targetOf(entity, domain, kind));
  }
  return targets;
}

function targetOf(entity: HaEntityView, domain: string, kind: HomeTargetKind): HomeTarget {
  const names = unique([entity.name, ...entity.aliases]);
  const places = unique([
    ...(entity.area ? [entity.area.name, ...entity.area.aliases] : []),
    ...(entity.floor ? [entity.floor.name, ...entity.floor.aliases] : []),
  ]);
  const call = (service: string, data?: Record<string, unknown>): PlannedCall => ({
    tool: "ha_call_service",
    args: { domain, service, entity_id: entity.id, ...(data ? { data } : {}) },
  });
  return {
    id: entity.id,
    kind,
    names,
    places,
    get state() {
      return entity.current()?.state;
    },
    get unit() {
      const unit = entity.current()?.attributes.unit_of_measurement;
      return typeof unit === "string" && unit ? unit : undefined;
    },
    get measures() {
      if (kind === "climate") return "temperature";
      const deviceClass = entity.current()?.attributes.device_class;
      return typeof deviceClass === "string" ? deviceClass : undefined;
    },
    get reading() {
      const attributes = entity.current()?.attributes;
      const value = attributes?.current_temperature;
      if (kind !== "climate" || typeof value !== "number") return undefined;
      const unit = attributes?.temperature_unit;
      return { value, unit: typeof unit === "string" ? unit : "°" };
    },
    get setpoint() {
      const attributes = entity.current()?.attributes;
      const value = attributes?.temperature;
      if (kind !== "climate" || typeof value !== "number") return undefined;
      const unit = attributes?.temperature_unit;
      return { value, unit: typeof unit === "string" ? unit : "°" };
    },
    plan(action: HomeAction): PlannedCall | RefusedAction | undefined {
      const attributes = entity.current()?.attributes ?? {};
      switch (action.kind) {
        case "brightness":
          if (kind !== "light") return undefined;
          return checkPercent("brightness", action.percent) ??
            call("turn_on", { brightness_pct: Math.round(action.percent) });
        case "color_temp": {
          if (kind !== "light") return undefined;
          const min = numberOr(attributes.min_color_temp_kelvin, KELVIN_RANGE.min);
          const max = numberOr(attributes.max_color_temp_kelvin, KELVIN_RANGE.max);
          if (!(action.kelvin >= min && action.kelvin <= max)) {
            return {
              refused: `colour temperature: ${action.kelvin} K is out of range ${min}–${max} K`,
              range: { setting: "colour temperature", value: action.kelvin, min, max, unit: "K" },
            };
          }
          return call("turn_on", { color_temp_kelvin: Math.round(action.kelvin) });
        }
        case "position":
          if (kind !== "cover") return undefined;
          return checkPercent("position", action.percent) ??
            call("set_cover_position", { position: Math.round(action.percent) });
        case "temperature": {
          if (kind !== "climate") return undefined;
          const min = numberOr(attributes.min_temp, TEMPERATURE_RANGE.min);
          const max = numberOr(attributes.max_temp, TEMPERATURE_RANGE.max);
          if (!(action.degrees >= min && action.degrees <= max)) {
            return {
              refused: `temperature: ${action.degrees}° is out of range ${min}–${max}°`,
              range: { setting: "temperature", value: action.degrees, min, max, unit: "°" },
            };
          }
          return call("set_temperature", { temperature: action.degrees });
        }
        default: {
          const service = SERVICES[kind]?.[action.kind];
          return service ? call(service) : undefined;
        }
      }
    },
  };
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function unique(texts: readonly string[]): string[] {
  return [...new Set(texts.map((text) => text.trim()).filter((text) => text !== ""))];
}
