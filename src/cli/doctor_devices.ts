/**
 * `homed doctor`'s checks of the configured local devices, one line each: a serial port's path exists and opens,
 * the programs GPIO, the microphone, the speaker and the camera run are installed and homed may run them, and the
 * servers a device needs (speech-to-text for the microphone, text-to-speech for the speaker, a vision model for the
 * camera) are set up — each with what to do when it is not.
 *
 * @module
 */

import type { Config } from "../config/schema.ts";
import { type CommandError, runCommand } from "../process/run_command.ts";
import { systemClock } from "../clock.ts";
import type { Check } from "./doctor.ts";

/**
 * The checks of `config.devices` (none when no device is configured).
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/load.ts";
 *
 * const { config } = await loadConfig({ flag: "/etc/homed/homed.yaml", readEnv: (name) => Deno.env.get(name), cwd: "/" });
 * for (const check of await checkDevices(config)) console.log(check.ok ? "ok" : "FAIL", check.name, check.detail);
 * ```
 */
export async function checkDevices(config: Config): Promise<Check[]> {
  const { devices, speech, vision } = config;
  const checks: Check[] = [];
  for (const [name, port] of Object.entries(devices.serial)) checks.push(await checkSerial(name, port.path));
  if (Object.keys(devices.gpio).length) {
    checks.push(
      await checkProgram("gpio", "gpiomon", "devices.gpio", "install libgpiod's tools (Debian: apt install gpiod)"),
    );
  }
  // Each command device: the server it needs, then its program.
  const commands = [
    {
      name: "microphone",
      device: devices.microphone,
      server: speech.stt,
      setting: "speech.stt",
      why: "the microphone's speech is transcribed: it",
      hint: "install it (arecord: apt install alsa-utils)",
    },
    {
      name: "speaker",
      device: devices.speaker,
      server: speech.tts,
      setting: "speech.tts",
      why: "the speaker says replies aloud: it",
      hint: "install it (aplay: apt install alsa-utils)",
    },
    {
      name: "camera",
      device: devices.camera,
      server: vision,
      setting: "vision",
      why: "camera_snapshot describes its picture: it",
      hint: "install it (ffmpeg: apt install ffmpeg)",
    },
  ];
  for (const { name, device, server, setting, why, hint } of commands) {
    if (!device) continue;
    checks.push(
      server === null
        ? { ok: false, name, detail: `${why} needs ${setting}; set it up, or remove devices.${name}` }
        : await checkProgram(name, device.command[0]!, `devices.${name}.command`, hint),
    );
  }
  return checks;
}

/**
 * A serial port: `stty` can read its settings — the path exists, is a terminal, and homed's user may open it (the
 * device drives it through `stty` and `dd`: Deno opens nothing under /dev without --allow-all).
 */
async function checkSerial(name: string, path: string): Promise<Check> {
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

/** A program is installed and homed may run it (`--version` under a short deadline; its exit code does not matter). */
async function checkProgram(name: string, program: string, setting: string, hint: string): Promise<Check> {
  try {
    await runCommand({
      argv: [program, "--version"],
      timeoutMs: 3_000,
      maxOutputBytes: 65_536,
      clock: systemClock,
      setting,
    });
  } catch (error) {
    const code = (error as CommandError).code;
    if (code === "missing") return { ok: false, name, detail: `${(error as Error).message}; ${hint}` };
    if (code === "denied" || code === "timeout") return { ok: false, name, detail: (error as Error).message };
    // It ran (an unknown --version is a failure exit): installed and allowed.
  }
  return { ok: true, name, detail: `${program} is installed (${setting})` };
}
