/**
 * The GPIO lines' kind (`devices.gpio.<name>`): one `gpio` device over every configured line, through libgpiod's
 * tools (`gpioget`, `gpioset`, `gpiomon`).
 *
 * @module
 */

import type { Config } from "../../config/schema.ts";
import type { DeviceKind } from "../kind.ts";
import { checkProgram } from "../program_check.ts";
import { GpioDevice } from "./gpio_device.ts";

type GpioSection = Config["devices"]["gpio"];

/** `devices.gpio`: on when at least one line is configured. */
export const gpioKind: DeviceKind<GpioSection> = {
  key: "devices.gpio",
  example:
    "{ doorbell: { chip: gpiochip0, line: 17, direction: in, edge: falling }, porch: { line: 27, direction: out } }",
  section: (config) => Object.keys(config.devices.gpio).length ? config.devices.gpio : undefined,
  rights: (lines) => ({
    run: ["gpioget", "gpioset", "gpiomon"],
    nodes: Object.values(lines).map((line) => ({ node: `/dev/${line.chip}`, group: "gpio" })),
  }),
  doctor: async () => [
    await checkProgram("gpio", "gpiomon", "devices.gpio", "install libgpiod's tools (Debian: apt install gpiod)"),
  ],
  create: (lines, { clock, random, logger }) => ({
    devices: [
      new GpioDevice({
        lines: Object.fromEntries(
          Object.entries(lines).map(([name, line]) => [name, {
            chip: line.chip,
            line: line.line,
            direction: line.direction,
            edge: line.edge,
            turns: line.turns,
            trust: line.trust,
            debounceMs: line.debounce,
            activeLow: line.active_low,
          }]),
        ),
        clock,
        random,
        logger: logger("gpio"),
      }),
    ],
  }),
};
