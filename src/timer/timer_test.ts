import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { callDeviceTool } from "../../tests/support/recording_device.ts";
import { ScheduleStore } from "./schedule_store.ts";
import type { ToolContext } from "../tools/tool.ts";
import type { InputDraft } from "../io/device.ts";
import type { InputEvent } from "../io/event.ts";
import type { Trust } from "../identity/trust.ts";
import { TimerDevice } from "./timer.ts";
import { IOManager } from "../io/io_manager.ts";
import { RouteTable } from "../io/route_table.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { ShuttingDown } from "../io/turn_error.ts";

/** 2026-11-30 09:00 in Shanghai. */
const START = Date.parse("2026-11-30T09:00:00+08:00");

interface Rig {
  clock: FakeClock;
  timer: TimerDevice;
  store: ScheduleStore;
  fired: InputEvent[];
  dir: string;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

async function rig(
  options: { start?: number; refuse?: boolean; dir?: string; people?: Record<string, string[]> } = {},
): Promise<Rig> {
  const dir = options.dir ?? await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-timer-" });
  const clock = new FakeClock(options.start ?? START);
  const fired: InputEvent[] = [];
  let count = 0;
  const make = () => {
    const store = ScheduleStore.open(join(dir, "schedules.db"));
    let ids = 0;
    const timer = new TimerDevice({
      store,
      clock,
      timezone: "Asia/Shanghai",
      checkChannel: (channel) => channel.startsWith("nowhere") ? `Channel "${channel}" does not exist` : undefined,
      logger: getLogger("test"),
      newId: () => `s${++ids + 100 * count}`,
      maxActive: 2_000,
      personChannels: (name) => options.people?.[name] ?? [],
    });
    return { store, timer };
  };
  let current = make();
  const emit = (draft: InputDraft): InputEvent => {
    if (options.refuse) throw new ShuttingDown();
    const event = { id: `e${fired.length + 1}`, time: clock.now(), ...draft };
    fired.push(event);
    return event;
  };
  await current.timer.start({ emit, clock, log: getLogger("test"), readyAgain: () => {}, waiting: () => 0 });
  const result: Rig = {
    clock,
    fired,
    dir,
    get timer() {
      return current.timer;
    },
    get store() {
      return current.store;
    },
    async reopen() {
      await current.timer.stop();
      current.store.close();
      count++;
      current = make();
      await current.timer.start({ emit, clock, log: getLogger("test"), readyAgain: () => {}, waiting: () => 0 });
    },
    async close() {
      await current.timer.stop();
      current.store.close();
      if (!options.dir) await Deno.remove(dir, { recursive: true });
    },
  };
  return result;
}

function context(sender = "owner", trust: Trust = "owner", source = "http"): ToolContext {
  let reply = source;
  return {
    eventId: "x",
    source,
    sender,
    trust,
    signal: new AbortController().signal,
    replyChannel: () => reply,
    setReplyChannel: (channel) => reply = channel,
  };
}

Deno.test("a one-shot fires once at its time, as its creator, to its channel; cancel stops another", async () => {
  const r = await rig();
  try {
    const created = await callDeviceTool(r.timer, "schedule_create", {
      text: "Take the medicine",
      at: "2026-11-30T20:00:00+08:00",
    }, context("alice", "household", "qq:private:10001")) as Record<string, unknown>;
    assert.equal(created.next_run_local, "2026-11-30 20:00 (Asia/Shanghai)");
    assert.equal(created.channel, "qq:private:10001");
    await callDeviceTool(r.timer, "schedule_create", { text: "Never", at: "2026-11-30T21:00:00+08:00" }, context());
    assert.equal(await callDeviceTool(r.timer, "schedule_cancel", { id: "s2" }, context()), "Cancelled s2 (Never)");
    r.clock.advance(11 * 3_600_000 - 1);
    assert.equal(r.fired.length, 0, "not a millisecond early");
    r.clock.advance(1);
    assert.equal(r.fired.length, 1);
    const [event] = r.fired;
    assert.equal(event!.source, "timer:s1");
    assert.equal(event!.sender, "alice");
    assert.equal(event!.trust, "household");
    assert.equal(event!.reply, "qq:private:10001");
    assert.equal(event!.payload.created_by, "alice");
    assert.equal(event!.payload.schedule_text, "Take the medicine");
    assert.match(
      String(event!.payload.text),
      /^\[Scheduled by alice; due 2026-11-30 20:00 \(Asia\/Shanghai\)\] Take the medicine$/,
    );
    r.clock.advance(3 * 3_600_000);
    assert.equal(r.fired.length, 1, "once, and the cancelled one never");
    assert.deepEqual(r.timer.list(), []);
  } finally {
    await r.close();
  }
});

Deno.test("a recurring schedule fires at each run; a DST spring-forward gap is handled by the cron library", async () => {
  // Berlin: 2026-03-29 02:00 → 03:00. "30 2 * * *" has no 02:30 that day.
  const r = await rig({ start: Date.parse("2026-03-27T12:00:00Z") });
  try {
    await callDeviceTool(r.timer, "schedule_create", {
      text: "Night check",
      cron: "30 2 * * *",
      timezone: "Europe/Berlin",
    }, context());
    r.clock.advance(4 * 86_400_000);
    const times = r.fired.map((event) => new Date(event.time).toISOString());
    assert.deepEqual(times, [
      "2026-03-28T01:30:00.000Z", // 02:30 CET
      "2026-03-29T01:00:00.000Z", // the gap: 03:00 CEST, once
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
      "2026-03-31T00:30:00.000Z",
    ]);
    assert.match(String(r.fired[0]!.payload.text), /repeating 30 2 \* \* \* \(Europe\/Berlin\)/);
    assert.equal(r.store.get("s1")!.runs, 4);
  } finally {
    await r.close();
  }
});

Deno.test("on the DST fall-back night a daily 02:30 runs once, not in both 02:30s", async () => {
  // Berlin: 2026-10-25 03:00 CEST → 02:00 CET; 02:30 happens twice.
  const r = await rig({ start: Date.parse("2026-10-24T12:00:00Z") });
  try {
    await callDeviceTool(r.timer, "schedule_create", {
      text: "Night check",
      cron: "30 2 * * *",
      timezone: "Europe/Berlin",
    }, context());
    r.clock.advance(2 * 86_400_000);
    assert.deepEqual(r.fired.map((event) => new Date(event.time).toISOString()), [
      "2026-10-25T00:30:00.000Z", // 02:30 CEST, the first pass
      "2026-10-26T01:30:00.000Z", // 02:30 CET the next day
    ]);
  } finally {
    await r.close();
  }
});

Deno.test("a wall time without an offset is the household's: 20:00 in Shanghai, shown back as local", async () => {
  const r = await rig();
  try {
    const made = await callDeviceTool(r.timer, "schedule_create", { text: "x", at: "2026-12-01T20:00" }, context());
    const view = JSON.parse(typeof made === "string" ? made : JSON.stringify(made));
    assert.equal(view.next_run, "2026-12-01T12:00:00.000Z");
    assert.equal(view.next_run_local, "2026-12-01 20:00 (Asia/Shanghai)");
  } finally {
    await r.close();
  }
});

Deno.test("bad times are refused naming the field: past, not ISO, both, neither, bad cron, bad zone, channels", async () => {
  const r = await rig();
  try {
    const create = (args: Record<string, unknown>, ctx = context()) => () =>
      callDeviceTool(r.timer, "schedule_create", { text: "x", ...args }, ctx);
    await assert.rejects(
      create({ at: "2026-11-30T08:59:00+08:00" }),
      /^TypeError: at: 2026-11-30T08:59:00\+08:00 is in the past/,
    );
    await assert.rejects(
      create({ at: "2026-12-01 20:00" }),
      /at: got "2026-12-01 20:00"; allowed: an ISO-8601 time, with its offset .* or without one for the household's zone Asia\/Shanghai/,
    );
    await assert.rejects(create({ at: "2026-12-01T20:00:00+08:00", cron: "0 7 * * *" }), /at, cron: both were given/);
    await assert.rejects(create({}), /at, cron: neither was given/);
    await assert.rejects(
      create({ cron: "61 * * * *" }),
      /cron: got "61 \* \* \* \*"; allowed: 5 fields.*Invalid value for minute: 61/,
    );
    await assert.rejects(
      create({ cron: "0 0 * * * *" }),
      /cron: got "0 0 \* \* \* \*"; allowed: 5 fields.*requires exactly 5 parts/,
    );
    await assert.rejects(
      create({ cron: "0 7 * * *", timezone: "Mars/Base" }),
      /timezone: got "Mars\/Base"; allowed: an IANA time zone/,
    );
    await assert.rejects(
      create({ at: "2026-12-01T20:00:00+08:00", channel: "qq:group:555" }, context("alice", "household", "http")),
      /channel: only the owner may schedule for another channel \(qq:group:555\); yours is http/,
    );
    await assert.rejects(
      create({ at: "2026-12-01T20:00:00+08:00", channel: "nowhere" }),
      /channel: Channel "nowhere" does not exist/,
    );
    assert.equal(r.store.count(), 0, "nothing was stored");
    // The owner may target another channel.
    await callDeviceTool(r.timer, "schedule_create", {
      text: "x",
      at: "2026-12-01T20:00:00+08:00",
      channel: "qq:group:555",
    }, context());
    await assert.rejects(
      () => callDeviceTool(r.timer, "schedule_cancel", { id: "s1" }, context("alice", "household")),
      /id: schedule s1 belongs to owner; only they or the owner may cancel it/,
    );
    await assert.rejects(
      () => callDeviceTool(r.timer, "schedule_cancel", { id: "s9" }, context()),
      /id: no active schedule "s9"/,
    );
    assert.deepEqual(
      await callDeviceTool(r.timer, "schedule_list", {}, context("alice", "household")),
      [],
      "alice sees her own only",
    );
  } finally {
    await r.close();
  }
});

Deno.test("after a restart: a missed one-shot fires once, late; a recurring one fires its latest run once, not each", async () => {
  const r = await rig();
  try {
    await callDeviceTool(r.timer, "schedule_create", { text: "Oven off?", at: "2026-11-30T09:20:00+08:00" }, context());
    await callDeviceTool(r.timer, "schedule_create", { text: "Weather", cron: "0 * * * *" }, context());
    await callDeviceTool(r.timer, "schedule_create", { text: "Soon", at: "2026-11-30T09:10:00+08:00" }, context());
    // homed is down from 09:05 to 12:45 (a crash, or a machine asleep): 10:00, 11:00 and 12:00 are missed.
    r.clock.advance(5 * 60_000);
    await r.timer.stop();
    r.clock.advance(3 * 3_600_000 + 40 * 60_000);
    await r.reopen();
    const texts = r.fired.map((event) => String(event.payload.text));
    assert.equal(texts.length, 3, texts.join("\n"));
    assert.match(texts[0]!, /due 2026-11-30 09:10.*late by 215 minutes.*\] Soon$/);
    assert.match(texts[1]!, /due 2026-11-30 09:20.*late by 205 minutes.*\] Oven off\?$/);
    assert.match(texts[2]!, /due 2026-11-30 12:00.*late by 45 minutes.*\] Weather$/, "the latest missed run, once");
    assert.equal(r.fired[0]!.payload.late_minutes, 215);
    assert.equal(new Date(r.store.get("s2")!.nextRun!).toISOString(), "2026-11-30T05:00:00.000Z", "then 13:00");
    r.clock.advance(15 * 60_000);
    assert.equal(r.fired.length, 4);
    assert.doesNotMatch(String(r.fired[3]!.payload.text), /late/);
    await r.reopen();
    r.clock.advance(1_000);
    assert.equal(r.fired.length, 4, "nothing fires twice after another restart");
  } finally {
    await r.close();
  }
});

