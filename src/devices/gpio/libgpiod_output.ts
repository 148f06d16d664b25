/**
 * Reading what libgpiod's tools print: `--version` (which syntax they speak), gpiomon's event lines in either
 * version's format, gpioget's levels (the formats are in `libgpiod_commands.ts`). Apart from `gpio_device.ts` because
 * these are pure functions of text, tested on each version's exact output. Each refuses what is not the tool's own
 * output, so a stand-in or a broken install is reported rather than taken for a level or an edge.
 *
 * @module
 */

import { GPIO_SETTING } from "./gpio_line.ts";
import type { GpioVersion } from "./libgpiod_commands.ts";

/**
 * One edge as gpiomon printed it: the wire's edge, not yet inverted by `active_low`.
 *
 * @example
 * ```ts
 * const edge: GpioMonitorEvent = { offset: 17, edge: "rising", timestampMs: 512_000.000001 };
 * ```
 */
export interface GpioMonitorEvent {
  offset: number;
  edge: "rising" | "falling";
  /** The kernel's event timestamp (monotonic, not wall time) in milliseconds, for debouncing. */
  timestampMs: number;
}

/**
 * The syntax of a libgpiod tool from its `--version` output (`gpiomon (libgpiod) v1.6.3`); undefined when it is not
 * one. Majors above 2 are taken for v2's syntax.
 *
 * @example
 * ```ts
 * parseGpioVersion("gpiomon (libgpiod) v1.6.3\nCopyright (C) 2017-2018 Bartosz Golaszewski\n"); // "v1"
 * parseGpioVersion("gpiomon (libgpiod) v2.2.1\n"); // "v2"
 * parseGpioVersion("sh: gpiomon: not found"); // undefined
 * ```
 */
export function parseGpioVersion(text: string): GpioVersion | undefined {
  const major = /\(libgpiod\)\s+v(\d+)\./.exec(text)?.[1];
  if (major === undefined) return undefined;
  const number = Number(major);
  return number === 1 ? "v1" : number >= 2 ? "v2" : undefined;
}

/** v1: `printf("event: %s offset: %u timestamp: [%8ld.%09ld]\n", " RISING EDGE" | "FALLING EDGE", …)`. */
const V1_EVENT = /^event:\s+(RISING|FALLING) EDGE offset:\s*(\d+) timestamp:\s*\[\s*(\d+)\.(\d{1,9})\]\s*$/;
/** v2: `<s>.<ns, 9 digits>\t(rising|falling)\t<chip> <offset>[ "<line name>"]` (with `-c`, no `--utc`). */
const V2_EVENT = /^(\d+)\.(\d{9})\t(rising|falling)\t\S+ (\d+)(?: .*)?$/;

/**
 * One line of gpiomon's default output, in either version's format; undefined when it is not an event line.
 *
 * @example
 * ```ts
 * parseMonitorLine("event:  RISING EDGE offset: 17 timestamp: [1700000000.123456789]");
 * // { offset: 17, edge: "rising", timestampMs: 1700000000123.4568 }
 * parseMonitorLine('1700000000.123456789\tfalling\tgpiochip0 17 "GPIO17"');
 * // { offset: 17, edge: "falling", timestampMs: 1700000000123.4568 }
 * ```
 */
export function parseMonitorLine(line: string): GpioMonitorEvent | undefined {
  const v1 = V1_EVENT.exec(line);
  if (v1) {
    return {
      offset: Number(v1[2]),
      edge: v1[1] === "RISING" ? "rising" : "falling",
      timestampMs: toMs(v1[3]!, v1[4]!),
    };
  }
  const v2 = V2_EVENT.exec(line);
  if (v2) {
    return {
      offset: Number(v2[4]),
      edge: v2[3] === "rising" ? "rising" : "falling",
      timestampMs: toMs(v2[1]!, v2[2]!),
    };
  }
  return undefined;
}

function toMs(seconds: string, nanos: string): number {
  // The digits are the nanoseconds field as printed (%09ld): right-aligned, so "5" would be 5 ns, not 0.5 s.
  return Number(seconds) * 1_000 + Number(nanos) / 1_000_000;
}

/**
 * `count` levels from gpioget's output (`1 0`), or an error quoting what it printed.
 *
 * @example
 * ```ts
 * parseLevels("1 0\n", 2, "gpioget"); // [1, 0]
 * ```
 */
export function parseLevels(output: string, count: number, program: string): Array<0 | 1> {
  const words = output.trim().split(/\s+/).filter(Boolean);
  if (words.length !== count || !words.every((word) => word === "0" || word === "1")) {
    throw new Error(
      `${program} printed ${JSON.stringify(output.trim().slice(0, 200))}, not ${count} value(s) of 0 or 1; ` +
        `check ${GPIO_SETTING}`,
    );
  }
  return words.map((word) => (word === "1" ? 1 : 0));
}
