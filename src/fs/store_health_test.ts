import assert from "node:assert/strict";
import { join } from "node:path";
import { storageFault, StoreHealth, type StoreHealthEvent } from "./store_health.ts";
import { run, tmpfs } from "../../tests/support/tmpfs.ts";

Deno.test("storageFault tells a full, read-only or failing disk from other errors, through causes", () => {
  const coded = (code: string, message: string) => Object.assign(new Error(message), { code });
  assert.equal(storageFault(coded("ENOSPC", "No space left on device (os error 28)"))?.kind, "disk_full");
  assert.equal(storageFault(coded("EROFS", "Read-only file system (os error 30)"))?.kind, "read_only");
  assert.equal(storageFault(coded("EIO", "Input/output error (os error 5)"))?.kind, "io_error");
  assert.equal(storageFault(new Error("database or disk is full"))?.kind, "disk_full");
  assert.equal(storageFault(new Error("attempt to write a readonly database"))?.kind, "read_only");
  assert.equal(storageFault(new Error("disk I/O error"))?.kind, "io_error");
  assert.equal(
    storageFault(new Error("saving failed", { cause: new Error("database or disk is full") }))?.kind,
    "disk_full",
  );
  assert.equal(storageFault(new Error("database is locked")), undefined);
  assert.equal(storageFault(coded("ENOENT", "No such file or directory")), undefined);
});

Deno.test("StoreHealth: one event per episode, degraded stores with since, recovery once the last one writes", async () => {
  let now = Date.parse("2026-12-04T02:00:00Z");
  const health = new StoreHealth(() => now);
  const events: StoreHealthEvent[] = [];
  health.subscribe((event) => events.push(event));
  const full = new Error("database or disk is full");
  assert.equal(health.failed("usage.db", "/d/usage.db", full), true);
  now += 1000;
  assert.equal(health.failed("usage.db", "/d/usage.db", full), true);
  assert.equal(await health.guard("memory journal", "/d/j", () => Promise.reject(full)), undefined);
  assert.equal(health.failed("usage.db", "/d/usage.db", new Error("database is locked")), false);
  assert.deepEqual(health.degraded.map((entry) => [entry.store, entry.kind, entry.since]), [
    ["usage.db", "disk_full", "2026-12-04T02:00:00.000Z"],
    ["memory journal", "disk_full", "2026-12-04T02:00:01.000Z"],
  ]);
  assert.deepEqual(events.map((event) => event.type), ["degraded"]);
  health.succeeded("usage.db");
  assert.deepEqual(events.map((event) => event.type), ["degraded"]);
  assert.equal(await health.guard("memory journal", "/d/j", () => Promise.resolve(7)), 7);
  assert.equal(health.degraded.length, 0);
  assert.deepEqual(events.map((event) => event.type), ["degraded", "recovered"]);
  assert.throws(() =>
    health.guardSync("usage.db", "/d/usage.db", () => {
      throw new Error("database is locked");
    }), /locked/);
  // A new episode is heard of again; a late listener hears of the one under way.
  health.failed("context.json", "/d/context.json", full);
  const late: StoreHealthEvent[] = [];
  health.subscribe((event) => late.push(event));
  assert.deepEqual(events.map((event) => event.type), ["degraded", "recovered", "degraded"]);
  assert.deepEqual(late.map((event) => event.type), ["degraded"]);
});

Deno.test({
  name: "recheck: a store that does not write again is cleared once its folder on a real full tmpfs takes a write",
  ignore: tmpfs.ignore,
  fn: async () => {
    tmpfs.assertAvailable();
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-recheck-" });
    await run("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]);
    try {
      const health = new StoreHealth(() => Date.parse("2026-12-04T02:00:00Z"));
      const events: StoreHealthEvent[] = [];
      health.subscribe((event) => events.push(event));
      const filler = await Deno.open(join(dir, "filler"), { create: true, write: true });
      for (let chunk = 4096; chunk >= 1; chunk >>= 1) {
        const zeros = new Uint8Array(chunk);
        try {
          for (;;) await filler.write(zeros);
        } catch (error) {
          if ((error as { code?: string }).code !== "ENOSPC") throw error;
        }
      }
      filler.close();
      const error = Object.assign(new Error("No space left on device (os error 28)"), { code: "ENOSPC" });
      health.failed("usage.db", join(dir, "usage.db"), error);
      health.failed("memory index", dir, error);
      assert.deepEqual(health.recheck(), [], "the disk is still full");
      assert.equal(health.degraded.length, 2);
      await Deno.remove(join(dir, "filler"));
      assert.deepEqual(health.recheck(), ["usage.db", "memory index"]);
      assert.deepEqual(health.degraded, []);
      assert.deepEqual(events.map((event) => event.type), ["degraded", "recovered"]);
      assert.deepEqual([...Deno.readDirSync(dir)], [], "no probe file left");
    } finally {
      await run("umount", [dir]);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
