import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { kindChecks } from "./kinds.ts";
import { FarEnd } from "../../tests/support/pty_far_end.ts";

const configOf = (text: string) =>
  parseConfig({
    text,
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  })
    .config;

Deno.test("doctor checks each configured device and says what to do; none configured, no lines", async () => {
  assert.deepEqual(await kindChecks(configOf("")), []);
  const dir = await Deno.makeTempDir({ prefix: "homed-doctor-" });
  await Deno.writeTextFile(`${dir}/tty`, "");
  // A pseudo-terminal stands in for a USB serial adapter (socat, as in the serial device's tests).
  const far = await FarEnd.start(`${dir}/pty`);
  const checks = await kindChecks(configOf([
    "onebot: { enabled: false }",
    "vision: { base_url: 'http://127.0.0.1:1/v1', model: m }",
    "devices:",
    "  serial:",
    `    sensors: { path: ${dir}/no-such-tty }`,
    `    console: { path: ${dir}/pty }`,
    `    file: { path: ${dir}/tty }`,
    "  gpio:",
    "    bell: { line: 17, direction: in }",
    "  microphone: {}",
    "  speaker: { command: [homed-no-such-player] }",
    "  camera: { command: [sh, -c, 'exit 0'] }",
    "speech:",
    "  tts: { base_url: 'http://127.0.0.1:1/v1', model: k, voice: v }",
    "",
  ].join("\n")));
  const byName = Object.fromEntries(checks.map((check) => [check.name, check]));
  assert.deepEqual(Object.keys(byName), [
    "serial.sensors",
    "serial.console",
    "serial.file",
    "gpio",
    "microphone",
    "speaker",
    "camera",
  ]);
  assert.equal(byName["serial.sensors"]!.ok, false);
  assert.match(
    byName["serial.sensors"]!.detail,
    /\/no-such-tty does not exist .*; devices\.serial\.sensors\.path$/,
  );
  assert.deepEqual(byName["serial.console"], { ok: true, name: "serial.console", detail: `${dir}/pty opens` });
  assert.match(
    byName["serial.file"]!.detail,
    /\/tty is not a serial port \(a terminal device\); devices\.serial\.file\.path$/,
  );
  // Whether this machine has libgpiod's tools (and the run right for them) varies; each outcome names the tool.
  assert.match(
    byName.gpio!.detail,
    byName.gpio!.ok
      ? /^gpiomon is installed \(devices\.gpio\)$/
      : /^(gpiomon is not installed .*apt install gpiod\)|homed may not run gpiomon .*homed flags` prints)$/,
  );
  assert.deepEqual(byName.microphone, {
    ok: false,
    name: "microphone",
    detail: "the microphone's speech is transcribed: it needs speech.stt; set it up, or remove devices.microphone",
  });
  assert.equal(byName.speaker!.ok, false);
  assert.match(
    byName.speaker!.detail,
    /^homed-no-such-player is not installed .*devices\.speaker\.command; install it/,
  );
  assert.deepEqual(byName.camera, { ok: true, name: "camera", detail: "sh is installed (devices.camera.command)" });
  await far.close();
  await Deno.remove(dir, { recursive: true });
});
