/**
 * What one edge from gpiomon does to its input line: the logical edge (swapped for an active-low line), the line's
 * level (every edge tells it), the debouncing — an edge within `debounceMs` of the line's last accepted one is
 * dropped, judged by the kernel's own timestamps — and the line's `edge` setting; then the input an edge the line
 * asked for becomes. Apart from `gpio_device.ts` because these rules decide which presses and releases the house
 * hears, and they read only the line's record, so they are checked here without a process.
 *
 * @module
 */

import type { InputDraft } from "../../io/device.ts";
import type { LineState } from "./gpio_line.ts";
import type { GpioMonitorEvent } from "./libgpiod_output.ts";

/**
 * Takes one edge of `state`'s line at `now` (clock ms): counts it, updates the line's level and debouncing, and gives
 * the logical edge when it is one to report — undefined when it was a bounce or is not an edge the line asked for.
 *
 * @example
 * ```ts
 * import { lineStates } from "./gpio_line.ts";
 *
 * const doorbell = lineStates({
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
 * }).byName.get("doorbell")!;
 * acceptEdge(doorbell, { offset: 17, edge: "rising", timestampMs: 1_000 }, Date.now()); // "falling" (active-low)
 * acceptEdge(doorbell, { offset: 17, edge: "falling", timestampMs: 1_010 }, Date.now()); // undefined (a bounce)
 * doorbell.value; // 1: the bounce still told the level
 * ```
 */
export function acceptEdge(state: LineState, event: GpioMonitorEvent, now: number): "rising" | "falling" | undefined {
  const { settings } = state;
  const edge = settings.activeLow ? (event.edge === "rising" ? "falling" : "rising") : event.edge;
  const value = edge === "rising" ? 1 : 0;
  state.edges++;
  // Every edge, even a bounce, tells the level: a short pulse inside the debounce period still ends at its level.
  state.value = value;
  state.valueAt = now;
  const since = state.lastEdgeMs === undefined ? Infinity : event.timestampMs - state.lastEdgeMs;
  // Debounced on the kernel's timestamps: a burst that reaches homed late is judged by when it happened.
  if (since >= 0 && since < settings.debounceMs) {
    state.debounced++;
    return undefined;
  }
  // Every accepted edge restarts the period, even one the line does not report (a release's bounce is no press).
  state.lastEdgeMs = event.timestampMs;
  if (settings.edge !== "both" && settings.edge !== edge) return undefined;
  return edge;
}

/**
 * The input a reported edge of `state`'s line becomes, from `gpio:<name>` with the line's trust: a `gpio.edge`
 * device event, or with `turns` a message to the butler. `at`: when it was seen (ISO 8601).
 *
 * @example
 * ```ts
 * import { lineStates } from "./gpio_line.ts";
 *
 * const bell = lineStates({
 *   bell: {
 *     chip: "gpiochip0",
 *     line: 17,
 *     direction: "in",
 *     edge: "rising",
 *     turns: true,
 *     trust: "household",
 *     debounceMs: 0,
 *     activeLow: false,
 *   },
 * }).byName.get("bell")!;
 * edgeInput(bell, "rising", "2026-01-01T00:00:00.000Z").payload.text; // "bell: rising edge (now 1)"
 * ```
 */
export function edgeInput(state: LineState, edge: "rising" | "falling", at: string): InputDraft {
  const { settings, name } = state;
  const value = edge === "rising" ? 1 : 0;
  return settings.turns
    ? {
      source: `gpio:${name}`,
      sender: name,
      trust: settings.trust,
      type: "message",
      payload: { text: `${name}: ${edge} edge (now ${value})`, edge, value, at },
    }
    : {
      source: `gpio:${name}`,
      sender: name,
      trust: settings.trust,
      type: "gpio.edge",
      payload: { edge, value, at },
    };
}
