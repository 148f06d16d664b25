/**
 * The GPIO device (`devices.gpio`, channels `gpio:<name>`): lines of the Linux GPIO character device, reached through
 * libgpiod's command-line tools (Debian package `gpiod`) rather than a native binding, so homed needs only
 * `--allow-run` for `gpioget`, `gpioset` and `gpiomon`, and only when GPIO is configured. Every line is named in the
 * config; no tool takes a chip or an offset, so the LLM can reach no pin the owner did not name.
 *
 * Inputs: one `gpiomon` per chip that has input lines, started again with backoff when it exits (a missing tool
 * costs this device only). Each edge is debounced per line by the tool's own event timestamps (an edge within
 * `debounceMs` of the line's last accepted edge is dropped), then, when it is an edge the line asked for, it becomes
 * a `gpio.edge` device event (`turns: false`) or a message to the butler (`turns: true`) from `gpio:<name>`.
 * Outputs: the tool `gpio_set {"name", "value"}` (household); any line: `gpio_get {"name"}` (anyone).
 *
 * libgpiod's two command-line syntaxes, told apart once at start by `gpiomon --version` ("gpiomon (libgpiod)
 * v1.6.3", "gpiomon (libgpiod) v2.2.1"); as read in libgpiod's `tools/` on the v1.6.x and v2.2.x branches:
 *
 * | | v1 (1.6.x, Debian bookworm) | v2 (2.x, Debian trixie) |
 * | --- | --- | --- |
 * | watch | `gpiomon -b <chip> <offset>…` | `gpiomon -C homed -c <chip> -e both <offset>…` |
 * | event line | `event:  RISING EDGE offset: 17 timestamp: [1700000000.123456789]` | `1700000000.123456789\trising\tgpiochip0 17` |
 * | set | `gpioset <chip> <offset>=<0\|1>` | `gpioset -t0 -C homed -c <chip> <offset>=<0\|1>` |
 * | read | `gpioget <chip> <offset>…` → `1 0` | `gpioget [--as-is] --numeric -C homed -c <chip> <offset>…` → `1 0` |
 *
 * - v1 gpiomon's standard output is a pipe here, so fully buffered: `-b` makes it line-buffered. Its timestamp is
 *   printed `%8ld.%09ld`, so seconds since boot come padded (`[     512.000000001]`).
 * - v2 gpiomon flushes after every poll; its line id is `<chip> <offset>`, followed by ` "<name>"` when the kernel
 *   names the line (a Raspberry Pi's `"GPIO17"`).
 * - Both watch both edges here whatever the lines asked for: one gpiomon serves every input line of a chip (the
 *   edge option applies to all of them), and seeing every edge keeps each line's level known — gpioget cannot read a
 *   line gpiomon holds (the kernel grants a line to one request). The line's `edge` is applied by homed.
 * - v2 gpioset keeps the line requested until it is killed unless told otherwise; `-t0` (a toggle sequence whose last
 *   period is 0: "gpioset exits") makes it set the value and exit, like v1's default `--mode=exit`. In both, the
 *   kernel releases the line then; libgpiod warns that the level after that is not guaranteed, though common
 *   drivers keep driving it.
 * - v2 gpioget forces the line to input unless `--as-is`: outputs are read `--as-is`. v1 gpioget has no such option
 *   and would turn an output into an input, so a v1 output reads as the value homed last set.
 * - `active_low` is applied by homed, never passed to the tools (their output is the wire's level): as in libgpiod,
 *   it inverts values and so swaps rising and falling; `edge` and the events speak of the inverted, logical line.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Clock, sleepWith } from "../../clock.ts";
import type { Trust } from "../../identity/trust.ts";
import type { HomeTarget } from "../../io/home_target.ts";
import type { Device, DeviceContext, DeviceTool } from "../../io/device.ts";
import type { OutputEvent } from "../../io/event.ts";
import { LogLimiter } from "../../log/rate_limit.ts";
import { CommandError, runCommand } from "../../process/run_command.ts";
import { RESTART_BACKOFF, WatchedCommand, type WatchedCommandStatus } from "../../process/watched_command.ts";
import { Backoff } from "../../service/backoff.ts";

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

/**
 * The programs the device runs (tests pass stand-in scripts).
 *
 * @example
 * ```ts
 * const tools: GpioTools = { get: "/usr/bin/gpioget", set: "/usr/bin/gpioset", mon: "/usr/bin/gpiomon" };
 * ```
 */
