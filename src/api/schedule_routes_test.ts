import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { callDeviceTool } from "../../tests/support/recording_device.ts";
import { ALICE, GUS, OWNER, routeApi } from "../../tests/support/route_api.ts";
import { ScheduleStore } from "../timer/schedule_store.ts";
import { TimerDevice } from "../timer/timer.ts";
import type { Trust } from "../identity/trust.ts";
import type { ToolContext } from "../tools/tool.ts";
import { scheduleRoutes } from "./schedule_routes.ts";

const BOB = "bob-token-0123456789";

function context(sender: string, trust: Trust): ToolContext {
  return {
    eventId: "x",
    source: "http",
    sender,
    trust,
    signal: new AbortController().signal,
    replyChannel: () => "http",
    setReplyChannel: () => {},
  };
}

async function setup() {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-schedule-api-" });
  const clock = new FakeClock(Date.parse("2026-11-30T09:00:00+08:00"));
  const store = ScheduleStore.open(join(dir, "schedules.db"));
  let ids = 0;
  const timer = new TimerDevice({
    store,
    clock,
    timezone: "Asia/Shanghai",
    checkChannel: () => undefined,
    logger: getLogger(["test"]),
    newId: () => `s${++ids}`,
  });
  const fired: string[] = [];
  await timer.start({
    emit: (draft) => {
      fired.push(String(draft.payload.schedule_text));
      return { id: `e${fired.length}`, time: clock.now(), ...draft };
    },
    clock,
    log: getLogger(["test"]),
    readyAgain: () => {},
    waiting: () => 0,
  });
  const { call } = routeApi([scheduleRoutes(timer)], { people: { bob: { token: BOB, trust: "household" } } });
  const create = (text: string, sender: string, trust: Trust) =>
    callDeviceTool(timer, "schedule_create", { text, at: "2026-11-30T20:00:00+08:00" }, context(sender, trust));
  return {
    clock,
    timer,
    fired,
    call,
    create,
    async [Symbol.asyncDispose]() {
      await timer.stop();
      store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = await response.json();
  return { status: response.status, code: body.error.code, message: body.error.message };
}

Deno.test("a schedule's creator or the owner cancels it; it then never fires and is gone from the list", async () => {
  await using t = await setup();
  await t.create("Take the medicine", "alice", "household"); // s1
  await t.create("Water the plants", "alice", "household"); // s2
  await t.create("Call mum", "owner", "owner"); // s3
  const own = await t.call("DELETE", "/api/schedules/s1", ALICE);
  assert.equal(own.status, 200);
  assert.deepEqual(await own.json(), { cancelled: "s1" });
  const byOwner = await t.call("DELETE", "/api/schedules/s2", OWNER);
  assert.deepEqual(await byOwner.json(), { cancelled: "s2" });
  const listed = await (await t.call("GET", "/api/schedules", OWNER)).json();
  assert.deepEqual(listed.schedules.map((s: { id: string }) => s.id), ["s3"]);
  t.clock.advance(12 * 3_600_000);
  assert.deepEqual(t.fired, ["Call mum"], "the cancelled ones never fire");
});

Deno.test("someone else's schedule is a 403 naming its creator; an unknown or cancelled one a 404; guests are refused", async () => {
  await using t = await setup();
  await t.create("Take the medicine", "alice", "household"); // s1
  await t.create("Call mum", "owner", "owner"); // s2
  assert.deepEqual(await errorOf(await t.call("DELETE", "/api/schedules/s1", BOB)), {
    status: 403,
    code: "forbidden",
    message:
      'Schedule "s1" belongs to "alice"; only they or the owner may cancel it (this request came from "bob", trust household)',
  });
  assert.deepEqual(await errorOf(await t.call("DELETE", "/api/schedules/s2", ALICE)), {
    status: 403,
    code: "forbidden",
    message:
      'Schedule "s2" belongs to "owner"; only they or the owner may cancel it (this request came from "alice", trust household)',
  });
  assert.deepEqual(await errorOf(await t.call("DELETE", "/api/schedules/s1", GUS)), {
    status: 403,
    code: "forbidden",
    message: 'Cancelling a schedule needs trust household or owner; this request came from "gus" (trust guest)',
  });
  assert.deepEqual(await errorOf(await t.call("DELETE", "/api/schedules/s9", OWNER)), {
    status: 404,
    code: "not_found",
    message: 'No active schedule "s9"',
  });
  assert.equal((await t.call("DELETE", "/api/schedules/s1", ALICE)).status, 200);
  assert.equal((await errorOf(await t.call("DELETE", "/api/schedules/s1", ALICE))).status, 404, "cancelled already");
  const long = await errorOf(await t.call("DELETE", `/api/schedules/${"x".repeat(500)}`, OWNER));
  assert.equal(long.status, 400);
  assert.match(long.message, /^Schedule id "x{40}…" has 500 characters; allowed: at most 100$/);
  assert.equal(t.timer.list().length, 1, "only s1 was cancelled");
});

Deno.test("the tool and the endpoint share the rule: the tool's messages are unchanged", async () => {
  await using t = await setup();
  await t.create("Take the medicine", "alice", "household");
  await assert.rejects(
    () => callDeviceTool(t.timer, "schedule_cancel", { id: "s1" }, context("bob", "household")),
    /^Error: id: schedule s1 belongs to alice; only they or the owner may cancel it$/,
  );
  await assert.rejects(
    () => callDeviceTool(t.timer, "schedule_cancel", { id: "s7" }, context("owner", "owner")),
    /^Error: id: no active schedule "s7"; schedule_list shows them$/,
  );
  assert.equal(
    await callDeviceTool(t.timer, "schedule_cancel", { id: "s1" }, context("alice", "household")),
    "Cancelled s1 (Take the medicine)",
  );
});
