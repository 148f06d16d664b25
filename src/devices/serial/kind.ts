/**
 * The serial ports' kind (`devices.serial.<name>`): one `serial` device over every configured port, driven through
 * `stty` and `dd` (Deno opens nothing under /dev without --allow-all).
 *
 * @module
 */

import { systemClock } from "../../clock.ts";
import type { Config } from "../../config/schema.ts";
import { runCommand } from "../../process/run_command.ts";
import type { DeviceKind, DoctorCheck } from "../kind.ts";
import { SerialDevice } from "./serial_device.ts";

type SerialSection = Config["devices"]["serial"];

/** `devices.serial`: on when at least one port is configured. */
export const serialKind: DeviceKind<SerialSection> = {
  key: "devices.serial",
  example: '{ sensors: { path: "/dev/ttyUSB0", baud: 115200, turns: false } }',
  section: (config) => Object.keys(config.devices.serial).length ? config.devices.serial : undefined,
  rights: (ports) => ({
    run: ["stty", "dd"],
    nodes: Object.entries(ports).map(([name, port]) => ({
      node: port.path,
      setting: `devices.serial.${name}.path`,
      group: "dialout",
    })),
  }),
  doctor: (ports) => Promise.all(Object.entries(ports).map(([name, port]) => checkSerial(name, port.path))),
  create: (ports, { clock, random, logger }) => ({
    devices: [
      new SerialDevice({
        ports: Object.fromEntries(
          Object.entries(ports).map(([name, port]) => [name, {
            path: port.path,
            baud: port.baud,
            turns: port.turns,
            trust: port.trust,
            delimiter: port.delimiter,
            maxLineBytes: port.max_line_bytes,
          }]),
        ),
        clock,
        random,
        logger: logger("serial"),
      }),
    ],
  }),
};

/**
 * A serial port: `stty` can read its settings — the path exists, is a terminal, and homed's user may open it (the
 * device drives it through `stty` and `dd`: Deno opens nothing under /dev without --allow-all).
 */
async function checkSerial(name: string, path: string): Promise<DoctorCheck> {
  const check = `serial.${name}`;
  try {
    await runCommand({
      argv: ["stty", "-F", path],
      timeoutMs: 3_000,
      maxOutputBytes: 65_536,
      clock: systemClock,
      setting: `devices.serial.${name}.path`,
    });
    return { ok: true, name: check, detail: `${path} opens` };
  } catch (error) {
    const message = (error as Error).message;
    const why = /No such file/i.test(message)
      ? `${path} does not exist (is the device plugged in? ls /dev/serial/by-id/ lists stable names)`
      : /Permission denied/i.test(message)
      ? `${path} cannot be opened: permission denied (add homed's user to the dialout group)`
      : /Inappropriate ioctl|not a tty/i.test(message)
      ? `${path} is not a serial port (a terminal device)`
      : `${path} cannot be opened: ${message}`;
    return { ok: false, name: check, detail: `${why}; devices.serial.${name}.path` };
  }
}