export interface GpioTools {
  get: string;
  set: string;
  mon: string;
}

/**
 * libgpiod's tools, found on PATH: what `--allow-run` must name.
 *
 * @example
 * ```ts
 * Object.values(GPIO_TOOLS).join(","); // "gpioget,gpioset,gpiomon"
 * ```
 */
export const GPIO_TOOLS: Readonly<GpioTools> = { get: "gpioget", set: "gpioset", mon: "gpiomon" };

/**
 * The two command-line syntaxes of libgpiod's tools.
 *
 * @example
 * ```ts
 * const bookworm: GpioVersion = "v1"; // libgpiod 1.6.3
 * ```
 */
export type GpioVersion = "v1" | "v2";

/**
 * Options of {@link GpioDevice}.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { systemClock } from "../../clock.ts";
 *
 * const options: GpioDeviceOptions = { lines: {}, clock: systemClock, logger: getLogger(["homed", "gpio"]) };
 * ```
 */
export interface GpioDeviceOptions {
  /** The configured lines by name (`devices.gpio`). */
  lines: Record<string, GpioLineSettings>;
  /** The programs; {@link GPIO_TOOLS} by default. */
  tools?: GpioTools;
  /**
   * A program the tools are run through, with its arguments (`["sudo", "-n"]` where only root may open the chip;
   * the tests' `["sh"]`, so stand-in scripts need no run right of their own). None by default.
   */
  launcher?: readonly string[];
  clock: Clock;
  logger: Logger;
  /** In [0, 1): jitter for the backoffs. */
  random?: () => number;
  /** Deadline of one `gpioget` or `gpioset` (5 s); the program is killed after it. */
  commandTimeoutMs?: number;
}

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

/** The setting every message names. */
const SETTING = "devices.gpio";
/** The label v2 puts on the lines homed requests (`gpioinfo` shows it). */
const CONSUMER = "homed";
/** `--version` answers at once; a tool that hangs on it is not one to wait for at start. */
const DETECT_TIMEOUT_MS = 3_000;
const COMMAND_TIMEOUT_MS = 5_000;
/** gpioget prints a digit per line, `--version` five short lines: anything longer is not the tool. */
const MAX_OUTPUT_BYTES = 4_096;
/** An event line is under 100 characters; a longer run without a line break is not gpiomon's. */
const MAX_LINE_CHARS = 1_024;

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
 * The command that watches `offsets` of `chip`, both edges, in `version`'s syntax.
 *
 * @example
 * ```ts
 * monitorArgv("v1", "gpiomon", "gpiochip0", [17, 27]); // ["gpiomon", "-b", "gpiochip0", "17", "27"]
 * monitorArgv("v2", "gpiomon", "gpiochip0", [17]); // ["gpiomon", "-C", "homed", "-c", "gpiochip0", "-e", "both", "17"]
 * ```
 */
export function monitorArgv(version: GpioVersion, program: string, chip: string, offsets: readonly number[]): string[] {
  const lines = offsets.map(String);
  return version === "v1"
    ? [program, "-b", chip, ...lines]
    : [program, "-C", CONSUMER, "-c", chip, "-e", "both", ...lines];
}

/**
 * The command that drives line `offset` of `chip` to the wire level `level` and exits, in `version`'s syntax.
 *
 * @example
 * ```ts
 * setArgv("v1", "gpioset", "gpiochip0", 22, 1); // ["gpioset", "gpiochip0", "22=1"]
 * setArgv("v2", "gpioset", "gpiochip0", 22, 0); // ["gpioset", "-t0", "-C", "homed", "-c", "gpiochip0", "22=0"]
 * ```
 */
