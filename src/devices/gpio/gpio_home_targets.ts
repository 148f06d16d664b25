/**
 * The GPIO lines as home targets, for local intents ("turn on the fan" without a model): outputs are switches,
 * driven through `gpio_set`; inputs are binary sensors, read, never set. Apart from `gpio_device.ts` because it is
 * the device's face to `src/intents/`, and reads nothing but the lines' records.
 *
 * @module
 */

import type { HomeTarget } from "../../io/home_target.ts";
import type { LineState } from "./gpio_line.ts";

/**
 * Output lines as switches local intents may turn on and off by name ("turn on the fan" for a line named `fan`;
 * `porch_light` answers to "porch light" too); inputs are read, never set.
 *
 * @example
 * ```ts
 * import { lineStates } from "./gpio_line.ts";
 *
 * const { byName } = lineStates({
 *   porch_light: {
 *     chip: "gpiochip0",
 *     line: 22,
 *     direction: "out",
 *     edge: "both",
 *     turns: false,
 *     trust: "household",
 *     debounceMs: 0,
 *     activeLow: false,
 *   },
 * });
 * const [porch] = gpioHomeTargets(byName.values());
 * porch?.names; // ["porch_light", "porch light"]
 * porch?.plan({ kind: "turn_on" }); // { tool: "gpio_set", args: { name: "porch_light", value: 1 } }
 * ```
 */
export function gpioHomeTargets(lines: Iterable<LineState>): HomeTarget[] {
  return [...lines].map((line): HomeTarget => ({
    id: `gpio:${line.name}`,
    kind: line.settings.direction === "out" ? "switch" : "binary_sensor",
    names: [...new Set([line.name, line.name.replace(/[_-]+/g, " ")])],
    places: [],
    get state() {
      return line.value === null ? undefined : line.value === 1 ? "on" : "off";
    },
    plan: (action) => {
      if (line.settings.direction !== "out") return undefined;
      const value = action.kind === "turn_on" ? 1 : action.kind === "turn_off" ? 0 : undefined;
      if (action.kind === "toggle" && line.value !== null) {
        return { tool: "gpio_set", args: { name: line.name, value: line.value === 1 ? 0 : 1 } };
      }
      return value === undefined ? undefined : { tool: "gpio_set", args: { name: line.name, value } };
    },
  }));
}
