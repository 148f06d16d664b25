import assert from "node:assert/strict";
import { storageFault, StoreHealth, type StoreHealthEvent } from "./store_health.ts";

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
