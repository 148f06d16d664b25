import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { callDeviceTool } from "../../tests/support/recording_device.ts";
import { StoreHealth } from "../fs/store_health.ts";
import type { ToolContext } from "../tools/tool.ts";
import { ScheduleStore } from "./schedule_store.ts";
import { TimerDevice } from "./timer.ts";
import { FiringLedger, SLOT_BYTES, SLOTS } from "./firing_ledger.ts";
import { fillDisk, run, tmpfs } from "../../tests/support/tmpfs.ts";

const START = Date.parse("2026-11-30T09:00:00+08:00");

const owner: ToolContext = {
  eventId: "x",
  source: "http",
  sender: "owner",
  trust: "owner",
  signal: new AbortController().signal,
  replyChannel: () => "http",
  setReplyChannel: () => {},
};

Deno.test("a schedule the disk cannot store is refused naming the disk, never acknowledged; it is taken again later", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-timer-disk-" });
  const path = join(dir, "schedules.db");
  const clock = new FakeClock(START);
  const health = new StoreHealth(() => clock.now());
  const store = ScheduleStore.open(path);
  const insert = store.insert.bind(store);
  store.insert = () => {
    throw new Error("database or disk is full");
  };
  const timer = new TimerDevice({
    store,
    clock,
    timezone: "Asia/Shanghai",
    checkChannel: () => undefined,
    logger: getLogger("test"),
    health: { record: health, path },
  });
  await timer.start({
    emit: () => assert.fail("nothing fires"),
    clock,
    log: getLogger("test"),
    readyAgain: () => {},
    waiting: () => 0,
  });
  try {
    const create = () =>
      callDeviceTool(timer, "schedule_create", { text: "Oven off?", at: "2026-11-30T09:20:00+08:00" }, owner);
    await assert.rejects(create, (error: Error) => {
      assert.match(error.message, /NOT stored/);
      assert.ok(error.message.includes(path), error.message);
      assert.match(error.message, /disk is full/);
      return true;
    });
    assert.equal(store.count(), 0);
    assert.deepEqual(health.degraded.map((entry) => [entry.store, entry.kind, entry.path]), [[
      "schedules.db",
      "disk_full",
      path,
    ]]);
    store.insert = insert;
    await create();
    assert.equal(store.count(), 1);
    assert.equal(health.degraded.length, 0);
  } finally {
    await timer.stop();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a firing the full disk cannot record is delivered once: not again at the next wake-up, after a restart or recovery", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-timer-fired-" });
  const path = join(dir, "schedules.db");
  const clock = new FakeClock(START);
  const health = new StoreHealth(() => clock.now());
  const fired: string[] = [];
  let full = false;
  let ids = 0;
  const open = async () => {
    const store = ScheduleStore.open(path);
    const record = store.record.bind(store);
    store.record = (state) => {
      if (full) throw new Error("database or disk is full");
      record(state);
    };
    const ledger = FiringLedger.open(join(dir, "schedules.fired"));
    const timer = new TimerDevice({
      store,
      clock,
      timezone: "Asia/Shanghai",
      checkChannel: () => undefined,
      logger: getLogger("test"),
      newId: () => `s${++ids}`,
      health: { record: health, path },
      ledger,
    });
    await timer.start({
      emit: (draft) => {
        fired.push(`${draft.source} ${new Date(clock.now()).toISOString()}`);
        return { id: `e${fired.length}`, time: clock.now(), ...draft };
      },
      clock,
      log: getLogger("test"),
      readyAgain: () => {},
      waiting: () => 0,
    });
    return {
      store,
      timer,
      ledger,
      async close() {
        await timer.stop();
        ledger.close();
        store.close();
      },
    };
  };
  let current = await open();
  try {
    await callDeviceTool(
      current.timer,
      "schedule_create",
      { text: "Oven off?", at: "2026-11-30T09:20:00+08:00" },
      owner,
    );
    await callDeviceTool(current.timer, "schedule_create", { text: "Water the plants", cron: "30 9 * * *" }, owner);
    full = true;
    clock.advance(20 * 60_000); // 09:20: the one-shot fires; schedules.db cannot take it
    assert.deepEqual(fired, ["timer:s1 2026-11-30T01:20:00.000Z"]);
    assert.deepEqual(health.degraded.map((entry) => [entry.store, entry.kind, entry.path]), [[
      "schedules.db",
      "disk_full",
      path,
    ]]);
    assert.equal(current.store.get("s1")!.nextRun, Date.parse("2026-11-30T09:20:00+08:00"), "still due on disk");
    assert.deepEqual(current.timer.list().map((schedule) => schedule.id), ["s2"]);
    assert.equal(current.timer.status().unsaved_firings, 1);
    clock.advance(3 * 60_000); // wake-ups: nothing fires again
    assert.equal(fired.length, 1);

    // A restart with the disk still full: schedules.fired remembers the firing.
    await current.close();
    current = await open();
    clock.advance(60_000);
    assert.equal(fired.length, 1, fired.join("\n"));
    clock.advance(6 * 60_000); // 09:30: the recurring one fires once, still unrecorded
    assert.deepEqual(fired.slice(1), ["timer:s2 2026-11-30T01:30:00.000Z"]);
    clock.advance(2 * 60_000);
    assert.equal(fired.length, 2);
    assert.equal(current.timer.status().unsaved_firings, 2);
    assert.equal(health.degraded.length, 1);

    // Space returns: the next wake-up writes both firings, and the store is no longer degraded.
    full = false;
    clock.advance(60_000);
    assert.equal(health.degraded.length, 0);
    assert.equal(current.timer.status().unsaved_firings, 0);
    const oneShot = current.store.get("s1")!;
    assert.deepEqual([oneShot.nextRun, oneShot.runs, oneShot.lastRun], [
      null,
      1,
      Date.parse("2026-11-30T09:20:00+08:00"),
    ]);
    const recurring = current.store.get("s2")!;
    assert.deepEqual([recurring.nextRun, recurring.runs], [Date.parse("2026-12-01T09:30:00+08:00"), 1]);
    assert.deepEqual(current.ledger.entries(), []);
    await current.close();
    current = await open();
    assert.deepEqual(current.ledger.entries(), []);
    clock.advance(10 * 60_000);
    assert.equal(fired.length, 2, fired.join("\n"));
  } finally {
    await current.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("schedules.fired: a slot is kept over a reopen and cleared; a torn file is mended, never an error", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-ledger-" });
  const path = join(dir, "schedules.fired");
  try {
    const ledger = FiringLedger.open(path);
    const size = Deno.statSync(path).size;
    assert.equal(size, SLOT_BYTES * SLOTS);
    const entry = { id: "s-1f3a9c2e", lastRun: START, nextRun: null, runs: 1 };
    assert.equal(ledger.put(entry), true);
    assert.equal(ledger.put({ ...entry, id: "x".repeat(SLOT_BYTES) }), false, "too long for a slot");
    ledger.close();
    assert.equal(Deno.statSync(path).size, size);
    const again = FiringLedger.open(path);
    assert.deepEqual(again.entries(), [entry]);
    again.remove(entry.id);
    again.close();
    const cleared = FiringLedger.open(path);
    assert.deepEqual(cleared.entries(), []);
    cleared.close();
    // A torn or foreign slot is free, not an error.
    await Deno.writeTextFile(path, "not json\n");
    const mended = FiringLedger.open(path);
    assert.equal(Deno.statSync(path).size, size);
    assert.equal(mended.put(entry), true);
    mended.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "schedules.fired on a real tmpfs filled to the last byte still takes a firing, and keeps it over a reopen",
  ignore: tmpfs.ignore,
  fn: async () => {
    tmpfs.assertAvailable();
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-ledger-full-" });
    await run("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir]);
    try {
      const path = join(dir, "schedules.fired");
      const ledger = FiringLedger.open(path);
      assert.ok(await fillDisk(join(dir, "filler")) > 0);
      assert.throws(() => Deno.writeTextFileSync(join(dir, "new"), "x".repeat(8192)), /No space left/);
      for (let n = 0; n < SLOTS; n++) {
        assert.equal(ledger.put({ id: `s${n}`, lastRun: START, nextRun: null, runs: 1 }), true, `slot ${n}`);
      }
      ledger.close();
      const again = FiringLedger.open(path);
      assert.equal(again.entries().length, SLOTS);
      again.close();
    } finally {
      await run("umount", [dir]);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
