import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { callDeviceTool } from "../../tests/support/recording_device.ts";
import { StoreHealth } from "../fs/store_health.ts";
import type { ToolContext } from "../tools/tool.ts";
import { ScheduleStore } from "./schedule_store.ts";
import { TimerDevice } from "./timer.ts";

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
