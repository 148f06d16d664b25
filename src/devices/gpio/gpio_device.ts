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
 * This file ties the parts together — start, stop, status and the failures they count. The parts, each beside it:
 * the lines' records and `active_low` (`gpio_line.ts`); libgpiod's two command-line syntaxes, told apart once at start
 * by `gpiomon --version`, and why each option is there (`libgpiod_commands.ts`); reading the tools' output
 * (`libgpiod_output.ts`); running them and detecting their version (`libgpiod_runner.ts`); one chip's gpiomon
 * (`chip_monitor.ts`); debouncing and the events of edges (`edge_debounce.ts`); the tools (`gpio_tools.ts`); the
 * home targets (`gpio_home_targets.ts`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Clock } from "../../clock.ts";
import type { HomeTarget } from "../../io/home_target.ts";
import type { Device, DeviceContext, DeviceTool } from "../../io/device.ts";
import type { OutputEvent } from "../../io/event.ts";
import { LogLimiter } from "../../log/rate_limit.ts";
import type { WatchedCommandStatus } from "../../process/watched_command.ts";
import { ChipMonitor } from "./chip_monitor.ts";
import { acceptEdge, edgeInput } from "./edge_debounce.ts";
import { gpioHomeTargets } from "./gpio_home_targets.ts";
import { flip, GPIO_SETTING, type GpioLineSettings, type LineState, lineStates } from "./gpio_line.ts";
import { gpioTools } from "./gpio_tools.ts";
import { getArgv, GPIO_TOOLS, type GpioTools, type GpioVersion, monitorArgv } from "./libgpiod_commands.ts";
import { type GpioMonitorEvent, parseLevels } from "./libgpiod_output.ts";
import { LibgpiodRunner } from "./libgpiod_runner.ts";

// What this file exported before its parts moved beside it: importers need no change.
export type { GpioLineSettings } from "./gpio_line.ts";
export { getArgv, GPIO_TOOLS, type GpioTools, type GpioVersion, monitorArgv, setArgv } from "./libgpiod_commands.ts";
export { type GpioMonitorEvent, parseGpioVersion, parseMonitorLine } from "./libgpiod_output.ts";

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

const COMMAND_TIMEOUT_MS = 5_000;

