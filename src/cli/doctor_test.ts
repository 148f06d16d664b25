import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { checkListen, diskCheck, toolRoom } from "./doctor.ts";

Deno.test("doctor says when the MCP servers' tools pass llm.max_tools, and what to do", () => {
  const fits = toolRoom(40, 128);
  assert.equal(fits.ok, true);
  assert.match(fits.detail, /^the MCP servers offer 40 tools; a request offers at most 128 \(llm\.max_tools\)/);
  const over = toolRoom(300, 128);
  assert.equal(over.ok, false);
  assert.match(
    over.detail,
    /offer 300 tools, more than llm\.max_tools \(128\) by themselves: each turn leaves out at least 173/,
  );
  assert.match(over.detail, /mcp\.servers\.<name>\.include$/);
});

const loadedOf = (text: string) =>
  parseConfig({
    text,
    location: { path: "/etc/homed/homed.yaml", origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });

Deno.test("doctor: a listen port held by another program is a problem named with what answered; held by homed, fine", async () => {
  const other = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("nope", { status: 404 }),
  );
  const homedLike = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => Response.json({ ok: true }),
  );
  try {
    const at = (port: number) => loadedOf(`daemon: { listen_addr: "127.0.0.1:${port}" }`);
    const held = await checkListen(at(other.addr.port));
    assert.equal(held.ok, false);
    assert.equal(
      held.detail,
      `127.0.0.1:${other.addr.port} is held by another program (GET /healthz answered HTTP 404 "nope", not homed's ` +
        '{"ok":true}); homed cannot start there: stop that program or set daemon.listen_addr to a free port',
    );
    const running = await checkListen(at(homedLike.addr.port));
    assert.deepEqual(running, {
      ok: true,
      name: "listen",
      detail: `127.0.0.1:${homedLike.addr.port} is held by homed, which answers there (it is running)`,
    });
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    assert.deepEqual(await checkListen(at(port)), { ok: true, name: "listen", detail: `127.0.0.1:${port} is free` });
  } finally {
    await other.shutdown();
    await homedLike.shutdown();
  }
});

Deno.test("doctor: the data dir's free space, a finding below daemon.low_disk, a warning when it cannot be read", () => {
  const GB = 1024 ** 3;
  assert.deepEqual(diskCheck("/var/lib/homed", GB / 2, { free_bytes: 12 * GB, total_bytes: 32 * GB }), {
    ok: true,
    name: "disk",
    detail: "/var/lib/homed: 12 GB free of 32 GB (warns below 512 MB: daemon.low_disk)",
  });
  const low = diskCheck("/var/lib/homed", GB / 2, { free_bytes: GB / 4, total_bytes: 32 * GB });
  assert.equal(low.ok, false);
  assert.match(low.detail, /256 MB free of 32 GB, below daemon\.low_disk \(512 MB\)/);
  const blind = diskCheck("/var/lib/homed", GB / 2, { unknown: "homed may not read … --allow-sys=statfs" });
  assert.deepEqual([blind.ok, blind.warn], [true, true]);
  assert.equal(diskCheck("/d", 0, { free_bytes: 0, total_bytes: GB }).ok, true, "0: never a finding");
});
