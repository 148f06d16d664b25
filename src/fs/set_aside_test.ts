import assert from "node:assert/strict";
import { join } from "node:path";
import { DamagedFiles, type SetAsideFile } from "./set_aside.ts";

const AT = Date.parse("2026-12-04T02:00:00Z");
const STAMP = "2026-12-04T02:00:00.000Z";

Deno.test("a damaged file is moved beside itself with the time, its side files along, and recorded once", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "memory.db");
  await Deno.writeTextFile(path, "damaged");
  await Deno.writeTextFile(`${path}-wal`, "log");
  const damaged = new DamagedFiles(() => AT);
  const heard: SetAsideFile[] = [];
  damaged.subscribe((entry) => heard.push(entry));
  const entry = damaged.setAside(path, "database disk image is malformed", {
    companions: ["-wal", "-shm"],
    kept: { en: "a new, empty database", zh: "一个新的空数据库" },
  });
  assert.deepEqual(entry, {
    file: path,
    moved_to: `${path}.damaged-${STAMP}`,
    why: "database disk image is malformed",
    kept: "a new, empty database",
    kept_zh: "一个新的空数据库",
    at: STAMP,
  });
  assert.equal(await Deno.readTextFile(`${path}.damaged-${STAMP}`), "damaged");
  assert.equal(await Deno.readTextFile(`${path}.damaged-${STAMP}-wal`), "log", "the WAL goes with it, same name");
  await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
  await assert.rejects(Deno.stat(`${path}-wal`), Deno.errors.NotFound);
  assert.deepEqual(heard, [entry]);
  assert.deepEqual(damaged.entries, [entry]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a second file set aside in the same millisecond gets its own name; nothing is overwritten", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "routes.json");
  const damaged = new DamagedFiles(() => AT);
  await Deno.writeTextFile(path, "first");
  damaged.setAside(path, "cut off");
  await Deno.writeTextFile(path, "second");
  const second = damaged.setAside(path, "cut off");
  assert.equal(second.moved_to, `${path}.damaged-${STAMP}-2`);
  assert.equal(await Deno.readTextFile(`${path}.damaged-${STAMP}`), "first");
  assert.equal(await Deno.readTextFile(second.moved_to), "second");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a listener made later hears of what was set aside before, once; a listener's throw never stops a store", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const damaged = new DamagedFiles(() => AT);
  damaged.subscribe(() => {
    throw new Error("a broken log sink");
  });
  for (const name of ["a", "b"]) {
    await Deno.writeTextFile(join(dir, name), name);
    damaged.setAside(join(dir, name), "damaged");
  }
  const heard: string[] = [];
  const stop = damaged.subscribe((entry) => heard.push(entry.file));
  await Deno.writeTextFile(join(dir, "c"), "c");
  damaged.setAside(join(dir, "c"), "damaged");
  stop();
  await Deno.writeTextFile(join(dir, "d"), "d");
  damaged.setAside(join(dir, "d"), "damaged");
  assert.deepEqual(heard, ["a", "b", "c"].map((name) => join(dir, name)));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("open: damage sets the file aside and opens a fresh one; any other failure is thrown untouched", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp" });
  const path = join(dir, "store");
  await Deno.writeTextFile(path, "BAD");
  const damaged = new DamagedFiles(() => AT);
  const rule = {
    damage: (error: unknown) => String(error).includes("BAD") ? "it says BAD" : undefined,
    kept: { en: "none", zh: "无" },
  };
  const open = (file: string) => {
    let text = "";
    try {
      text = Deno.readTextFileSync(file);
    } catch { /* a new one */ }
    if (text === "BAD") throw new Error("BAD content");
    if (text === "LOCKED") throw new Error("locked");
    return text;
  };
  assert.equal(damaged.open(path, open, rule), "");
  assert.equal(damaged.entries[0]!.why, "it says BAD");
  await Deno.writeTextFile(path, "LOCKED");
  assert.throws(() => damaged.open(path, open, rule), /locked/);
  assert.equal(await Deno.readTextFile(path), "LOCKED", "not set aside");
  assert.equal(damaged.entries.length, 1);
  await Deno.remove(dir, { recursive: true });
});