export function setArgv(version: GpioVersion, program: string, chip: string, offset: number, level: 0 | 1): string[] {
  return version === "v1"
    ? [program, chip, `${offset}=${level}`]
    : [program, "-t0", "-C", CONSUMER, "-c", chip, `${offset}=${level}`];
}

/**
 * The command that prints the wire levels of `offsets` of `chip` (`1 0`), in `version`'s syntax; `asIs` (v2 only)
 * leaves an output's direction alone.
 *
 * @example
 * ```ts
 * getArgv("v1", "gpioget", "gpiochip0", [17, 27], false); // ["gpioget", "gpiochip0", "17", "27"]
 * getArgv("v2", "gpioget", "gpiochip0", [22], true);
 * // ["gpioget", "--as-is", "--numeric", "-C", "homed", "-c", "gpiochip0", "22"]
 * ```
 */
export function getArgv(
  version: GpioVersion,
  program: string,
  chip: string,
  offsets: readonly number[],
  asIs: boolean,
): string[] {
  const lines = offsets.map(String);
  return version === "v1"
    ? [program, chip, ...lines]
    : [program, ...(asIs ? ["--as-is"] : []), "--numeric", "-C", CONSUMER, "-c", chip, ...lines];
}

/** What status shows of one line. */
interface LineState {
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

/** One chip's gpiomon and the part of a line its output has not finished yet. */
interface ChipMonitor {
  watched: WatchedCommand;
  decoder: TextDecoder;
  pending: string;
}

/** The GPIO lines of `devices.gpio`, through libgpiod's tools. */
export class GpioDevice implements Device {
  readonly name = "gpio";
  readonly type = "gpio";
  readonly description = "GPIO lines named in devices.gpio: input edges as events, outputs through gpio_set";
  #options: GpioDeviceOptions;
  #programs: GpioTools;
  #launcher: readonly string[];
  #commandTimeoutMs: number;
  #lines = new Map<string, LineState>();
  /** Input lines by chip, then offset. */
  #inputs = new Map<string, Map<number, LineState>>();
  #limiter: LogLimiter;
  #tools: readonly DeviceTool[];
  #context: DeviceContext | undefined;
  #running: AbortController | undefined;
  #version: GpioVersion | null = null;
  #libgpiod: string | null = null;
  #detecting: Promise<GpioVersion> | undefined;
  #detectError: string | null = null;
  #retryAt: number | null = null;
  #monitorsStarted = false;
  #monitors = new Map<string, ChipMonitor>();
  /** The detection retries and the monitors' start, when they run in the background. */
  #background: Promise<void> | undefined;
  #unparsed = 0;
  #errors = 0;
  #lastError: string | null = null;