Deno.test("a recurring schedule whose latest missed run is over an hour old skips to its next run", async () => {
  const r = await rig();
  try {
    await callDeviceTool(r.timer, "schedule_create", { text: "Weather", cron: "0 10 * * *" }, context());
    await r.timer.stop();
    r.clock.advance(4 * 3_600_000); // down over 10:00, back at 13:00
    await r.reopen();
    assert.equal(r.fired.length, 0);
    assert.equal(new Date(r.store.get("s1")!.nextRun!).toISOString(), "2026-12-01T02:00:00.000Z");
  } finally {
    await r.close();
  }
});

Deno.test("a recurring schedule missed by less than an hour fires once, late, then keeps its times", async () => {
  const r = await rig();
  try {
    await callDeviceTool(r.timer, "schedule_create", { text: "Weather", cron: "0 10 * * *" }, context());
    await r.timer.stop();
    r.clock.advance(80 * 60_000); // down over 10:00, back at 10:20
    await r.reopen();
    assert.equal(r.fired.length, 1);
    assert.match(String(r.fired[0]!.payload.text), /late by 20 minutes/);
    assert.equal(new Date(r.store.get("s1")!.nextRun!).toISOString(), "2026-12-01T02:00:00.000Z");
  } finally {
    await r.close();
  }
});

