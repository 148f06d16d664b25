/**
 * How an entity's state reads in the tools' answers: one compact line per entity for `ha_states`, and the same key
 * attributes after a call. Every value from HA passes {@link untrustedLine} and is cut at 40 characters: names and
 * attributes are whatever HA's integrations (or whoever named a device) put there, and they go into the model's
 * prompt.
 *
 * @module
 */

import { untrustedLine } from "../../text/untrusted.ts";
import { domainOf, type HaState } from "./ha_state.ts";

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

/**
 * A value from HA as one short line: JSON unless a string, at most 40 characters.
 *
 * @example
 * ```ts
 * shownValue("on"); // "on"
 * shownValue(180); // "180"
 * ```
 */
export function shownValue(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "null";
  return untrustedLine(text.length > 40 ? `${text.slice(0, 39)}…` : text);
}

/**
 * The entity's key attributes in parentheses, with a space before, or nothing when it has none.
 *
 * @example
 * ```ts
 * const light = { entity_id: "light.kitchen", state: "on", last_changed: undefined, last_updated: undefined };
 * attributesText("light.kitchen", { ...light, attributes: { brightness: 180 } }); // " (brightness 180)"
 * ```
 */
export function attributesText(entityId: string, state: HaState): string {
  const parts = (KEY_ATTRIBUTES[domainOf(entityId)] ?? [])
    .filter((key) => state.attributes[key] !== undefined && state.attributes[key] !== null)
    .map((key) => `${key} ${shownValue(state.attributes[key])}`);
  return parts.length ? ` (${parts.join(", ")})` : "";
}

/**
 * One `ha_states` line: `light.kitchen "Kitchen light" on (brightness 180) [Kitchen]` — the name only when it is not
 * the id, the unit after the state, the area when there is one.
 */
export function entityLine(entityId: string, name: string, area: { name: string } | undefined, state: HaState): string {
  const unit = state.attributes.unit_of_measurement;
  const value = typeof unit === "string" && unit ? `${state.state} ${unit}` : state.state;
  const label = name && name !== entityId ? ` ${JSON.stringify(untrustedLine(name))}` : "";
  return `${entityId}${label} ${shownValue(value)}${attributesText(entityId, state)}${
    area ? ` [${untrustedLine(area.name)}]` : ""
  }`;
}