  /**
   * @example
   * ```ts
   * import { getLogger } from "@logtape/logtape";
   * import { systemClock } from "../../clock.ts";
   *
   * const gpio = new GpioDevice({
   *   lines: {
   *     doorbell: {
   *       chip: "gpiochip0",
   *       line: 17,
   *       direction: "in",
   *       edge: "falling",
   *       turns: false,
   *       trust: "household",
   *       debounceMs: 50,
   *       activeLow: true,
   *     },
   *   },
   *   clock: systemClock,
   *   logger: getLogger(["homed", "gpio"]),
   * });
   * gpio.tools().map((tool) => tool.name); // ["gpio_get"]: no output line, so no gpio_set
   * ```
   */
  constructor(options: GpioDeviceOptions) {
    this.#options = options;
    this.#programs = options.tools ?? GPIO_TOOLS;
    this.#launcher = options.launcher ?? [];
    this.#commandTimeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
    this.#limiter = new LogLimiter({ clock: options.clock });
    const taken = new Map<string, string>();
    for (const [name, settings] of Object.entries(options.lines)) {
      const key = `${settings.chip}\u0000${settings.line}`;
      const other = taken.get(key);
      if (other !== undefined) {
        throw new TypeError(
          `${SETTING}.${name}: ${settings.chip} line ${settings.line} is already ${SETTING}.${other}; ` +
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
      this.#lines.set(name, state);
      if (settings.direction === "in") {
        const chip = this.#inputs.get(settings.chip) ?? new Map<number, LineState>();
        chip.set(settings.line, state);
        this.#inputs.set(settings.chip, chip);
      }
    }
    this.#tools = this.#makeTools();
  }

  tools(): readonly DeviceTool[] {
    return this.#tools;
  }

  /**
   * Output lines as switches local intents may turn on and off by name ("turn on the fan" for a line named `fan`;
   * `porch_light` answers to "porch light" too); inputs are read, never set.
   */
  homeTargets(): readonly HomeTarget[] {
    return [...this.#lines.values()].map((line): HomeTarget => ({
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

  /** Detects the tools' version and starts watching; a missing or broken tool is reported in status, never thrown. */
  async start(context: DeviceContext): Promise<void> {
    this.#context = context;
    this.#running = new AbortController();
    if (this.#lines.size === 0) return;
    const signal = this.#running.signal;
    const found = await this.#detect().then(() => true, () => false);
    if (found) {
      await this.#startMonitors(signal);
    } else if (this.#inputs.size > 0) {
      this.#background = this.#retryDetection(signal);
    }
  }

  /** Stops the monitors and whatever this device still waits for. */
  async stop(): Promise<void> {
    this.#running?.abort();
    await this.#background;
    this.#background = undefined;
    await Promise.all([...this.#monitors.values()].map((monitor) => monitor.watched.stop()));
    this.#monitors.clear();
    this.#monitorsStarted = false;
    this.#context = undefined;
    this.#limiter.flush();
  }

  /** GPIO has tools, not a text channel. */
  outputCapabilities(): number {
    return 0;
  }

  send(event: OutputEvent): Promise<void> {
    return Promise.reject(
      new Error(`The gpio device takes no output (${event.type} to ${event.target}); use gpio_set for outputs`),
    );
  }

  status(): Record<string, unknown> {
    const iso = (ms: number | null) => ms === null ? null : new Date(ms).toISOString();
    const waiting: WatchedCommandStatus = {
      running: false,
      starts: 0,
      last_error: this.#detectError,
      restart_in_ms: this.#retryAt === null
        ? null
        : Math.max(0, Math.round(this.#retryAt - this.#options.clock.monotonic())),
    };
    return {
      version: this.#version,
      libgpiod: this.#libgpiod,
      lines: Object.fromEntries(
        [...this.#lines.values()].map((state) => [state.name, {
          chip: state.settings.chip,
          line: state.settings.line,
          direction: state.settings.direction,
          last_event_at: iso(state.lastEventAt),
          last_value: state.value,
          edges: state.edges,
          events: state.events,
          debounced: state.debounced,
        }]),
      ),
      monitor: Object.fromEntries(
        [...this.#inputs.keys()].map((chip) => [chip, this.#monitors.get(chip)?.watched.status() ?? waiting]),
      ),
      unparsed: this.#unparsed,
      errors: this.#errors,
      last_error: this.#lastError,
    };
  }

  #makeTools(): DeviceTool[] {
    const all = [...this.#lines.values()];
    const outputs = all.filter((state) => state.settings.direction === "out").map((state) => state.name);
    const describe = (state: LineState) => `${state.name} (${state.settings.direction === "in" ? "input" : "output"})`;
    const tools: DeviceTool[] = [];
    // The deadline of the tool call leaves the command's own deadline room to kill the program and say so.
    const timeoutMs = this.#commandTimeoutMs + DETECT_TIMEOUT_MS + 2_000;
    if (outputs.length) {
      tools.push({
        name: "gpio_set",
        effect: "act",
        allow: "household",
        description: `Switch a GPIO output line of the house on (1) or off (0). Output lines: ${outputs.join(", ")}.`,
        parameters: {
          type: "object",
          properties: {
            name: { type: "string", enum: outputs, description: "The output line, by its configured name" },
            value: { enum: [0, 1, true, false], description: "1 or true: on (active); 0 or false: off" },
          },
          required: ["name", "value"],
          additionalProperties: false,
        },
        timeoutMs,
        execute: (args, context) => this.#set(args, context.signal),
      });
    }
    if (all.length) {
      tools.push({
        name: "gpio_get",
        effect: "read",
        allow: "anyone",
        description: `Read the level of a GPIO line of the house (1: active, 0: inactive). Lines: ${
          all.map(describe).join(", ")
        }.`,
        parameters: {
          type: "object",
          properties: {
            name: { type: "string", enum: all.map((state) => state.name), description: "The line's configured name" },
          },
          required: ["name"],
          additionalProperties: false,
        },
        timeoutMs,
        execute: (args, context) => this.#get(args, context.signal),
      });
    }
    return tools;
  }

  /** The configured line `args.name`, or an error naming the lines there are. */
  #line(args: Record<string, unknown>, direction?: "out"): LineState {
    const name = args.name;
    const state = typeof name === "string" ? this.#lines.get(name) : undefined;
    const wanted = [...this.#lines.values()].filter((line) => !direction || line.settings.direction === direction);
    const list = wanted.map((line) => line.name).join(", ") || "none";
    if (!state) {
      throw new Error(
        `name: no ${direction === "out" ? "output " : ""}GPIO line ${JSON.stringify(name)} in ${SETTING}; ` +
          `the ${direction === "out" ? "output lines" : "lines"} are: ${list}`,
      );
    }
    if (direction && state.settings.direction !== direction) {
      throw new Error(
        `name: ${state.name} is an input line (${SETTING}.${state.name}.direction is "in"); ` +
          `gpio_set drives output lines only: ${list}`,
      );
    }
    return state;
  }

  /** The running device's signal, joined with the call's, or an error when the device is not running. */
  #callSignal(signal: AbortSignal): AbortSignal {
    const running = this.#running;
    if (!running || running.signal.aborted) throw new Error("The gpio device is not running");
    return AbortSignal.any([signal, running.signal]);
  }

  async #set(args: Record<string, unknown>, callSignal: AbortSignal): Promise<string> {
    const state = this.#line(args, "out");
    const value = args.value === true || args.value === 1 ? 1 : args.value === false || args.value === 0 ? 0 : null;
    if (value === null) throw new Error(`value: got ${JSON.stringify(args.value)}; allowed: 0, 1, true or false`);
    const signal = this.#callSignal(callSignal);
    const version = await this.#versionForCall();
    const { chip, line, activeLow } = state.settings;
    const level = activeLow ? flip(value) : value;
    await this.#run(setArgv(version, this.#programs.set, chip, line, level), state.name, signal);
    const now = this.#options.clock.now();
    state.value = value;
    state.valueAt = now;
    state.lastEventAt = now;
    state.events++;
    this.#options.logger.info("GPIO {name} set to {value} ({chip} line {line} driven {level})", {
      name: state.name,
      value,
      chip,
      line,
      level: level ? "high" : "low",
    });
    return `Set ${state.name} to ${value} (${chip} line ${line} driven ${level ? "high" : "low"}${
      activeLow ? ", active-low" : ""
    })`;
  }

  async #get(args: Record<string, unknown>, callSignal: AbortSignal): Promise<Record<string, unknown>> {
    const state = this.#line(args);
    const signal = this.#callSignal(callSignal);
    const { chip, line, direction, activeLow } = state.settings;
    const known = (how: string) => ({ name: state.name, direction, value: state.value, how });
    const since = state.valueAt === null ? "" : new Date(state.valueAt).toISOString();
    if (direction === "in" && this.#monitors.get(chip)?.watched.status().running) {
      // gpiomon holds the line and the kernel grants a line to one request: its edges tell the level.
      if (state.value !== null) {
        return known(`as last seen at ${since} (gpiomon holds the line; homed follows its edges)`);
      }
      throw new Error(
        `The level of ${state.name} is not known yet: gpiomon holds the line, so it cannot be read, and no edge ` +
          `has come since homed started watching it`,
      );
    }
    const version = await this.#versionForCall();
    if (direction === "out" && version === "v1") {
      // v1's gpioget has no --as-is: reading would turn the output into an input.
      if (state.value !== null) return known(`as homed last set it, at ${since}`);
      throw new Error(
        `The level of ${state.name} is not known: homed has not set it since it started, and libgpiod v1's ` +
          `gpioget would turn the output into an input to read it`,
      );
    }
    const output = await this.#run(
      getArgv(version, this.#programs.get, chip, [line], direction === "out"),
      state.name,
      signal,
    );
    const [level] = parseLevels(output, 1, this.#programs.get);
    state.value = activeLow ? flip(level!) : level!;
    state.valueAt = this.#options.clock.now();
    return known("read now");
  }

  /** Runs one gpioget or gpioset under the deadline; a failure is counted and its message names the program. */
  async #run(argv: string[], name: string | null, signal: AbortSignal): Promise<string> {
    try {
      const { stdout } = await runCommand({
        argv: [...this.#launcher, ...argv],
        name: argv[0]!,
        timeoutMs: this.#commandTimeoutMs,
        maxOutputBytes: MAX_OUTPUT_BYTES,
        clock: this.#options.clock,
        setting: name === null ? SETTING : `${SETTING}.${name}`,
        signal,
      });
      return new TextDecoder().decode(stdout);
    } catch (error) {
      const message = describeError(error);
      this.#fail(message);
      throw error instanceof CommandError ? new CommandError(error.code, message) : new Error(message);
    }
  }

  /**
   * The tools' version, asked once (one detection at a time, shared by its waiters, so stopped only by the device's
   * stop); throws a message naming the tool and the fix.
   */
  #detect(): Promise<GpioVersion> {
    if (this.#version) return Promise.resolve(this.#version);
    const signal = this.#running?.signal ?? new AbortController().signal;
    this.#detecting ??= this.#askVersion(signal).finally(() => (this.#detecting = undefined));
    return this.#detecting;
  }

  async #askVersion(signal: AbortSignal): Promise<GpioVersion> {
    const program = this.#programs.mon;
    let text: string;
    try {
      const { stdout } = await runCommand({
        argv: [...this.#launcher, program, "--version"],
        name: program,
        timeoutMs: DETECT_TIMEOUT_MS,
        maxOutputBytes: MAX_OUTPUT_BYTES,
        clock: this.#options.clock,
        setting: SETTING,
        signal,
      });
      text = new TextDecoder().decode(stdout);
    } catch (error) {
      throw this.#detectFailed(describeError(error));
    }
    const version = parseGpioVersion(text);
    if (!version) {
      throw this.#detectFailed(
        `${SETTING}: "${program} --version" printed ${JSON.stringify(text.trim().split("\n")[0] ?? "")}, not ` +
          `libgpiod's "gpiomon (libgpiod) v1.x" or "v2.x"; install libgpiod's tools (Debian: apt install gpiod)`,
      );
    }
    this.#version = version;
    this.#libgpiod = /\(libgpiod\)\s+v(\S+)/.exec(text)?.[1] ?? null;
    this.#detectError = null;
    this.#options.logger.info("GPIO through libgpiod {libgpiod} ({version} syntax)", {
      libgpiod: this.#libgpiod,
      version,
    });
    return version;
  }

  #detectFailed(message: string): Error {
    this.#detectError = message;
    this.#fail(message);
    return new Error(message);
  }

