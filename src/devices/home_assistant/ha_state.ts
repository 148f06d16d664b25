/**
 * An entity's state as Home Assistant reports it (`get_states`, and `new_state` of a `state_changed` event), read
 * from HA's JSON into the few fields homed uses. Apart from the cache because the events, the tools and the local
 * intents' targets all read the same shape.
 *
 * @module
 */

/** A state as HA reports it. */
export interface HaState {
  entity_id: string;
  state: string;
  attributes: Record<string, unknown>;
  last_changed: string | undefined;
  last_updated: string | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function stringOr<T>(value: unknown, fallback: T): string | T {
  return typeof value === "string" ? value : fallback;
}

/**
 * The state in `value`, or undefined when it is not one (no entity id or state: an entity removed, or a frame HA's
 * future versions shaped otherwise).
 *
 * @example
 * ```ts
 * readState({ entity_id: "light.kitchen", state: "on", attributes: { brightness: 180 } })?.state; // "on"
 * readState(null); // undefined
 * ```
 */
export function readState(value: unknown): HaState | undefined {
  if (!isRecord(value) || typeof value.entity_id !== "string" || typeof value.state !== "string") return undefined;
  return {
    entity_id: value.entity_id,
    state: value.state,
    attributes: isRecord(value.attributes) ? value.attributes : {},
    last_changed: stringOr(value.last_changed, undefined),
    last_updated: stringOr(value.last_updated, undefined),
  };
}

/**
 * The domain of an entity id, the part before the dot.
 *
 * @example
 * ```ts
 * domainOf("light.kitchen"); // "light"
 * ```
 */
export function domainOf(entityId: string): string {
  return entityId.slice(0, entityId.indexOf("."));
}
