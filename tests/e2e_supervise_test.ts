/**
 * End to end: `homed supervise` (flags from src/flags.ts: read the config, write the data dir, run only Deno) runs the
 * daemon, passes SIGHUP and SIGTERM on, removes its pid file, and notices a daemon that dies.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, taskFlags, type Workspace, workspace } from "./support/homed_process.ts";
import { waitFor } from "./support/wait.ts";

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/healthz`);
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** Starts `homed supervise` in `ws`; its stderr (the supervisor's and the daemon's log) is collected. */
async function supervise(ws: Workspace) {
  const flags = await taskFlags("supervise", ws.env);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "src/main.ts", "supervise"],
    cwd: REPO,
    env: { NO_COLOR: "1", ...ws.env },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
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
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await drained;
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
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await drained;
    blocker.close();
    await Deno.remove(ws.dir, { recursive: true });
  }
});
