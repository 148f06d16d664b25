import assert from "node:assert/strict";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { ALICE, GUS, OWNER, routeApi } from "../../tests/support/route_api.ts";
import { MediaCache } from "../media/media_cache.ts";
import { mediaRoutes, servedType } from "./media_routes.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const WAV = new Uint8Array([...new TextEncoder().encode("RIFF"), 36, 0, 0, 0, ...new TextEncoder().encode("WAVEfmt ")]);
const HTML = new TextEncoder().encode("<html><script>alert(document.cookie)</script></html>");
const SVG = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

async function setup() {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-media-api-" });
  const cache = await MediaCache.open({ dir, maxBytes: 1024 * 1024, clock: new FakeClock() });
  const { call } = routeApi([mediaRoutes(cache)]);
  const get = (id: string, token = ALICE) => call("GET", `/api/media/${id}`, token);
  return { cache, get, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

function assertSafeHeaders(response: Response): void {
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  assert.equal(response.headers.get("content-disposition"), "inline");
  assert.equal(response.headers.get("content-security-policy"), "default-src 'none'");
}

Deno.test("a cached image or voice note is served with its type and the safe headers", async () => {
  await using t = await setup();
  for (const [bytes, mime] of [[PNG, "image/png"], [WAV, "audio/wav"]] as const) {
    const { id } = await t.cache.put(bytes, mime);
    for (const token of [ALICE, OWNER]) {
      const response = await t.get(id, token);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("content-type"), mime);
      assert.equal(response.headers.get("content-length"), String(bytes.length));
      assertSafeHeaders(response);
      assert.deepEqual(new Uint8Array(await response.arrayBuffer()), bytes);
    }
  }
});

Deno.test("HTML, SVG and bytes that are not what their id says are served as application/octet-stream", async () => {
  await using t = await setup();
  const html = await t.cache.put(HTML, "text/html");
  assert.match(html.id, /\.bin$/);
  const svg = await t.cache.put(SVG, "image/svg+xml");
  const disguised = await t.cache.put(HTML, "image/png"); // a ".png" whose bytes are a page
  const relabelled = await t.cache.put(PNG, "application/pdf"); // a real image under another type
  for (const { id } of [html, svg, disguised, relabelled]) {
    const response = await t.get(id);
    assert.equal(response.status, 200, id);
    assert.equal(response.headers.get("content-type"), "application/octet-stream", id);
    assertSafeHeaders(response);
    await response.body?.cancel();
  }
  assert.equal(servedType(disguised.id, HTML), "application/octet-stream");
  assert.equal(servedType(`${"a".repeat(64)}.png`, PNG), "image/png");
});

Deno.test("guests are refused naming the trust; a bad id is a 400 naming it; an unknown one a 404", async () => {
  await using t = await setup();
  const { id } = await t.cache.put(PNG, "image/png");
  const guest = await t.get(id, GUS);
  assert.equal(guest.status, 403);
  assert.deepEqual(await guest.json(), {
    error: {
      code: "forbidden",
      message: 'Cached media needs trust household or owner; this request came from "gus" (trust guest)',
    },
  });
  for (
    const bad of ["..%2F..%2Fetc%2Fpasswd", `${"A".repeat(64)}.png`, `${"a".repeat(64)}.PNG`, "x", "a".repeat(300)]
  ) {
    const response = await t.get(bad);
    assert.equal(response.status, 400, bad);
    const { error } = await response.json();
    assert.equal(error.code, "bad_request");
    assert.match(error.message, /^Media id ".*" is not a cache id \(64 hex digits, a dot and an extension\)$/);
    assert.ok(error.message.length < 200, error.message);
  }
  const traversal = await (await t.get("..%2F..%2Fetc%2Fpasswd")).json();
  assert.equal(
    traversal.error.message,
    'Media id "../../etc/passwd" is not a cache id (64 hex digits, a dot and an extension)',
  );
  const missing = await t.get(`${"0".repeat(64)}.png`);
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), {
    error: { code: "not_found", message: `No cached media "${"0".repeat(64)}.png" (evicted, or never kept)` },
  });
});
