/**
 * End to end: `homed supervise` (flags from src/flags.ts: read the config and the checkout's sources, write the data
 * dir, run only Deno) runs the daemon — from this checkout's bundle, built at its start when missing or stale —
 * passes SIGHUP and SIGTERM on, removes its pid file, and notices a daemon that dies.
 *
 * The bundle is built into this checkout's `dist/` (as `deno task bundle` does, ≈ 2–3 s) by the first supervisor
 * of a run whose sources changed since the last build; the others find it fresh.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { healthy, REPO, spawnDeno, taskFlags, type Workspace, workspace } from "./support/homed_process.ts";
import { waitFor } from "./support/wait.ts";
import { sourceFingerprint } from "../src/rights/daemon_entry.ts";
import { VERSION } from "../src/version.ts";

/** Makes sure a supervisor started by a test is gone and its log read (it may have exited on its own). */
async function ended(child: Deno.ChildProcess, drained: Promise<void>): Promise<void> {
  try {
    child.kill("SIGKILL");
  } catch { /* already gone */ }
  await child.status;
  await drained;
}

/** Starts `homed supervise` in `ws`; its stderr (the supervisor's and the daemon's log) is collected. */
async function supervise(ws: Workspace) {
  const flags = await taskFlags("supervise", ws.env);
  const child = spawnDeno(["run", ...flags, "src/main.ts", "supervise"], { env: ws.env });
  const log = { text: "" };
  const drained = (async () => {
    for await (const chunk of child.stderr) log.text += new TextDecoder().decode(chunk);
  })();
  return { flags, child, log, drained };
}

Deno.test("homed supervise runs the daemon, passes SIGHUP and SIGTERM on, and removes its pid file", async () => {
  const ws = await workspace({ onebot: { enabled: false } });
  const { flags, child, log, drained } = await supervise(ws);
  assert.ok(flags.includes(`--allow-run=${Deno.execPath()}`), flags.join(" "));
  assert.ok(!flags.some((flag) => flag.startsWith("--allow-net")), "the supervisor itself needs no network");
  const url = `http://127.0.0.1:${ws.port}`;
  const pidFile = join(ws.dir, "data", "homed.pid");
  try {
    await waitFor(() => healthy(url), "the daemon under supervision", { limitMs: 20_000 });
    assert.equal((await Deno.readTextFile(pidFile)).trim(), String(child.pid));
    child.kill("SIGHUP");
    await waitFor(() => /SIGHUP: plugins reloaded/.test(log.text), "the daemon's reload on SIGHUP");
    assert.ok(await healthy(url), "HUP does not stop it");
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0, log.text);
    assert.match(log.text, /homed stopped \(exit 0\); done/);
    await assert.rejects(Deno.stat(pidFile), Deno.errors.NotFound);
    assert.equal(await healthy(url), false, "the daemon is gone with it");
  } finally {
    await ended(child, drained);
    await Deno.remove(ws.dir, { recursive: true });
  }
});

Deno.test("homed supervise runs the checkout's bundle, built when missing or stale, with the daemon's flags; it answers", async () => {
  const ws = await workspace({ onebot: { enabled: false } });
  const { child, log, drained } = await supervise(ws);
  const url = `http://127.0.0.1:${ws.port}`;
  try {
    await waitFor(() => healthy(url), "the bundled daemon under supervision", { limitMs: 60_000 });
    const script = join(REPO, "dist", "homed.js");
    assert.match(log.text, new RegExp(`Supervisor: running the bundle ${script} \\(built from these sources\\)`));
    const status = await fetch(`${url}/api/status`);
    assert.equal(status.status, 200);
    const body = await status.json();
    assert.equal(body.version, VERSION);
    // The daemon's environment (DAEMON_ENV): two malloc arenas and a fixed mmap threshold, read by glibc at its start.
    const environ = await new Deno.Command("cat", { args: [`/proc/${body.process.pid}/environ`] }).output();
    const variables = new TextDecoder().decode(environ.stdout).split("\0");
    for (const assignment of ["MALLOC_ARENA_MAX=2", "MALLOC_MMAP_THRESHOLD_=131072"]) {
      assert.ok(variables.includes(assignment), `${assignment} in ${variables.join(" ")}`);
    }
    // What it was built from: these sources, now.
    const manifest = JSON.parse(await Deno.readTextFile(join(REPO, "dist", "homed.js.json")));
    assert.equal(manifest.sources, sourceFingerprint(REPO));
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0, log.text);
  } finally {
    await ended(child, drained);
    await Deno.remove(ws.dir, { recursive: true });
  }
});

Deno.test("homed supervise notices a daemon that dies and schedules its restart; a stop meanwhile starts nothing", async () => {
  // The listen address is taken, so every start of the daemon fails.
  const blocker = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (blocker.addr as Deno.NetAddr).port;
  const ws = await workspace({ daemon: { listen_addr: `127.0.0.1:${port}` }, onebot: { enabled: false } });
  const { child, log, drained } = await supervise(ws);
  try {
    await waitFor(() => /restarting in 1000 ms/.test(log.text), "the first crash", { limitMs: 20_000 });
    assert.match(log.text, /homed crashed \(exit code \d+\); restarting in 1000 ms/);
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0, log.text);
    assert.equal([...log.text.matchAll(/homed started \(pid/g)].length, 1, "no start after the stop");
  } finally {
    await ended(child, drained);
    blocker.close();
    await Deno.remove(ws.dir, { recursive: true });
  }
});

Deno.test("homed supervise under a Type=notify service manager: the daemon it runs reports READY=1, then STOPPING=1", async () => {
  const ws = await workspace({ onebot: { enabled: false } });
  const socket = join(ws.dir, "notify.sock");
  const listener = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--unstable-net",
      `--allow-net=unix:${socket}`,
      `--allow-read=.,${socket}`,
      `--allow-write=${socket}`,
      join(REPO, "tests", "support", "notify_listener.ts"),
      socket,
    ],
    cwd: REPO,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const heard: string[] = [];
  const reading = (async () => {
    let buffer = "";
    for await (const chunk of listener.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      for (let end = buffer.indexOf("\n"); end !== -1; end = buffer.indexOf("\n")) {
        heard.push(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
      }
    }
  })();
  await waitFor(() => heard.length > 0, "the notify socket");
  ws.env.NOTIFY_SOCKET = socket;
  const { flags, child, log, drained } = await supervise(ws);
  try {
    const daemonFlags = await taskFlags("run", ws.env);
    assert.ok(daemonFlags.includes("--unstable-net"), daemonFlags.join(" "));
    assert.ok(
      daemonFlags.some((flag) => flag.startsWith("--allow-net=") && flag.includes(`unix:${socket}`)),
      "net rights for exactly the notify socket",
    );
    assert.ok(!flags.includes("--unstable-net"), "the supervisor itself sends nothing");
    await waitFor(() => heard.some((line) => line.includes("READY=1")), "READY=1", { limitMs: 20_000 });
    assert.match(heard.find((line) => line.includes("READY=1"))!, /STATUS=Listening on http:\/\/127\.0\.0\.1:\d+/);
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0, log.text);
    await waitFor(() => heard.some((line) => line.includes("STOPPING=1")), "STOPPING=1");
  } finally {
    await ended(child, drained);
    listener.kill("SIGTERM");
    await listener.status;
    await reading;
    await Deno.remove(ws.dir, { recursive: true });
  }
});
