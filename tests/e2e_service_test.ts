/**
 * End to end: `homed service install|status|uninstall` writes a hardened unit whose ExecStart runs the daemon with
 * exactly the flags `homed flags` prints, and the secret into a 0600 env file without ever printing it. The unit must
 * pass `systemd-analyze verify` (ignored outside CI where systemd is not installed; required under `CI=true`).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { deno, taskFlags, type Workspace, workspace } from "./support/homed_process.ts";
import { outsideNeed, programRuns } from "./support/outside_tool.ts";

const SECRET = "sk-test-e2e-Service-7f3a";

/** `systemd-analyze` (Debian's systemd package; `.ci/run` installs it): outside CI its test is ignored without it. */
const systemd = await outsideNeed("systemd-analyze", () => programRuns("systemd-analyze", ["--version"]));

/** Installs the unit of `ws` into `unitDir` (instead of /etc/systemd/system) and returns how to run other actions. */
async function serviceIn(ws: Workspace, unitDir: string): Promise<(action: string) => ReturnType<typeof deno>> {
  const serviceFlags = await taskFlags("service", ws.env);
  return (action: string) =>
    deno([
      "run",
      ...serviceFlags.map((flag) => flag.replaceAll("/etc/systemd/system", unitDir)),
      "src/main.ts",
      "service",
      action,
      "--unit-dir",
      unitDir,
    ], { env: ws.env });
}

/** Splits an ExecStart= value written by systemdQuote (plain words, or double-quoted with \\ and \" escapes). */
function execWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    words.push(match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : match[2]!);
  }
  return words.map((word) => word.replaceAll("$$", "$").replaceAll("%%", "%"));
}

Deno.test("homed service install writes a unit running the daemon with `homed flags`, and a 0600 secret file", async () => {
  const ws = await workspace({ llm: { api_key: "${DEEPSEEK_API_KEY}" } }, { DEEPSEEK_API_KEY: SECRET });
  const unitDir = join(ws.dir, "units");
  await Deno.mkdir(unitDir);
  try {
    // The test writes its unit into a temp folder instead of /etc/systemd/system.
    const service = await serviceIn(ws, unitDir);
    const install = await service("install");
    assert.equal(install.code, 0, install.stderr);
    assert.match(install.stdout, /homed\.env \(mode 0600\) with DEEPSEEK_API_KEY/);
    assert.ok(!`${install.stdout}${install.stderr}`.includes(SECRET), "the secret is never printed");

    const unitPath = join(unitDir, "homed.service");
    const unit = await Deno.readTextFile(unitPath);
    assert.equal((await Deno.stat(unitPath)).mode! & 0o777, 0o644);
    const envFile = join(ws.dir, "homed.env");
    assert.equal((await Deno.stat(envFile)).mode! & 0o777, 0o600);
    assert.equal(await Deno.readTextFile(envFile), `DEEPSEEK_API_KEY=${SECRET}\n`);
    assert.ok(!unit.includes(SECRET), "the secret stays out of the world-readable unit");

    for (
      const line of [
        "Type=notify",
        "NotifyAccess=main",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        `EnvironmentFile=-${envFile}`,
        "Restart=on-failure",
        "StandardError=journal",
        `Environment=HOMED_CONFIG=${ws.configPath}`,
      ]
    ) assert.ok(unit.split("\n").includes(line), `${line} in\n${unit}`);
    const readWrite = unit.match(/^ReadWritePaths=(.*)$/m)?.[1] ?? "";
    assert.deepEqual(
      readWrite.split(" ").sort(),
      ["-" + join(ws.dir, "data"), "-" + join(ws.dir, "knowledge"), "-" + join(ws.dir, "plugins")].sort(),
    );

    // ExecStart runs Deno directly (no npx, no deno task) with exactly the flags `homed flags` prints.
    const execStart = execWords(unit.match(/^ExecStart=(.*)$/m)?.[1] ?? "");
    // As systemd will run it: with NOTIFY_SOCKET set, so the flags include the right to report readiness.
    const printed = await deno(["run", "--no-prompt", "--allow-read", "--allow-env", "src/main.ts", "flags"], {
      env: { ...ws.env, NOTIFY_SOCKET: "/run/systemd/notify" },
    });
    assert.equal(printed.code, 0, printed.stderr);
    assert.deepEqual(execStart, [
      Deno.execPath(),
      "run",
      ...printed.stdout.trim().split(" "),
      join(Deno.cwd(), "src", "main.ts"),
      "run",
    ]);
    assert.match(unit, /^TimeoutStopSec=15$/m, "the daemon's 10 s shutdown grace and 5 s more");
    assert.ok(execStart.includes("--unstable-net"), "unix datagrams for sd_notify");
    assert.ok(
      execStart.some((flag) => flag.startsWith("--allow-net=") && flag.includes("unix:/run/systemd/notify")),
      "the right to reach exactly systemd's notify socket",
    );

    const status = await service("status");
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /installed, up to date/);
    assert.match(status.stdout, /homed\.env: mode 600\n/);

    const uninstall = await service("uninstall");
    assert.equal(uninstall.code, 0, uninstall.stderr);
    await assert.rejects(Deno.stat(unitPath), Deno.errors.NotFound);
    assert.equal((await Deno.stat(envFile)).isFile, true, "the secret file is kept for a later install");
  } finally {
    await Deno.remove(ws.dir, { recursive: true });
  }
});

Deno.test({
  name: "the installed unit passes systemd-analyze verify without a remark",
  ignore: systemd.ignore,
  fn: async () => {
    systemd.assertAvailable();
    const ws = await workspace({ llm: { api_key: "${DEEPSEEK_API_KEY}" } }, { DEEPSEEK_API_KEY: SECRET });
    const unitDir = join(ws.dir, "units");
    await Deno.mkdir(unitDir);
    try {
      const install = await (await serviceIn(ws, unitDir))("install");
      assert.equal(install.code, 0, install.stderr);
      const unitPath = join(unitDir, "homed.service");
      const verify = await new Deno.Command("systemd-analyze", {
        args: ["verify", unitPath],
        stdout: "piped",
        stderr: "piped",
      })
        .output();
      const said = new TextDecoder().decode(verify.stderr) + new TextDecoder().decode(verify.stdout);
      assert.equal(verify.code, 0, said);
      assert.ok(!said.includes(unitPath), `systemd-analyze has no remark on the unit:\n${said}`);
    } finally {
      await Deno.remove(ws.dir, { recursive: true });
    }
  },
});

Deno.test("homed service refuses an unknown action by name, and install without write access says which folder", async () => {
  const ws = await workspace({});
  try {
    const serviceFlags = await taskFlags("service", ws.env);
    const bad = await deno(["run", ...serviceFlags, "src/main.ts", "service", "instal"], { env: ws.env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /service: unknown action "instal"; allowed: install, uninstall, status, unit/);
    const denied = await deno([
      "run",
      "--no-prompt",
      "--allow-read",
      "--allow-env",
      "src/main.ts",
      "service",
      "install",
    ], {
      env: ws.env,
    });
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /write access to \/etc\/systemd\/system/);
    assert.match(denied.stderr, /homed flags --mode service/);
  } finally {
    await Deno.remove(ws.dir, { recursive: true });
  }
});
