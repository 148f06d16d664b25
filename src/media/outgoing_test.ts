import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { samplePng, sineWav } from "../../tests/support/fake_media.ts";
import { systemClock } from "../clock.ts";
import { isSilk } from "../audio/silk.ts";
import { MediaCache } from "./media_cache.ts";
import { MediaService, type MediaSettings } from "./media_service.ts";

const SETTINGS: MediaSettings = {
  maxImageBytes: 64 * 1024,
  maxAudioBytes: 256 * 1024,
  guestMaxBytes: 2 * 1024,
  fetchTimeoutMs: 2_000,
  direct: false,
  replyWithVoice: "when_spoken_to",
};

/** What the test resolver answers: a public address, a name that is really this machine, a LAN name. */
const NAMES: Record<string, string[]> = {
  "media.example": ["93.184.215.14"],
  "loop.example": ["127.0.0.1"],
  "nas.example": ["192.168.1.20"],
};

/** A web server on loopback, counting what it was asked. */
function webServer(files: Record<string, Uint8Array>) {
  const served: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    served.push(path);
    if (path === "/to-metadata") {
      return new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } });
    }
    const bytes = files[path];
    return bytes ? new Response(bytes.slice()) : new Response("no such file", { status: 404 });
  });
  return { server, served, hostPort: `127.0.0.1:${server.addr.port}`, base: `http://127.0.0.1:${server.addr.port}` };
}

/** The media service over a fresh cache; `allowHosts` as media.allow_hosts, homed listening on `homedPort`. */
async function service(allowHosts: string[], homedPort: number) {
  const dir = await Deno.makeTempDir({ prefix: "homed-outgoing-" });
  const cache = await MediaCache.open({ dir, maxBytes: 4 * 2 ** 20, clock: systemClock });
  const media = new MediaService({
    settings: SETTINGS,
    cache,
    clock: systemClock,
    logger: getLogger(["test"]),
    policy: {
      allowHosts,
      ownListen: { host: "127.0.0.1", port: homedPort },
      resolve: (host) => NAMES[host] ? Promise.resolve(NAMES[host]) : Promise.reject(new Error(`no such name ${host}`)),
    },
  });
  return { media, cache, cleanup: () => Deno.remove(dir, { recursive: true }) };
}

Deno.test("fetchOutgoing refuses, naming the url and the rule: file:, link-local, loopback, homed's own API, private, a name that is loopback", async () => {
  const web = webServer({ "/plant.png": samplePng() });
  const homed = webServer({}); // plays homed's own listener
  const { media, cleanup } = await service([], homed.server.addr.port);
  const refused = async (url: string, type: "image" | "audio" | "file" = "image") => {
    const error = await media.fetchOutgoing(url, type).then(() => undefined, (error: Error) => error);
    assert.ok(error, `${url} was fetched`);
    return error.message;
  };
  try {
    assert.equal(
      await refused("file:///etc/homed/homed.yaml", "file"),
      'url "file:///etc/homed/homed.yaml" was refused: the scheme file: is not allowed (only http: and https:)',
    );
    assert.equal(
      await refused("http://169.254.169.254/latest/meta-data/"),
      'url "http://169.254.169.254/latest/meta-data/" was refused: 169.254.169.254 is a link-local address; ' +
        "list the host in media.allow_hosts to allow it",
    );
    assert.equal(
      await refused(`${web.base}/plant.png`),
      `url "${web.base}/plant.png" was refused: 127.0.0.1 is a loopback address; list the host in media.allow_hosts ` +
        "to allow it",
    );
    assert.equal(
      await refused(`${homed.base}/api/status`),
      `url "${homed.base}/api/status" was refused: port ${homed.server.addr.port} on 127.0.0.1 is homed's own ` +
        `listener (127.0.0.1:${homed.server.addr.port}); homed never fetches from itself`,
    );
    assert.match(
      await refused("http://10.0.0.8/x.png"),
      /^url "http:\/\/10\.0\.0\.8\/x\.png" was refused: 10\.0\.0\.8 is a private address/,
    );
    assert.match(await refused("http://192.168.1.1/"), /was refused: 192\.168\.1\.1 is a private address/);
    assert.match(
      await refused("http://nas.example/x.png"),
      /was refused: nas\.example resolves to 192\.168\.1\.20, a private/,
    );
    assert.equal(
      await refused("http://loop.example:8080/x.png", "audio"),
      'url "http://loop.example:8080/x.png" was refused: loop.example resolves to 127.0.0.1, a loopback address; ' +
        "list the host in media.allow_hosts to allow it",
    );
    assert.match(await refused("http://localhost/x.png"), /was refused: localhost is a loopback name/);
    assert.match(await refused("http://user:secret@media.example/x.png"), /was refused: a user name or password/);
    assert.deepEqual([...web.served, ...homed.served], [], "nothing was asked of either server");
    const status = media.status() as { fetch: { calls: number; refused: number } };
    assert.equal(status.fetch.refused, status.fetch.calls, "every one counted as refused");
  } finally {
    await web.server.shutdown();
    await homed.server.shutdown();
    await cleanup();
  }
});

