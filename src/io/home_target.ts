/**
 * What a device can be asked to do in the house without a model: its switchable, settable or readable things
 * ("targets") by the names and places the household uses, and, for each action, the device's own tool call that does
 * it. Local intents (`src/intents/`) read these to run "turn off the kitchen light" when no model answers; the call
 * then goes through the tool registry like the model's would — the same trust rules, the same owner's yes.
 *
 * @module
 */

/** The kinds of thing a local command can name ("the lights", "空调"): Home Assistant's domains, by another name. */
export type HomeTargetKind =
  | "light"
  | "switch"
  | "fan"
  | "cover"
  | "lock"
  | "climate"
  | "media_player"
  | "sensor"
  | "binary_sensor"
  | "other";

/** One thing a local command may do to a target. Numbers are as said: the target checks their range. */
export type HomeAction =
  | { kind: "turn_on" }
  | { kind: "turn_off" }
  | { kind: "toggle" }
  | { kind: "open" }
  | { kind: "close" }
  | { kind: "lock" }
  | { kind: "unlock" }
  | { kind: "brightness"; percent: number }
  | { kind: "color_temp"; kelvin: number }
  | { kind: "position"; percent: number }
  | { kind: "temperature"; degrees: number };

/** The tool call that performs an action: a tool of the target's device, with arguments its schema accepts. */
export interface PlannedCall {
  tool: string;
  args: Record<string, unknown>;
}

/** Why an action cannot be planned: said to the person as is ("brightness: 300 is out of range 0–100"). */
export interface RefusedAction {
  refused: string;
  /** For a number out of range: which setting, the value said, the range and its unit (a reply in any language). */
  range?: { setting: string; value: number; min: number; max: number; unit: string };
}

/**
 * One switchable or readable thing. Names and places are the household's own words (a friendly name, aliases, the
 * area, the floor and their aliases), matched after normalisation by the caller.
 */
export interface HomeTarget {
  /** Unique among all devices' targets: `light.kitchen`, `gpio:fan`. */
  readonly id: string;
  readonly kind: HomeTargetKind;
  /** The name to say back first, then aliases. */
  readonly names: readonly string[];
  /** Area names and aliases, then floor names and aliases; empty when it has no place. */
  readonly places: readonly string[];
  /** The current state as its device last saw it (`on`, `locked`, `23.5`), or undefined when unknown. */
  readonly state: string | undefined;
  /** Unit of a numeric state (`°C`, `%`). */
  readonly unit?: string | undefined;
  /** What a reading measures (`temperature`, `humidity`), for sensors; climate devices report `temperature`. */
  readonly measures?: string | undefined;
  /** A second reading some kinds carry (a thermostat's current temperature). */
  readonly reading?: { value: number; unit: string } | undefined;
  /** What a thermostat is set to. */
  readonly setpoint?: { value: number; unit: string } | undefined;
  /**
   * The device's tool call for `action`, a refusal naming the range or what the target cannot do, or undefined when
   * the action does not apply to this kind of target.
   */
  plan(action: HomeAction): PlannedCall | RefusedAction | undefined;
}

/**
 * Whether a plan is a refusal.
 *
 * @example
 * ```ts
 * isRefusal({ refused: "brightness: 300 is out of range 0–100" }); // true
 * isRefusal({ tool: "ha_call_service", args: {} }); // false
 * ```
 */
export function isRefusal(plan: PlannedCall | RefusedAction): plan is RefusedAction {
  return "refused" in plan;
}

/**
 * A percentage as said, or the refusal that names the setting and the range.
 *
 * @example
 * ```ts
 * checkPercent("brightness", 40); // undefined
 * checkPercent("brightness", 300)?.refused; // "brightness: 300% is out of range 0–100%"
 * ```
 */
export function checkPercent(setting: string, percent: number): RefusedAction | undefined {
  if (Number.isFinite(percent) && percent >= 0 && percent <= 100) return undefined;
  return {
    refused: `${setting}: ${percent}% is out of range 0–100%`,
    range: { setting, value: percent, min: 0, max: 100, unit: "%" },
  };
}