  /** After a failed detection at start: tries again with backoff until the tools are there, then watches. */
  async #retryDetection(signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#options;
    const backoff = new Backoff(RESTART_BACKOFF, this.#options.random ?? Math.random);
    while (!signal.aborted && !this.#version) {
      const wait = backoff.next();
      logger.warning("{setting}: {error}; trying again in {wait} ms", {
        setting: SETTING,
        error: this.#detectError,
        wait,
      });
      this.#retryAt = clock.monotonic() + wait;
      try {
        await sleepWith(clock, wait, signal);
      } catch {
        return; // stopped while waiting
      } finally {
        this.#retryAt = null;
      }
      await this.#detect().catch(() => {});
    }
    await this.#startMonitors(signal);
  }

  /**
   * The tools' version for a tool call. One that finds the tools after a failed start also starts the monitors the
   * retries would start at their next try, in the background (stop waits for them).
   */
  async #versionForCall(): Promise<GpioVersion> {
    const version = await this.#detect();
    const running = this.#running;
    if (running && !running.signal.aborted && !this.#monitorsStarted && this.#inputs.size) {
      this.#background = Promise.all([this.#background, this.#startMonitors(running.signal)]).then(() => {});
    }
    return version;
  }

  /** Reads the input lines' levels, then starts one gpiomon per chip (once per start). */
  async #startMonitors(signal: AbortSignal): Promise<void> {
    const version = this.#version;
    if (this.#monitorsStarted || !version || signal.aborted) return;
    this.#monitorsStarted = true;
    for (const [chip, lines] of this.#inputs) {
      const offsets = [...lines.keys()];
      await this.#readLevels(version, chip, lines, signal);
      if (signal.aborted) return;
      const monitor: ChipMonitor = {
        decoder: new TextDecoder(),
        pending: "",
        watched: new WatchedCommand({
          argv: [...this.#launcher, ...monitorArgv(version, this.#programs.mon, chip, offsets)],
          name: this.#programs.mon,
          setting: `${SETTING} (${chip})`,
          clock: this.#options.clock,
          logger: this.#options.logger,
          onOutput: (chunk) => this.#onOutput(chip, monitor, chunk),
          onEnd: () => this.#onEnd(chip, monitor),
          ...(this.#options.random ? { random: this.#options.random } : {}),
        }),
      };
      this.#monitors.set(chip, monitor);
      monitor.watched.start();
    }
  }

  /** The levels of a chip's input lines before gpiomon takes them; its edges keep them known from then on. */
  async #readLevels(version: GpioVersion, chip: string, lines: Map<number, LineState>, signal: AbortSignal) {
    const offsets = [...lines.keys()];
    try {
      const output = await this.#run(getArgv(version, this.#programs.get, chip, offsets, false), null, signal);
      const levels = parseLevels(output, offsets.length, this.#programs.get);
      const now = this.#options.clock.now();
      offsets.forEach((offset, index) => {
        const state = lines.get(offset)!;
        state.value = state.settings.activeLow ? flip(levels[index]!) : levels[index]!;
        state.valueAt = now;
      });
    } catch (error) {
      // Not fatal: the levels become known with the first edges.
      this.#options.logger.warning("{setting}: the levels of {chip} could not be read ({error}); watching anyway", {
        setting: SETTING,
        chip,
        error: (error as Error).message,
      });
    }
  }