Deno.test("1,000 schedules due within one minute are all delivered once, in time order", async () => {
  const r = await rig();
  try {
    for (let i = 0; i < 1_000; i++) {
      // Spread over 60 s, created in a shuffled order.
      const offsetMs = ((i * 7_919) % 1_000) * 60;
      const at = new Date(START + 3_600_000 + offsetMs).toISOString();
      await callDeviceTool(r.timer, "schedule_create", { text: `n${(i * 7_919) % 1_000}`, at }, context());
    }
    r.clock.advance(3_600_000 + 60_000);
    assert.equal(r.fired.length, 1_000);
    assert.deepEqual(
      r.fired.map((event) => event.payload.text).map((text) => String(text).split("] ")[1]),
      [
        ...Array(1_000).keys(),
      ].map((n) => `n${n}`),
    );
    assert.equal(new Set(r.fired.map((event) => event.source)).size, 1_000, "each once");
    assert.equal(r.store.count(), 0);
  } finally {
    await r.close();
  }
});

Deno.test("a firing refused because homed is stopping is undone and happens on the next start", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-timer-" });
  const stopping = await rig({ refuse: true, dir });
  await callDeviceTool(
    stopping.timer,
    "schedule_create",
    { text: "Later", at: "2026-11-30T09:01:00+08:00" },
    context(),
  );
  stopping.clock.advance(60_000);
  assert.equal(stopping.fired.length, 0);
  assert.equal(stopping.store.count(), 1, "still to fire");
  await stopping.close();
  const next = await rig({ dir, start: START + 120_000 });
  try {
    assert.equal(next.fired.length, 1);
    assert.match(String(next.fired[0]!.payload.text), /\] Later$/);
  } finally {
    await next.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("through the tool registry: a guest may not schedule, a household member may", async () => {
  const r = await rig();
  const tools = new ToolRegistry();
  const io = new IOManager({
    clock: r.clock,
    routes: new RouteTable({}, {}, undefined),
    tools,
    logger: getLogger("test"),
  });
  try {
    await io.replaceDevices([r.timer]);
    const args = JSON.stringify({ text: "Feed the cat", at: "2026-11-30T18:00:00+08:00" });
    const refused = await tools.call("schedule_create", args, context("visitor", "guest"));
    assert.equal(refused.ok, false);
    assert.match(
      refused.content,
      /tool "schedule_create" is for household members and the owner; this message came from/,
    );
    const made = await tools.call("schedule_create", args, context("alice", "household"));
    assert.equal(made.ok, true, made.content);
    assert.equal(r.store.count(), 1);
  } finally {
    await io.close();
    await r.close();
  }
});

Deno.test("one member cannot fill the schedules: per-person count and hour limits, and the owner's reserve", async () => {
  const r = await rig();
  try {
    const alice = context("alice", "household");
    const inMinutes = (minutes: number) => new Date(START + minutes * 60_000).toISOString();
    // 20 within an hour of each other are allowed; the 21st in that hour is refused, one two hours later is not.
    for (let i = 0; i < 20; i++) {
      await callDeviceTool(r.timer, "schedule_create", { text: `a${i}`, at: inMinutes(60 + i) }, alice);
    }
    await assert.rejects(
      () => callDeviceTool(r.timer, "schedule_create", { text: "flood", at: inMinutes(90) }, alice),
      new RegExp(
        `^Error: alice already has 20 schedules due within an hour of ${
          new Date(START + 90 * 60_000).toISOString().replaceAll(".", "\\.")
        }; one person may have at most 20 within an hour of each other$`,
      ),
    );
    await callDeviceTool(r.timer, "schedule_create", { text: "later", at: inMinutes(60 + 19 + 61) }, alice);
    // The owner is not held to a person's limits.
    await callDeviceTool(r.timer, "schedule_create", { text: "owner's", at: inMinutes(90) }, context());
    assert.equal(r.store.count({ creator: "alice" }), 21);
  } finally {
    await r.close();
  }
});

Deno.test("a person's active count is capped, and the last of the global cap is kept for the owner", async () => {
  const r = await rig({});
  try {
    const timer = new TimerDevice({
      store: r.store,
      clock: r.clock,
      timezone: "Asia/Shanghai",
      checkChannel: () => undefined,
      logger: getLogger("test"),
      maxActive: 12,
      personLimits: { active: 5, perHour: 100, ownerReserve: 3 },
    });
    const at = (day: number) => new Date(START + day * 86_400_000).toISOString();
    for (let day = 1; day <= 5; day++) {
      await callDeviceTool(timer, "schedule_create", { text: "b", at: at(day) }, context("bob", "household"));
    }
    await assert.rejects(
      () => callDeviceTool(timer, "schedule_create", { text: "b6", at: at(6) }, context("bob", "household")),
      /^Error: bob already has 5 active schedules, the most one person may have \(5\); cancel some first/,
    );
    for (let day = 1; day <= 4; day++) {
      await callDeviceTool(timer, "schedule_create", { text: "c", at: at(day) }, context("carol", "household"));
    }
    // 9 active of 12, 3 kept for the owner: carol's fifth is refused, the owner's three go in.
    await assert.rejects(
      () => callDeviceTool(timer, "schedule_create", { text: "c5", at: at(5) }, context("carol", "household")),
      /^Error: There are already 9 active schedules; the last 3 of 12 are kept for the owner$/,
    );
    for (let day = 1; day <= 3; day++) {
      await callDeviceTool(timer, "schedule_create", { text: "o", at: at(day) }, context());
    }
    assert.equal(r.store.count(), 12);
  } finally {
    await r.close();
  }
});

Deno.test("a member who switched the reply channel still schedules only for the channel she asked on", async () => {
  const r = await rig();
  try {
    const alice = context("alice", "household", "qq:private:10001");
    alice.setReplyChannel("qq:group:555");
    const byDefault = await callDeviceTool(
      r.timer,
      "schedule_create",
      { text: "x", at: "2026-12-01T20:00:00+08:00" },
      alice,
    ) as { channel: string };
    assert.equal(byDefault.channel, "qq:private:10001", "by default where she asked, not where the reply was switched");
    await assert.rejects(
      () =>
        callDeviceTool(r.timer, "schedule_create", {
          text: "x",
          at: "2026-12-01T20:00:00+08:00",
          channel: "qq:group:555",
        }, alice),
      /^Error: channel: only the owner may schedule for another channel \(qq:group:555\); yours is qq:private:10001$/,
    );
    const made = await callDeviceTool(r.timer, "schedule_create", {
      text: "x",
      at: "2026-12-01T20:00:00+08:00",
      channel: "qq:private:10001",
    }, alice) as { channel: string };
    assert.equal(made.channel, "qq:private:10001");
  } finally {
    await r.close();
  }
});

Deno.test("a store that cannot be read while a schedule is made does not end the timer's wake-ups", async () => {
  const r = await rig();
  try {
    const soonest = r.store.soonest.bind(r.store);
    let failOnce = true;
    r.store.soonest = () => {
      if (failOnce) {
        failOnce = false;
        throw new Error("SQLITE_BUSY: database is locked");
      }
      return soonest();
    };
    // Made at 09:00 for 09:10: the re-arm after storing it cannot read the store.
    await callDeviceTool(r.timer, "schedule_create", { text: "Tea", at: "2026-11-30T09:10:00+08:00" }, context());
    assert.equal(failOnce, false, "the failing read happened");
    assert.equal(r.timer.status().failed_firings, 1);
    r.clock.advance(10 * 60_000);
    assert.deepEqual(r.fired.map((event) => event.payload.schedule_text), ["Tea"], "fired on time all the same");
  } finally {
    await r.close();
  }
});

Deno.test("the watchdog measures silence on the monotonic clock: a wall clock set forward is no stall", async () => {
  const clock = new FakeClock(START);
  let jumped = 0;
  // NTP (or a box resumed from sleep) sets the wall clock an hour forward; the monotonic clock and timers go on.
  const jumpy = {
    now: () => clock.now() + jumped,
    monotonic: () => clock.monotonic(),
    sleep: (ms: number, signal?: AbortSignal) => clock.sleep(ms, signal),
    after: (ms: number, callback: () => void) => clock.after(ms, callback),
  };
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-timer-" });
  const store = ScheduleStore.open(join(dir, "schedules.db"));
  const timer = new TimerDevice({
    store,
    clock: jumpy,
    timezone: "Asia/Shanghai",
    checkChannel: () => undefined,
    logger: getLogger("test"),
  });
  await timer.start({
    emit: (draft) => ({ id: "e", time: jumpy.now(), ...draft }),
    clock: jumpy,
    log: getLogger("test"),
    readyAgain: () => {},
    waiting: () => 0,
  });
  try {
    clock.advance(30_000);
    jumped = 3_600_000;
    timer.heartbeat();
    assert.equal(timer.status().stalls, 0, "an hour on the wall clock in 30 s is no lost wake-up");
  } finally {
    await timer.stop();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the heartbeat's watchdog wakes a timer whose wake-up was lost, and says so in status", async () => {
  const clock = new FakeClock(START);
  let dropNext = 0;
  // A clock that loses the next wake-ups asked of it: what a stalled timer looks like from inside.
  const lossy = {
    now: () => clock.now(),
    monotonic: () => clock.monotonic(),
    sleep: (ms: number, signal?: AbortSignal) => clock.sleep(ms, signal),
    after: (ms: number, callback: () => void) => dropNext-- > 0 ? () => {} : clock.after(ms, callback),
  };
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-timer-" });
  const store = ScheduleStore.open(join(dir, "schedules.db"));
  const timer = new TimerDevice({
    store,
    clock: lossy,
    timezone: "Asia/Shanghai",
    checkChannel: () => undefined,
    logger: getLogger("test"),
  });
  const fired: InputDraft[] = [];
  await timer.start({
    emit: (draft) => (fired.push(draft), { id: "e", time: clock.now(), ...draft }),
    clock: lossy,
    log: getLogger("test"),
    readyAgain: () => {},
    waiting: () => 0,
  });
  try {
    dropNext = 1;
    await callDeviceTool(timer, "schedule_create", { text: "Tea", at: "2026-11-30T09:01:00+08:00" }, context());
    clock.advance(2 * 60_000);
    timer.heartbeat();
    assert.equal(fired.length, 0, "two minutes without a wake-up are not yet taken as a stall");
    assert.equal(timer.status().stalls, 0);
    clock.advance(60_000);
    timer.heartbeat();
    assert.deepEqual(fired.map((draft) => draft.payload.schedule_text), ["Tea"], "woken by the watchdog");
    assert.equal(timer.status().stalls, 1);
    assert.equal(timer.status().last_wake, new Date(clock.now()).toISOString());
    // Wake-ups go on by themselves afterwards.
    await callDeviceTool(timer, "schedule_create", { text: "Cake", at: "2026-11-30T09:05:00+08:00" }, context());
    clock.advance(2 * 60_000);
    assert.deepEqual(fired.map((draft) => draft.payload.schedule_text), ["Tea", "Cake"]);
  } finally {
    await timer.stop();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("people: a member schedules for her own chats elsewhere ('remind me on QQ', asked on WeChat), never another's", async () => {
  const r = await rig({ people: { alice: ["qq:private:10001", "weixin:private:o9alice@im.wechat"] } });
  try {
    const alice = context("alice", "household", "weixin:private:o9alice@im.wechat");
    const made = await callDeviceTool(r.timer, "schedule_create", {
      text: "dentist",
      at: "2026-12-01T20:00:00+08:00",
      channel: "qq:private:10001",
    }, alice) as { channel: string };
    assert.equal(made.channel, "qq:private:10001");
    await assert.rejects(
      () =>
        callDeviceTool(r.timer, "schedule_create", {
          text: "x",
          at: "2026-12-01T20:00:00+08:00",
          channel: "qq:private:10002",
        }, alice),
      /^Error: channel: only the owner may schedule for another channel \(qq:private:10002\); yours are weixin:private:o9alice@im\.wechat, qq:private:10001$/,
    );
  } finally {
    await r.close();
  }
});
