import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { MediaCache } from "./media_cache.ts";

/** A temp folder that is removed at the end of the test. */
async function tempDir(): Promise<{ dir: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "homed-media-cache-" });
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

/** `size` bytes all of `value`, so each test file has its own content and hash. */
function bytes(size: number, value: number): Uint8Array {
  return new Uint8Array(size).fill(value);
}

async function listing(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

Deno.test("media cache: put is content-addressed, read gives the bytes back, status counts", async () => {
  await using tmp = await tempDir();
  const cache = await MediaCache.open({ dir: join(tmp.dir, "media"), maxBytes: 1_000, clock: new FakeClock() });
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
  const ref = await cache.put(png, "image/png");
  assert.deepEqual(ref, {
    id: "0f4636c78f65d3639ece5a064b5ae753e3408614a14fb18ab4d7540d2c248543.png",
    mime: "image/png",
    size: 4,
  });
  assert.deepEqual(await cache.read(ref.id), png);
  assert.equal(await cache.has(ref.id), true);
  assert.deepEqual(await cache.put(png, "image/png"), ref, "the same content is the same file");
  const voice = await cache.put(bytes(10, 1), "audio/silk");
  assert.match(voice.id, /^[0-9a-f]{64}\.silk$/);
  assert.deepEqual(cache.status(), { files: 2, bytes: 14, max_bytes: 1_000 });
  assert.deepEqual(await listing(join(tmp.dir, "media")), [ref.id, voice.id].sort(), "no temporary file is left");
  const info = await Deno.stat(join(tmp.dir, "media", ref.id));
  assert.equal((info.mode ?? 0) & 0o777, 0o600);
});

Deno.test("media cache: an unknown id is absent; an id that is a path is a TypeError naming it", async () => {
  await using tmp = await tempDir();
  await Deno.writeTextFile(join(tmp.dir, "secret.txt"), "not media");
  const cache = await MediaCache.open({ dir: join(tmp.dir, "media"), maxBytes: 1_000, clock: new FakeClock() });
  assert.equal(await cache.read(`${"a".repeat(64)}.png`), undefined);
  assert.equal(await cache.has(`${"a".repeat(64)}.png`), false);
  for (const id of ["../secret.txt", "a/b", `../${"a".repeat(64)}.png`, `${"A".repeat(64)}.png`, "", "x.png"]) {
    await assert.rejects(cache.read(id), {
      name: "TypeError",
      message: `The media id "${id}" is not a cache id (64 hex digits, a dot and an extension)`,
    });
    await assert.rejects(cache.has(id), { name: "TypeError" });
  }
});

Deno.test("media cache: over the limit the least recently used go first; a read counts as a use", async () => {
  await using tmp = await tempDir();
  const clock = new FakeClock();
  const cache = await MediaCache.open({ dir: tmp.dir, maxBytes: 300, clock });
  const a = await cache.put(bytes(100, 1), "image/png");
  clock.advance(1_000);
  const b = await cache.put(bytes(100, 2), "image/jpeg");
  clock.advance(1_000);
  const c = await cache.put(bytes(100, 3), "audio/wav");
  clock.advance(1_000);
  assert.deepEqual(await cache.read(a.id), bytes(100, 1), "a is now the most recently used");
  clock.advance(1_000);
  const d = await cache.put(bytes(100, 4), "audio/mpeg");
  assert.deepEqual(
    [await cache.has(a.id), await cache.has(b.id), await cache.has(c.id), await cache.has(d.id)],
    [true, false, true, true],
    "b, the least recently used, went",
  );
  assert.deepEqual(await listing(tmp.dir), [a.id, c.id, d.id].sort());
  clock.advance(1_000);
  const e = await cache.put(bytes(150, 5), "video/mp4");
  assert.deepEqual(await listing(tmp.dir), [d.id, e.id].sort(), "c went, then a: 350 bytes were still too many");
  assert.deepEqual(cache.status(), { files: 2, bytes: 250, max_bytes: 300 });
});

Deno.test("media cache: a file larger than the limit stays, alone", async () => {
  await using tmp = await tempDir();
  const cache = await MediaCache.open({ dir: tmp.dir, maxBytes: 100, clock: new FakeClock() });
  await cache.put(bytes(40, 1), "image/png");
  await cache.put(bytes(40, 2), "image/png");
  const big = await cache.put(bytes(500, 3), "image/png");
  assert.deepEqual(await listing(tmp.dir), [big.id]);
  assert.deepEqual(cache.status(), { files: 1, bytes: 500, max_bytes: 100 });
  assert.deepEqual(await cache.read(big.id), bytes(500, 3));
});

Deno.test("media cache: reopening keeps the files and their use order; leftover temporary files are deleted", async () => {
  await using tmp = await tempDir();
  const clock = new FakeClock();
  const first = await MediaCache.open({ dir: tmp.dir, maxBytes: 1_000, clock });
  const a = await first.put(bytes(100, 1), "image/png");
  clock.advance(1_000);
  const b = await first.put(bytes(100, 2), "image/png");
  clock.advance(1_000);
  const c = await first.put(bytes(100, 3), "image/png");
  clock.advance(1_000);
  await first.read(a.id);
  const leftover = ".0b7e6a55-5f5e-4d0e-9d5c-0e6c7b8a9f10.tmp";
  await Deno.writeFile(join(tmp.dir, leftover), bytes(50, 9));
  await Deno.writeTextFile(join(tmp.dir, "README.txt"), "not ours: left alone, not counted");

  clock.advance(1_000);
  const second = await MediaCache.open({ dir: tmp.dir, maxBytes: 250, clock });
  assert.deepEqual(await listing(tmp.dir), ["README.txt", a.id, c.id].sort(), "b was the oldest use; the temp went");
  assert.deepEqual(second.status(), { files: 2, bytes: 200, max_bytes: 250 });
  assert.deepEqual(await second.read(c.id), bytes(100, 3));
  assert.equal(await second.has(b.id), false);
});

Deno.test("media cache: a file that vanished under it is forgotten", async () => {
  await using tmp = await tempDir();
  const cache = await MediaCache.open({ dir: tmp.dir, maxBytes: 1_000, clock: new FakeClock() });
  const a = await cache.put(bytes(100, 1), "image/png");
  const b = await cache.put(bytes(100, 2), "image/png");
  await Deno.remove(join(tmp.dir, a.id));
  await Deno.remove(join(tmp.dir, b.id));
  assert.equal(await cache.read(a.id), undefined);
  assert.equal(await cache.has(b.id), false);
  assert.deepEqual(cache.status(), { files: 0, bytes: 0, max_bytes: 1_000 });
  const again = await cache.put(bytes(100, 1), "image/png");
  assert.deepEqual(await cache.read(again.id), bytes(100, 1), "put again, it is written again");
});

Deno.test("media cache: a size limit that is no positive whole number is a RangeError naming the value", async () => {
  await using tmp = await tempDir();
  for (const maxBytes of [0, -5, 1.5, Number.NaN]) {
    await assert.rejects(MediaCache.open({ dir: tmp.dir, maxBytes, clock: new FakeClock() }), {
      name: "RangeError",
      message: `The media cache size limit must be a positive whole number of bytes; got ${maxBytes}`,
    });
  }
});
