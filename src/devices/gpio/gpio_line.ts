/**
 * One configured GPIO line: its settings as the config gives them (`devices.gpio.<name>`) and the record the device
 * keeps of it while running — the logical level last seen, the last accepted edge for debouncing, the counters status
 * shows. Apart from `gpio_device.ts` because the edge watcher, the tools and the home targets all read and write this
 * one record per line.
 *
 * `active_low` is applied by homed, never passed to the tools (their output is the wire's level): as in libgpiod, it
 * inverts values and so swaps rising and falling; `edge` and the events speak of the inverted, logical line.
 *
 * @module
 */

import type { Trust } from "../../identity/trust.ts";

/** The setting every message names. */
export const GPIO_SETTING = "devices.gpio";

/**
 * One configured line (`devices.gpio.<name>`), as the config gives it.
 *
 * @example
 * ```ts
 * const porchLight: GpioLineSettings = {
 *   chip: "gpiochip0",
 *   line: 22,
 *   direction: "out",
 *   edge: "both", // inputs only
 *   turns: false,
 *   trust: "household",
 *   debounceMs: 0,
 *   activeLow: false,
 * };
 * ```
 */
export interface GpioLineSettings {
  /** A chip such as `gpiochip0`. */
  chip: string;
  /** The line's offset on its chip. */
  line: number;
  direction: "in" | "out";
  /** Which edges of an input become events, after `activeLow`. */
  edge: "rising" | "falling" | "both";
  /** Each edge is a message to the butler (true) or a device event (false). */
  turns: boolean;
  /** The trust of the line's inputs. */
  trust: Trust;
  /** An edge this soon after the line's last accepted one (by the tool's timestamps) is dropped. */
  debounceMs: number;
  /** The line is active when the wire is low: values are inverted, rising and falling swapped. */
  activeLow: boolean;
}

/** What status shows of one line. */
export interface LineState {
  name: string;
  settings: GpioLineSettings;
  /** The logical level last seen (an edge, debounced or not, a read, or a set); null while unknown. */
  value: 0 | 1 | null;
  /** When `value` was learnt (clock ms). */
  valueAt: number | null;
  /** The tool's timestamp of the last accepted edge, for debouncing. */
  lastEdgeMs: number | undefined;
  /** When the last event was emitted (an input) or the last value set (an output). */
  lastEventAt: number | null;
  /** Edges gpiomon reported (an input), whatever became of them. */
  edges: number;
  /** Events emitted (an input), or values set (an output). */
  events: number;
  debounced: number;
}

/** The lines of `devices.gpio` as {@link lineStates} indexes them. */
export interface GpioLineIndex {
  /** Every line by its configured name, in the config's order. */
  byName: Map<string, LineState>;
  /** Input lines by chip, then offset: one gpiomon watches each chip. */
  inputs: Map<string, Map<number, LineState>>;
}

/**
 * A fresh record for each configured line, by name and (inputs) by chip and offset; a TypeError naming both settings
 * when two names are one line, since the kernel grants a line to one request and two names would fight over it.
 *
 * @example
 * ```ts
 * const { byName, inputs } = lineStates({
 *   doorbell: {
 *     chip: "gpiochip0",
 *     line: 17,
 *     direction: "in",
 *     edge: "falling",
 *     turns: false,
 *     trust: "household",
 *     debounceMs: 50,
 *     activeLow: true,
 *   },
 * });
 * byName.get("doorbell")?.value; // null: unknown until read or an edge comes
 * inputs.get("gpiochip0")?.has(17); // true
 * ```
 */
export function lineStates(lines: Record<string, GpioLineSettings>): GpioLineIndex {
  const byName = new Map<string, LineState>();
  const inputs = new Map<string, Map<number, LineState>>();
  const taken = new Map<string, string>();
  for (const [name, settings] of Object.entries(lines)) {
    const key = `${settings.chip}\u0000${settings.line}`;
    const other = taken.get(key);
    if (other !== undefined) {
      throw new TypeError(
        `${GPIO_SETTING}.${name}: ${settings.chip} line ${settings.line} is already ${GPIO_SETTING}.${other}; ` +
          `a line may be named once`,
      );
    }
    taken.set(key, name);
    const state: LineState = {
      name,
      settings,
      value: null,
      valueAt: null,
      lastEdgeMs: undefined,
      lastEventAt: null,
      edges: 0,
      events: 0,
      debounced: 0,
    };
    byName.set(name, state);
    if (settings.direction === "in") {
      const chip = inputs.get(settings.chip) ?? new Map<number, LineState>();
      chip.set(settings.line, state);
      inputs.set(settings.chip, chip);
    }
  }
  return { byName, inputs };
}

/**
 * The other level: a wire level to a logical one and back for an active-low line.
 *
 * @example
 * ```ts
 * flip(1); // 0
 * ```
 */
export function flip(value: 0 | 1): 0 | 1 {
  return value === 1 ? 0 : 1;
}
