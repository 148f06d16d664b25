import assert from "node:assert/strict";
import { envFileLine } from "../config/env_file.ts";
import { parseConfig } from "../config/load.ts";
import { deviceGrants, serviceUnit, systemdQuote } from "./service.ts";

Deno.test("systemdQuote keeps plain words, quotes spaces and quotes, and doubles % specifiers", () => {
  assert.equal(systemdQuote("/usr/bin/deno"), "/usr/bin/deno");
  assert.equal(systemdQuote("/srv/my homed/main.ts"), '"/srv/my homed/main.ts"');
  assert.equal(systemdQuote('say "hi" \\ there'), '"say \\"hi\\" \\\\ there"');
  assert.equal(systemdQuote("50%"), "50%%");
  assert.equal(systemdQuote(""), '""');
});

Deno.test("env file lines: plain values stay plain, others are quoted, a line break is refused by name", () => {
  assert.equal(envFileLine("KEY", "sk-abc.123/+="), "KEY=sk-abc.123/+=");
  assert.equal(envFileLine("KEY", 'a b"c\\'), "KEY='a b\"c\\'");
  assert.throws(() => envFileLine("TOKEN", "it's a b"), /TOKEN: the value has both a single quote/);
  assert.throws(() => envFileLine("DEEPSEEK_API_KEY", "a\nb"), /DEEPSEEK_API_KEY: the value has a line break/);
});

Deno.test("the unit doubles $ in ExecStart only, and marks every writable path optional", () => {
  const unit = serviceUnit({
    execStart: ["/opt/deno", "run", "--allow-env=A$B"],
    environment: { HOMED_CONFIG: "/etc/ho$med/homed.yaml" },
    envFile: "/etc/homed/homed.env",
    readWritePaths: ["/var/lib/homed", "/srv/with space"],
    stopTimeoutSec: 15,
  });
  assert.match(unit, /^ExecStart=\/opt\/deno run --allow-env=A\$\$B$/m);
  assert.match(unit, /^Environment=HOMED_CONFIG=\/etc\/ho\$med\/homed\.yaml$/m);
  assert.match(unit, /^ReadWritePaths=-\/var\/lib\/homed "-\/srv\/with space"$/m);
  assert.doesNotMatch(unit, /^Documentation=/m, "no docs line unless a URL is given");
});

const devicesOf = (text: string) =>
  parseConfig({ text, location: { path: undefined, origin: "embedded defaults" }, readEnv: () => undefined, cwd: "/" })
    .config;

Deno.test("device grants: each configured node once, its group only where the machine has it; none, none", () => {
  assert.deepEqual(deviceGrants(devicesOf(""), () => true), { allow: [], groups: [] });
  const devices = devicesOf([
    "devices:",
    "  serial: { a: { path: /dev/ttyACM0 }, b: { path: /dev/serial/by-id/usb-FTDI-if00 } }",
    "  gpio: { bell: { line: 17, direction: in }, door: { chip: gpiochip2, line: 3, direction: out } }",
    "  speaker: {}",
    "  camera: {}",
  ].join("\n"));
  assert.deepEqual(deviceGrants(devices, (group) => group !== "gpio"), {
    allow: [
      "/dev/ttyACM0 rw",
      "/dev/serial/by-id/usb-FTDI-if00 rw",
      "/dev/gpiochip0 rw",
      "/dev/gpiochip2 rw",
      "char-alsa rw",
      "/dev/video0 rw",
    ],
    groups: ["dialout", "audio", "video"],
  });
  assert.throws(
    () => deviceGrants(devicesOf('devices: { serial: { a: { path: "/dev/my port" } } }'), () => true),
    {
      name: "UsageError",
      message: 'devices.serial.a.path: "/dev/my port" has white space, which a systemd unit cannot grant',
    },
  );
});

Deno.test("the unit: PrivateDevices=yes without devices; with them closed but for theirs; a runner's home", () => {
  const base = {
    execStart: ["/opt/deno", "run"],
    environment: {},
    envFile: "/etc/homed/homed.env",
    readWritePaths: ["/var/lib/homed"],
    stopTimeoutSec: 15,
  };
  const bare = serviceUnit(base);
  assert.match(bare, /^PrivateDevices=yes$/m);
  assert.doesNotMatch(bare, /^(?:DevicePolicy|DeviceAllow|SupplementaryGroups|CacheDirectory)=/m);
  const devices = serviceUnit({
    ...base,
    devices: { allow: ["/dev/ttyUSB0 rw", "char-alsa rw"], groups: ["dialout", "audio"] },
    runnerHome: { cacheDirectory: "homed", home: "/var/cache/homed", denoDir: "/root/.cache/deno" },
  });
  assert.doesNotMatch(devices, /^PrivateDevices=yes$/m);
  assert.match(
    devices,
    /^PrivateDevices=no\nDevicePolicy=closed\nDeviceAllow=\/dev\/ttyUSB0 rw\nDeviceAllow=char-alsa rw\nSupplementaryGroups=dialout audio\n/m,
  );
  assert.match(
    devices,
    /^CacheDirectory=homed\nEnvironment=HOME=\/var\/cache\/homed\nEnvironment=DENO_DIR=\/root\/\.cache\/deno$/m,
  );
  assert.match(devices, /^ProtectHome=read-only$/m);
});