  #onOutput(chip: string, monitor: ChipMonitor, chunk: Uint8Array): void {
    monitor.pending += monitor.decoder.decode(chunk, { stream: true });
    let end = monitor.pending.indexOf("\n");
    while (end !== -1) {
      this.#onLine(chip, monitor.pending.slice(0, end));
      monitor.pending = monitor.pending.slice(end + 1);
      end = monitor.pending.indexOf("\n");
    }
    if (monitor.pending.length > MAX_LINE_CHARS) {
      this.#unparseable(chip, monitor.pending, `longer than ${MAX_LINE_CHARS} characters`);
      monitor.pending = "";
    }
  }

  #onEnd(chip: string, monitor: ChipMonitor): void {
    const rest = monitor.pending + monitor.decoder.decode();
    monitor.pending = "";
    monitor.decoder = new TextDecoder();
    if (rest.trim()) this.#onLine(chip, rest);
    if (this.#running && !this.#running.signal.aborted) {
      this.#fail(`${SETTING} (${chip}): ${monitor.watched.status().last_error ?? "gpiomon ended"}`);
    }
  }

  #onLine(chip: string, raw: string): void {
    const line = raw.replace(/\r$/, "");
    if (!line.trim()) return;
    const event = parseMonitorLine(line);
    if (!event) return this.#unparseable(chip, line, "not a gpiomon event line");
    const state = this.#inputs.get(chip)?.get(event.offset);
    if (!state) return this.#unparseable(chip, line, `about line ${event.offset}, which is not watched`);
    this.#onEdge(state, event);
  }

  #onEdge(state: LineState, event: GpioMonitorEvent): void {
    const { settings, name } = state;
    const now = this.#options.clock.now();
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
      return;
    }
    // Every accepted edge restarts the period, even one the line does not report (a release's bounce is no press).
    state.lastEdgeMs = event.timestampMs;
    if (settings.edge !== "both" && settings.edge !== edge) return;
    const context = this.#context;
    if (!context) return;
    const at = new Date(now).toISOString();
    try {
      context.emit(
        settings.turns
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
          },
      );
      state.events++;
      state.lastEventAt = now;
    } catch (error) {
      // Refused (homed is stopping, or this line already has as many inputs waiting as one sender may).
      const message = `gpio:${name}: an edge could not be queued (${(error as Error).message})`;
      this.#errors++;
      this.#lastError = message;
      if (this.#limiter.allow("queue", this.#summary("edges could not be queued"))) {
        this.#options.logger.warning("{message}", { message });
      }
    }
  }

  #unparseable(chip: string, line: string, why: string): void {
    this.#unparsed++;
    this.#errors++;
    const shown = JSON.stringify(line.slice(0, 200));
    this.#lastError = `${SETTING} (${chip}): ignored a line of gpiomon's output, ${why}: ${shown}`;
    if (this.#limiter.allow("unparsed", this.#summary("lines of gpiomon's output ignored"))) {
      this.#options.logger.warning("{setting} ({chip}): ignored a line of gpiomon's output, {why}: {line}", {
        setting: SETTING,
        chip,
        why,
        line: shown,
      });
    }
  }

  #summary(what: string): (count: number, seconds: number) => void {
    return (count, seconds) =>
      this.#options.logger.warning("{setting}: {count} more {what} in the last {seconds} s", {
        setting: SETTING,
        count,
        what,
        seconds,
      });
  }

  #fail(message: string): void {
    this.#errors++;
    this.#lastError = message;
  }
}

function flip(value: 0 | 1): 0 | 1 {
  return value === 1 ? 0 : 1;
}

/** `count` levels from gpioget's output (`1 0`), or an error quoting what it printed. */
function parseLevels(output: string, count: number, program: string): Array<0 | 1> {
  const words = output.trim().split(/\s+/).filter(Boolean);
  if (words.length !== count || !words.every((word) => word === "0" || word === "1")) {
    throw new Error(
      `${program} printed ${JSON.stringify(output.trim().slice(0, 200))}, not ${count} value(s) of 0 or 1; ` +
        `check ${SETTING}`,
    );
  }
  return words.map((word) => (word === "1" ? 1 : 0));
}

/** A command's failure as a message for the user; a missing tool says which package has it. */
function describeError(error: unknown): string {
  if (error instanceof CommandError && error.code === "missing") {
    return `${error.message} (libgpiod's tools; Debian: apt install gpiod)`;
  }
  return error instanceof Error ? error.message : String(error);
}
