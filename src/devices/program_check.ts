/**
 * `homed doctor`'s check of a program a device runs (libgpiod's tools, the microphone's, speaker's and camera's
 * commands): installed, and homed may run it — the kinds' doctor checks share it.
 *
 * @module
 */

import { systemClock } from "../clock.ts";
import { type CommandError, runCommand } from "../process/run_command.ts";
import type { DoctorCheck } from "./kind.ts";

/**
 * A program is installed and homed may run it (`--version` under a short deadline; its exit code does not matter).
 *
 * @example
 * ```ts
 * const check = await checkProgram("gpio", "gpiomon", "devices.gpio", "install libgpiod's tools (apt install gpiod)");
 * check.ok; // false when gpiomon is not installed, and check.detail says what to do
 * ```
 */
export async function checkProgram(name: string, program: string, setting: string, hint: string): Promise<DoctorCheck> {
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

/**
 * A device that needs one of homed's model servers: that server is set up, then its program is installed.
 *
 * @example
 * ```ts
 * import type { Config } from "../config/schema.ts";
 *
 * declare const config: Config;
 * await checkCommandDevice({
 *   name: "speaker",
 *   program: "aplay",
 *   server: config.speech.tts,
 *   setting: "speech.tts",
 *   why: "the speaker says replies aloud: it",
 *   hint: "install it (aplay: apt install alsa-utils)",
 * });
 * ```
 */
export async function checkCommandDevice(device: {
  name: string;
  program: string;
  server: unknown;
  setting: string;
  why: string;
  hint: string;
}): Promise<DoctorCheck> {
  const { name, program, server, setting, why, hint } = device;
  return server === null
    ? { ok: false, name, detail: `${why} needs ${setting}; set it up, or remove devices.${name}` }
    : await checkProgram(name, program, `devices.${name}.command`, hint);
}
