import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import { checkListen, checkOnebotMedia, toolRoom } from "./doctor.ts";

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

const SEES = "vision: { base_url: 'http://127.0.0.1:11434/v1', model: m }\n";

Deno.test("doctor: QQ media from a OneBot implementation on this machine need media.allow_hosts, named with the host", () => {
  // Nothing fetched: QQ off, or nothing sees or hears.
  assert.equal(checkOnebotMedia(loadedOf(`${SEES}onebot: { enabled: false }`).config), undefined);
  assert.equal(checkOnebotMedia(loadedOf("").config), undefined);
  // Reverse WebSocket (the default): its address is unknown until it connects, so always a hint.
  const reverse = checkOnebotMedia(loadedOf(SEES).config)!;
  assert.equal(reverse.ok, true);
  assert.equal(reverse.warn, true);
  assert.equal(reverse.name, "qq.media");
  assert.match(
    reverse.detail,
    /in media\.allow_hosts: add it \("127\.0\.0\.1:6099"\), then restart homed with the flags `homed flags` prints/,
  );
  const listed = checkOnebotMedia(loadedOf(`${SEES}media: { allow_hosts: ["127.0.0.1:3000"] }`).config)!;
  assert.deepEqual([listed.ok, listed.warn], [true, undefined]);
  assert.match(listed.detail, /^media\.allow_hosts lists 127\.0\.0\.1:3000 for a OneBot implementation/);
  // A public host in allow_hosts is no answer for an implementation on this machine.
  const publicOnly = checkOnebotMedia(loadedOf(`${SEES}media: { allow_hosts: ["media.example.com"] }`).config)!;
  assert.equal(publicOnly.warn, true);
  // Forward: homed reaches the implementation, whose own host is granted and trusted on any port.
  const forward = (url: string, extra = "") =>
    checkOnebotMedia(loadedOf(`${SEES}onebot: { forward_url: "${url}" }\n${extra}`).config);
  const loopback = forward("ws://127.0.0.1:3001")!;
  assert.deepEqual([loopback.ok, loopback.warn], [true, undefined]);
  assert.match(loopback.detail, /at 127\.0\.0\.1 \(onebot\.forward_url\) .* on any port of 127\.0\.0\.1/);
  const lan = forward("ws://192.168.1.5:3001")!;
  assert.match(lan.detail, /on any port of 192\.168\.1\.5; media from another host .* need media\.allow_hosts$/);
  const named = forward("ws://localhost:3001")!;
  assert.equal(named.warn, true);
  assert.match(
    named.detail,
    /at localhost \(onebot\.forward_url\).*add that host \("127\.0\.0\.1:6099"\) to media\.allow_hosts/,
  );
  assert.equal(forward("ws://localhost:3001", 'media: { allow_hosts: ["127.0.0.1:6099"] }')!.warn, undefined);
  assert.equal(forward("wss://qq.example.com/ws"), undefined, "an implementation elsewhere serves public media");
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