/** The GPIO lines of `devices.gpio`, through libgpiod's tools. */
export class GpioDevice implements Device {
  readonly name = "gpio";
  readonly type = "gpio";
  readonly description = "GPIO lines named in devices.gpio: input edges as events, outputs through gpio_set";
  #options: GpioDeviceOptions;
  #programs: GpioTools;
  #launcher: readonly string[];
  #runner: LibgpiodRunner;
  #lines: Map<string, LineState>;
  /** Input lines by chip, then offset. */
  #inputs: Map<string, Map<number, LineState>>;
  #limiter: LogLimiter;
  #tools: readonly DeviceTool[];
  #context: DeviceContext | undefined;
  #running: AbortController | undefined;
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
    const commandTimeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
    this.#runner = new LibgpiodRunner({
      monitor: this.#programs.mon,
      launcher: this.#launcher,
      commandTimeoutMs,
      clock: options.clock,
      logger: options.logger,
      random: options.random,
      signal: () => this.#running?.signal,
      onFail: (message) => this.#fail(message),
    });
    this.#limiter = new LogLimiter({ clock: options.clock });
    const { byName, inputs } = lineStates(options.lines);
    this.#lines = byName;
    this.#inputs = inputs;
    this.#tools = gpioTools({
      lines: this.#lines,
      programs: this.#programs,
      commandTimeoutMs,
      clock: options.clock,
      logger: options.logger,
      callSignal: (signal) => this.#callSignal(signal),
      version: () => this.#versionForCall(),
      run: (argv, name, signal) => this.#runner.run(argv, name, signal),
      monitoring: (chip) => this.#monitors.get(chip)?.status().running === true,
    });
  }

  tools(): readonly DeviceTool[] {
    return this.#tools;
  }

  /** The lines as home targets: outputs switch through `gpio_set`, inputs are read (see `gpio_home_targets.ts`). */
  homeTargets(): readonly HomeTarget[] {
    return gpioHomeTargets(this.#lines.values());
  }

  /** Detects the tools' version and starts watching; a missing or broken tool is reported in status, never thrown. */
  async start(context: DeviceContext): Promise<void> {
    // Started already: a second start would watch each chip twice.
    if (this.#running && !this.#running.signal.aborted) return;
    this.#context = context;
    this.#running = new AbortController();
    if (this.#lines.size === 0) return;
    const signal = this.#running.signal;
    const found = await this.#runner.detect().then(() => true, () => false);
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
    await Promise.all([...this.#monitors.values()].map((monitor) => monitor.stop()));
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
    const retryAt = this.#runner.retryAt;
    const waiting: WatchedCommandStatus = {
      running: false,
      starts: 0,
      last_error: this.#runner.detectError,
      restart_in_ms: retryAt === null ? null : Math.max(0, Math.round(retryAt - this.#options.clock.monotonic())),
    };
    return {
      version: this.#runner.version,
      libgpiod: this.#runner.libgpiod,
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
        [...this.#inputs.keys()].map((chip) => [chip, this.#monitors.get(chip)?.status() ?? waiting]),
      ),
      unparsed: this.#unparsed,
      errors: this.#errors,
      last_error: this.#lastError,
    };
  }

  /** The running device's signal, joined with the call's, or an error when the device is not running. */
  #callSignal(signal: AbortSignal): AbortSignal {
    const running = this.#running;
    if (!running || running.signal.aborted) throw new Error("The gpio device is not running");
    return AbortSignal.any([signal, running.signal]);
  }

  /** After a failed detection at start: tries again with backoff until the tools are there, then watches. */
  async #retryDetection(signal: AbortSignal): Promise<void> {
    if (!(await this.#runner.retry(signal))) return;
    await this.#startMonitors(signal);
  }

  /**
   * The tools' version for a tool call. One that finds the tools after a failed start also starts the monitors the
   * retries would start at their next try, in the background (stop waits for them).
   */
  async #versionForCall(): Promise<GpioVersion> {
    const version = await this.#runner.detect();
    const running = this.#running;
    if (running && !running.signal.aborted && !this.#monitorsStarted && this.#inputs.size) {
      this.#background = Promise.all([this.#background, this.#startMonitors(running.signal)]).then(() => {});
    }
    return version;
  }

  /** Reads the input lines' levels, then starts one gpiomon per chip (once per start). */
  async #startMonitors(signal: AbortSignal): Promise<void> {
    const version = this.#runner.version;
    if (this.#monitorsStarted || !version || signal.aborted) return;
    this.#monitorsStarted = true;
    for (const [chip, lines] of this.#inputs) {
      const offsets = [...lines.keys()];
      await this.#readLevels(version, chip, lines, signal);
      if (signal.aborted) return;
      const monitor: ChipMonitor = new ChipMonitor({
        chip,
        argv: [...this.#launcher, ...monitorArgv(version, this.#programs.mon, chip, offsets)],
        program: this.#programs.mon,
        lines,
        clock: this.#options.clock,
        logger: this.#options.logger,
        random: this.#options.random,
        onEdge: (state, event) => this.#onEdge(state, event),
        onUnparseable: (line, why) => this.#unparseable(chip, line, why),
        onEnd: () => this.#onEnd(chip, monitor),
      });
      this.#monitors.set(chip, monitor);
      monitor.start();
    }
  }

  /** The levels of a chip's input lines before gpiomon takes them; its edges keep them known from then on. */
  async #readLevels(version: GpioVersion, chip: string, lines: Map<number, LineState>, signal: AbortSignal) {
    const offsets = [...lines.keys()];
    try {
      const output = await this.#runner.run(getArgv(version, this.#programs.get, chip, offsets, false), null, signal);
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
        setting: GPIO_SETTING,
        chip,
        error: (error as Error).message,
      });
    }
  }

  #onEnd(chip: string, monitor: ChipMonitor): void {
    if (this.#running && !this.#running.signal.aborted) {
      this.#fail(`${GPIO_SETTING} (${chip}): ${monitor.status().last_error ?? "gpiomon ended"}`);
    }
  }

  #onEdge(state: LineState, event: GpioMonitorEvent): void {
    const now = this.#options.clock.now();
    const edge = acceptEdge(state, event, now);
    if (!edge) return;
    const context = this.#context;
    if (!context) return;
    const at = new Date(now).toISOString();
    try {
      context.emit(edgeInput(state, edge, at));
      state.events++;
      state.lastEventAt = now;
    } catch (error) {
      // Refused (homed is stopping, or this line already has as many inputs waiting as one sender may).
      const message = `gpio:${state.name}: an edge could not be queued (${(error as Error).message})`;
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
    this.#lastError = `${GPIO_SETTING} (${chip}): ignored a line of gpiomon's output, ${why}: ${shown}`;
    if (this.#limiter.allow("unparsed", this.#summary("lines of gpiomon's output ignored"))) {
      this.#options.logger.warning("{setting} ({chip}): ignored a line of gpiomon's output, {why}: {line}", {
        setting: GPIO_SETTING,
        chip,
        why,
        line: shown,
      });
    }
  }

  #summary(what: string): (count: number, seconds: number) => void {
    return (count, seconds) =>
      this.#options.logger.warning("{setting}: {count} more {what} in the last {seconds} s", {
        setting: GPIO_SETTING,
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
