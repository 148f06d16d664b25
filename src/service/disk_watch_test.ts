import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { join } from "node:path";
import { StoreHealth } from "../fs/store_health.ts";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import type { FreeSpace } from "../fs/free_space.ts";
import { DiskWatch, LOW_DISK_EVERY_MS, type LowDisk } from "./disk_watch.ts";
import { ServiceHost } from "./service_host.ts";

const MB = 1024 ** 2;
const HOUR = 3_600_000;

/** A watch over a fake disk whose free space the test sets; `heard` is what its listener was told. */
function fakeDisk(lowBelow = 500 * MB) {
  const clock = new FakeClock();
  let space: FreeSpace = { free_bytes: 10_000 * MB, total_bytes: 32_000 * MB };
  const disk = new DiskWatch({
    dir: "/var/lib/homed",
    lowBelow,
    clock,
    logger: getLogger(["test"]),
    measure: () => space,
  });
  const heard: LowDisk[] = [];
  disk.onLow((low) => heard.push(low));
  return { clock, disk, heard, set: (next: FreeSpace) => space = next };
}

Deno.test("below daemon.low_disk the listener hears at once, then at most once a day while it stays low", async () => {
  const { clock, disk, heard, set } = fakeDisk();
  await disk.start();
  assert.deepEqual(disk.space(), {
    free_bytes: 10_000 * MB,
    total_bytes: 32_000 * MB,
    low: false,
    low_below: 500 * MB,
    checked_at: new Date(clock.now()).toISOString(),
  });
  assert.equal(heard.length, 0);
  set({ free_bytes: 400 * MB, total_bytes: 32_000 * MB });
  disk.heartbeat();
  assert.deepEqual(heard, [{
    dir: "/var/lib/homed",
    free_bytes: 400 * MB,
    total_bytes: 32_000 * MB,
    low_below: 500 * MB,
  }]);
  assert.equal(disk.space().low, true);
  // Every 15 s for almost a day: still low, not told again.
  for (let t = 0; t < LOW_DISK_EVERY_MS - 15_000; t += 15_000) {
    clock.advance(15_000);
    disk.heartbeat();
  }
  assert.equal(heard.length, 1);
  clock.advance(15_000);
  disk.heartbeat();
  assert.equal(heard.length, 2, "a day later, still low: told again");
  assert.equal(disk.space().checked_at, new Date(clock.now()).toISOString());
});

Deno.test("room again, then low again within the day: not told twice the same day (no flapping at the threshold)", async () => {
  const { clock, disk, heard, set } = fakeDisk();
  set({ free_bytes: 499 * MB, total_bytes: 1_000 * MB });
  await disk.start();
  assert.equal(heard.length, 1, "low at start: told at once");
  set({ free_bytes: 501 * MB, total_bytes: 1_000 * MB });
  clock.advance(HOUR);
  disk.heartbeat();
  assert.equal(disk.space().low, false);
  set({ free_bytes: 499 * MB, total_bytes: 1_000 * MB });
  clock.advance(HOUR);
  disk.heartbeat();
  assert.equal(disk.space().low, true);
  assert.equal(heard.length, 1);
  clock.advance(LOW_DISK_EVERY_MS);
  disk.heartbeat();
  assert.equal(heard.length, 2);
});

Deno.test("daemon.low_disk 0 never warns; an unreadable free space is unknown, never low, and says why", async () => {
  const off = fakeDisk(0);
  off.set({ free_bytes: 0, total_bytes: 1_000 * MB });
  await off.disk.start();
  assert.equal(off.disk.space().low, false);
  assert.equal(off.heard.length, 0);

  const blind = fakeDisk();
  blind.set({ unknown: "homed may not read the free space of /var/lib/homed: it needs --allow-sys=statfs" });
  await blind.disk.start();
  assert.deepEqual(blind.disk.space(), {
    free_bytes: null,
    total_bytes: null,
    low: false,
    low_below: 500 * MB,
    checked_at: new Date(blind.clock.now()).toISOString(),
    free_space_unknown: "homed may not read the free space of /var/lib/homed: it needs --allow-sys=statfs",
  });
  assert.equal(blind.heard.length, 0);
});

Deno.test("the service host reads the disk on every heartbeat", async () => {
  const { clock, disk, heard, set } = fakeDisk();
  const host = new ServiceHost({ clock, logger: getLogger(["test"]), heartbeatMs: 15_000 });
  await host.start(disk);
  host.schedule();
  set({ free_bytes: 100 * MB, total_bytes: 32_000 * MB });
  await clock.timersArmed();
  clock.advance(15_000);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(disk.space().free_bytes, 100 * MB);
  assert.equal(heard.length, 1);
  await host.stop();
});

Deno.test("each heartbeat re-checks the degraded stores, and only while some are degraded", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-disk-watch-" });
  try {
    const clock = new FakeClock();
    const health = new StoreHealth(() => clock.now());
    let rechecks = 0;
    let free = 10_000 * MB;
    const recheck = health.recheck.bind(health);
    health.recheck = () => (rechecks++, recheck());
    const disk = new DiskWatch({
      dir,
      lowBelow: 0,
      clock,
      logger: getLogger(["test"]),
      measure: () => ({ free_bytes: free, total_bytes: 32_000 * MB }),
      health,
    });
    disk.heartbeat();
    assert.equal(rechecks, 0, "nothing degraded: no probe");
    health.failed("usage.db", join(dir, "usage.db"), new Error("database or disk is full"));
    free = 64 * 1024;
    disk.heartbeat();
    assert.equal(rechecks, 0, "a few pages free: no probe yet");
    free = 10_000 * MB;
    disk.heartbeat();
    assert.equal(rechecks, 1);
    assert.deepEqual(health.degraded, [], "the folder takes a write: cleared without a write of usage.db");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