Deno.test("fetchOutgoing: a listed host's file is fetched by homed, checked and kept; redirects, size and type are held to", async () => {
  const png = samplePng(2_000);
  const mp3 = Uint8Array.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0, ...new Array(64).fill(0)]);
  const web = webServer({
    "/plant.png": png,
    "/page.png": new TextEncoder().encode("<!doctype html><p>not a picture</p>"),
    "/big.png": samplePng(SETTINGS.maxImageBytes),
    "/song.mp3": mp3,
  });
  const { media, cache, cleanup } = await service([web.hostPort], 1);
  try {
    const kept = await media.fetchOutgoing(`${web.base}/plant.png`, "image");
    assert.equal(kept.mime, "image/png");
    assert.deepEqual(await cache.read(kept.id), png, "homed holds exactly the served bytes");
    assert.deepEqual(web.served, ["/plant.png"]);

    const failed = (url: string, type: "image" | "audio" | "file") =>
      media.fetchOutgoing(url, type).then(() => "fetched", (error: Error) => error.message);
    assert.match(
      await failed(`${web.base}/to-metadata`, "image"),
      /^url "http:\/\/127\.0\.0\.1:\d+\/to-metadata" was refused: homed will not fetch http:\/\/169\.254\.169\.254\/latest\/meta-data\/: 169\.254\.169\.254 is a link-local address/,
    );
    assert.match(
      await failed(`${web.base}/page.png`, "image"),
      /^url "http:\/\/127\.0\.0\.1:\d+\/page\.png" was refused: its bytes are application\/octet-stream, not an image$/,
    );
    assert.match(
      await failed(`${web.base}/big.png`, "image"),
      /^url "http:\/\/127\.0\.0\.1:\d+\/big\.png" could not be fetched: the file at .* is larger than media\.max_image_bytes \(65536 bytes\)/,
    );
    assert.match(await failed(`${web.base}/gone.png`, "file"), /could not be fetched: .*HTTP 404/);
    assert.match(await failed(`${web.base}/plant.png`, "audio"), /was refused: its bytes are image\/png, not audio$/);
    const song = await media.fetchOutgoing(`${web.base}/song.mp3`, "audio");
    assert.equal(song.mime, "audio/mpeg");
    const file = await media.fetchOutgoing(`${web.base}/page.png`, "file");
    assert.equal(file.size, 35, "a file may be any type");
  } finally {
    await web.server.shutdown();
    await cleanup();
  }
});

Deno.test("QQ's voice format: WAV is encoded to SILK, SILK and other audio (MP3, fetched for output_send) go as they are", async () => {
  const { media, cleanup } = await service([], 1);
  try {
    assert.ok(isSilk(await media.asSilk(sineWav({ ms: 200 }))));
    const mp3 = Uint8Array.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0, 1, 2, 3]);
    assert.deepEqual(await media.asSilk(mp3), mp3, "the implementation converts it (NapCat and Lagrange do)");
  } finally {
    await cleanup();
  }
});
