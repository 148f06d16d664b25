import assert from "node:assert/strict";
import { envFileLine } from "../config/env_file.ts";
import { parseConfig } from "../config/load.ts";
import { luaWasmPath } from "../lua/wasm_path.ts";
import { silkWasmPath } from "../audio/silk_wasm_path.ts";
import { deviceGrants, serviceUnit, systemdQuote, unitFor } from "./service.ts";

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

Deno.test("the unit runs a fresh bundle with the daemon's flags (its own wasm, no deno.json), else the sources", async () => {
  const loaded = parseConfig({
    text:
      "daemon: { data_dir: /var/lib/homed }\nspeech: { stt: { base_url: http://127.0.0.1:9/v1, model: whisper-1 } }",
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  const execStart = (unit: string) => unit.match(/^ExecStart=(.*)$/m)![1]!.split(" ");
  const sources = execStart(
    await unitFor(loaded, "standard", {
      kind: "sources",
      root: "/srv/homed",
      script: "/srv/homed/src/main.ts",
      bundle: "stale",
      reason: "running the sources: …",
    }),
  );
  const bundle = execStart(
    await unitFor(loaded, "standard", {
      kind: "bundle",
      root: "/srv/homed",
      script: "/srv/homed/dist/homed.js",
      reason: "running the bundle …",
    }),
  );
  assert.deepEqual(sources.slice(-3), ["/srv/homed/src/main.ts", "--standard-layout", "run"]);
  assert.deepEqual(bundle.slice(-3), ["/srv/homed/dist/homed.js", "--standard-layout", "run"]);
  assert.deepEqual([sources[1], bundle[1], bundle[2]], ["run", "run", "--no-config"]);
  // The same flags, but for the bundle's own copies of the .wasm files, beside it.
  const wasm = (path: string) =>
    path.replace(luaWasmPath(), "/srv/homed/dist/glue.wasm").replace(
      silkWasmPath(),
      "/srv/homed/dist/silk.wasm",
    );
  assert.deepEqual(bundle.slice(3, -3), sources.slice(2, -3).map(wasm));
  assert.notDeepEqual(bundle.slice(3, -3), sources.slice(2, -3), "the wasm paths differ");
});
