/**
 * The GPIO device's tools: `gpio_set {"name", "value"}` (household; only when an output line is configured) and
 * `gpio_get {"name"}` (anyone) — their specs, the checks of their arguments against the configured lines, and what
 * each does. Apart from `gpio_device.ts` because this is the LLM-facing surface: every line is named in the config and
 * no tool takes a chip or an offset, so the LLM can reach no pin the owner did not name.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { DeviceTool } from "../../io/device.ts";
import { flip, GPIO_SETTING, type LineState } from "./gpio_line.ts";
import { getArgv, type GpioTools, type GpioVersion, setArgv } from "./libgpiod_commands.ts";
import { parseLevels } from "./libgpiod_output.ts";
import { DETECT_TIMEOUT_MS } from "./libgpiod_runner.ts";

/** What the tools need of the GPIO device. */
export interface GpioToolDeps {
  /** The configured lines by name. */
  lines: ReadonlyMap<string, LineState>;
  programs: GpioTools;
  /** Deadline of one `gpioget` or `gpioset`. */
  commandTimeoutMs: number;
  clock: Clock;
  logger: Logger;
  /** The running device's signal joined with the call's; throws when the device is not running. */
  callSignal(signal: AbortSignal): AbortSignal;
  /** The tools' version for a call, detected if need be. */
  version(): Promise<GpioVersion>;
  /** Runs one gpioget or gpioset under its deadline (`LibgpiodRunner.run`). */
  run(argv: string[], name: string, signal: AbortSignal): Promise<string>;
  /** Whether gpiomon runs on `chip` now, and so holds its input lines. */
  monitoring(chip: string): boolean;
}

/**
 * The tools for the configured lines: `gpio_set` when there is an output line, `gpio_get` when there is any line.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { systemClock } from "../../clock.ts";
 * import { lineStates } from "./gpio_line.ts";
 * import { GPIO_TOOLS } from "./libgpiod_commands.ts";
 *
 * const { byName } = lineStates({
 *   fan: {
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
 * const tools = gpioTools({
 *   lines: byName,
 *   programs: GPIO_TOOLS,
 *   commandTimeoutMs: 5_000,
 *   clock: systemClock,
 *   logger: getLogger(["homed", "gpio"]),
 *   callSignal: (signal) => signal,
 *   version: () => Promise.resolve("v2"),
 *   run: () => Promise.resolve(""),
 *   monitoring: () => false,
 * });
 * tools.map((tool) => tool.name); // ["gpio_set", "gpio_get"]
 * ```
 */
export function gpioTools(deps: GpioToolDeps): DeviceTool[] {
  const all = [...deps.lines.values()];
  const outputs = all.filter((state) => state.settings.direction === "out").map((state) => state.name);
  const describe = (state: LineState) => `${state.name} (${state.settings.direction === "in" ? "input" : "output"})`;
  const tools: DeviceTool[] = [];
  // The deadline of the tool call leaves the command's own deadline room to kill the program and say so.
  const timeoutMs = deps.commandTimeoutMs + DETECT_TIMEOUT_MS + 2_000;
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
      execute: (args, context) => setLine(deps, args, context.signal),
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
      execute: (args, context) => getLine(deps, args, context.signal),
    });
  }
  return tools;
}

/** The configured line `args.name`, or an error naming the lines there are. */
function findLine(lines: ReadonlyMap<string, LineState>, args: Record<string, unknown>, direction?: "out"): LineState {
  const name = args.name;
  const state = typeof name === "string" ? lines.get(name) : undefined;
  const wanted = [...lines.values()].filter((line) => !direction || line.settings.direction === direction);
  const list = wanted.map((line) => line.name).join(", ") || "none";
  if (!state) {
    throw new Error(
      `name: no ${direction === "out" ? "output " : ""}GPIO line ${JSON.stringify(name)} in ${GPIO_SETTING}; ` +
        `the ${direction === "out" ? "output lines" : "lines"} are: ${list}`,
    );
  }
  if (direction && state.settings.direction !== direction) {
    throw new Error(
      `name: ${state.name} is an input line (${GPIO_SETTING}.${state.name}.direction is "in"); ` +
        `gpio_set drives output lines only: ${list}`,
    );
  }
  return state;
}

/** `gpio_set`: drives an output line to a logical value (inverted on the wire for an active-low line). */
async function setLine(deps: GpioToolDeps, args: Record<string, unknown>, callSignal: AbortSignal): Promise<string> {
  const state = findLine(deps.lines, args, "out");
  const value = args.value === true || args.value === 1 ? 1 : args.value === false || args.value === 0 ? 0 : null;
  if (value === null) throw new Error(`value: got ${JSON.stringify(args.value)}; allowed: 0, 1, true or false`);
  const signal = deps.callSignal(callSignal);
  const version = await deps.version();
  const { chip, line, activeLow } = state.settings;
  const level = activeLow ? flip(value) : value;
  await deps.run(setArgv(version, deps.programs.set, chip, line, level), state.name, signal);
  const now = deps.clock.now();
  state.value = value;
  state.valueAt = now;
  state.lastEventAt = now;
  state.events++;
  deps.logger.info("GPIO {name} set to {value} ({chip} line {line} driven {level})", {
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

/**
 * `gpio_get`: a line's logical level — read now, or, where reading is impossible (gpiomon holds an input; v1 would
 * turn an output into an input), as last seen, saying so.
 */
async function getLine(
  deps: GpioToolDeps,
  args: Record<string, unknown>,
  callSignal: AbortSignal,
): Promise<Record<string, unknown>> {
  const state = findLine(deps.lines, args);
  const signal = deps.callSignal(callSignal);
  const { chip, line, direction, activeLow } = state.settings;
  const known = (how: string) => ({ name: state.name, direction, value: state.value, how });
  const since = state.valueAt === null ? "" : new Date(state.valueAt).toISOString();
  if (direction === "in" && deps.monitoring(chip)) {
    // gpiomon holds the line and the kernel grants a line to one request: its edges tell the level.
    if (state.value !== null) {
      return known(`as last seen at ${since} (gpiomon holds the line; homed follows its edges)`);
    }
    throw new Error(
      `The level of ${state.name} is not known yet: gpiomon holds the line, so it cannot be read, and no edge ` +
        `has come since homed started watching it`,
    );
  }
  const version = await deps.version();
  if (direction === "out" && version === "v1") {
    // v1's gpioget has no --as-is: reading would turn the output into an input.
    if (state.value !== null) return known(`as homed last set it, at ${since}`);
    throw new Error(
      `The level of ${state.name} is not known: homed has not set it since it started, and libgpiod v1's ` +
        `gpioget would turn the output into an input to read it`,
    );
  }
  const output = await deps.run(
    getArgv(version, deps.programs.get, chip, [line], direction === "out"),
    state.name,
    signal,
  );
  const [level] = parseLevels(output, 1, deps.programs.get);
  state.value = activeLow ? flip(level!) : level!;
  state.valueAt = deps.clock.now();
  return known("read now");
}
