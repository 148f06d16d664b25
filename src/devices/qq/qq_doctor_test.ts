import assert from "node:assert/strict";
import { parseConfig } from "../../config/load.ts";
import { checkOnebotMedia } from "./qq_doctor.ts";

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
