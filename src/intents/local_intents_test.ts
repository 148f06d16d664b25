import assert from "node:assert/strict";
import { systemClock } from "../clock.ts";
import { type HaEntityView, haTargets } from "../devices/home_assistant/ha_targets.ts";
import type { ToolOutcome } from "../tools/tool.ts";
import { EMBEDDED_INTENT_FILES } from "./embedded_intents.ts";
import { LocalIntents, type LocalTurn } from "./local_intents.ts";
import { IntentMatcher } from "./matcher.ts";

const MATCHER = IntentMatcher.compile(EMBEDDED_INTENT_FILES);
// Friday 2026-12-04 10:30 in Shanghai.
const NOW = Date.UTC(2026, 11, 4, 2, 30);

function entity(
  id: string,
  name: string,
  aliases: string[],
  area: [string, ...string[]],
  state: string,
  attributes: Record<string, unknown> = {},
): HaEntityView {
  return {
    id,
    name,
    aliases,
    area: { name: area[0], aliases: area.slice(1) },
    floor: undefined,
    current: () => ({ state, attributes }),
  };
}

const TARGETS = haTargets([
  entity("light.ke_ting", "客厅灯", ["Living room light"], ["客厅", "Living room"], "off"),
  entity("light.chu_fang", "厨房灯", ["Kitchen light"], ["厨房", "Kitchen"], "on"),
  entity("climate.ke_ting", "空调", ["thermostat"], ["客厅", "Living room"], "cool", {
    current_temperature: 23.5,
    temperature_unit: "°C",
    min_temp: 16,
    max_temp: 30,
  }),
  entity("sensor.wo_shi_humidity", "卧室湿度", ["Bedroom humidity"], ["卧室", "Bedroom"], "48", {
    device_class: "humidity",
    unit_of_measurement: "%",
  }),
  entity("lock.qian_men", "前门", ["front door"], ["玄关", "Hallway"], "locked"),
]);

/** A turn whose tool calls are recorded and answered by `answer`. */
function turn(
  answer: (tool: string, args: Record<string, unknown>) => ToolOutcome = () => ({ ok: true, content: "ok" }),
) {
  const calls: Array<{ tool: string; args: Record<string, unknown> }> = [];
  const local: LocalTurn = {
    call: (tool, args) => {
      calls.push({ tool, args });
      return Promise.resolve(answer(tool, args));
    },
    sender: "alice",
    trust: "household",
  };
  return { calls, local };
}

function intents(persona = "你是管家阿福。You are Alfred, the butler; answer in the language you are addressed in.") {
  return new LocalIntents({
    matcher: MATCHER,
    targets: () => TARGETS,
    clock: { ...systemClock, now: () => NOW },
    timezone: "Asia/Shanghai",
    persona: () => persona,
    modelUp: () => false,
  });
}

async function ask(text: string, answer?: Parameters<typeof turn>[0], persona?: string) {
  const local = intents(persona);
  const understood = local.understand(text, { open: true });
  assert.ok(understood, `understood: ${text}`);
  const { calls, local: lt } = turn(answer);
  return { reply: await local.run(understood, lt), calls, understood };
}

Deno.test("a device command is one tool call per thing, answered in the language it was said in", async () => {
  const zh = await ask("打开客厅的灯");
  assert.deepEqual(zh.calls, [{
    tool: "ha_call_service",
    args: { domain: "light", service: "turn_on", entity_id: "light.ke_ting" },
  }]);
  assert.equal(zh.reply, "好的，已打开客厅灯。");
  const en = await ask("set the thermostat to 22 degrees");
  assert.deepEqual(en.calls[0]?.args, {
    domain: "climate",
    service: "set_temperature",
    entity_id: "climate.ke_ting",
    data: { temperature: 22 },
  });
  assert.equal(en.reply, "Done: thermostat set to 22°.");
  const persona = await ask("turn off the kitchen light", undefined, "你是管家阿福。");
  assert.equal(persona.reply, "好的，已关闭厨房灯。", "a Chinese-only persona answers in Chinese");
});

Deno.test("a number out of range and an unknown device are refused naming the range or the known names", async () => {
  const range = await ask("把空调调到40度");
  assert.deepEqual(range.calls, []);
  assert.equal(range.reply, "没有执行：温度 40° 超出范围，只能在 16–30° 之间。");
  const bright = await ask("set the living room light to 300%");
  assert.deepEqual(bright.calls, []);
  assert.match(bright.reply, /brightness 300% is out of range; it goes from 0 to 100%/);
  const unknown = await ask("turn on the sauna");
  assert.deepEqual(unknown.calls, []);
  assert.match(unknown.reply, /I don't know a device called "sauna"/);
});

Deno.test("held, failed and done are each said; a held call is never said to be done", async () => {
  const held = await ask("unlock the front door", () => ({ ok: true, content: "asked the owner", held: true }));
  assert.deepEqual(held.calls[0]?.args, { domain: "lock", service: "unlock", entity_id: "lock.qian_men" });
  assert.equal(
    held.reply,
    "To unlock front door I need the owner's yes; I have asked, and it happens only if they agree.",
  );
  const failed = await ask(
    "turn on the kitchen light",
    () => ({ ok: false, content: "Error: Home Assistant is not connected" }),
  );
  assert.equal(failed.reply, "Could not turn on Kitchen light: Home Assistant is not connected");
});

Deno.test("states and readings: yes/no questions and a room's measurement", async () => {
  assert.equal((await ask("is the front door locked?")).reply, "Yes, front door is locked.");
  assert.equal((await ask("客厅现在多少度")).reply, "客厅现在温度：23.5°C。");
  assert.equal((await ask("卧室湿度多少")).reply, "卧室湿度现在是 48 %。", "a named sensor's own reading");
  assert.equal((await ask("卧室现在湿度多少")).reply, "卧室现在湿度：48 %。", "a room's humidity");
  assert.deepEqual((await ask("客厅现在多少度")).calls, [], "reading a state calls nothing");
});

Deno.test("reminders: create (once and repeating) through schedule_create, list and cancel by what they say", async () => {
  const created = (tool: string) => ({
    ok: true,
    content: tool === "schedule_create"
      ? JSON.stringify({ id: "s-1a2b3c4d", next_run: "2026-12-04T11:00:00.000Z" })
      : "ok",
  });
  const once = await ask("remind me at 7 pm to call mum", created);
  assert.deepEqual(once.calls, [{
    tool: "schedule_create",
    args: { text: "call mum", at: "2026-12-04T19:00:00+08:00" },
  }]);
  assert.equal(once.reply, "OK, I'll remind you 4 Dec 19:00: call mum (s-1a2b3c4d).");
  const soon = await ask("提醒我二十分钟后关火", created);
  assert.deepEqual(soon.calls[0]?.args, { text: "关火", at: "2026-12-04T10:50:00+08:00" });
  const weekdays = await ask("每个工作日早上七点叫我", created);
  assert.deepEqual(weekdays.calls[0]?.args, { text: "起床", cron: "0 7 * * 1-5", timezone: "Asia/Shanghai" });
  assert.equal(weekdays.reply, "好的，每个工作日 07:00 提醒你：起床（编号 s-1a2b3c4d）。");

  const list = JSON.stringify([
    { id: "s-1", text: "关火", next_run: "2026-12-04T02:50:00.000Z" },
    { id: "s-2", text: "给妈妈打电话", next_run: "2026-12-04T11:00:00.000Z" },
  ]);
  const schedules = (tool: string) =>
    tool === "schedule_list" ? { ok: true, content: list } : { ok: true, content: "Cancelled s-2 (给妈妈打电话)" };
  const listed = await ask("我有哪些提醒", schedules);
  assert.equal(listed.reply, "你有 2 个提醒：\n- 12月4日 10:50：关火（s-1）\n- 12月4日 19:00：给妈妈打电话（s-2）");
  const cancelled = await ask("取消给妈妈打电话的提醒", schedules);
  assert.deepEqual(cancelled.calls.map((call) => call.tool), ["schedule_list", "schedule_cancel"]);
  assert.deepEqual(cancelled.calls[1]?.args, { id: "s-2" });
  assert.equal(cancelled.reply, "好的，已取消提醒 s-2：给妈妈打电话。");
  const none = await ask("取消交电费的提醒", schedules);
  assert.equal(none.calls.length, 1, "nothing to cancel: only listed");
  assert.match(none.reply, /没有找到「交电费」的提醒/);
});

Deno.test("the time and what can be done without a model", async () => {
  assert.equal((await ask("现在几点")).reply, "现在是 12月4日 星期五 10:30。");
  assert.equal((await ask("what time is it")).reply, "It is 10:30, Friday 4 December 2026.");
  const help = await ask("what can you do right now");
  assert.match(help.reply, /^The language model is not answering right now\./);
  assert.match(help.reply, /climate, light, lock, sensor/);
});

Deno.test("a sure match is one that names what exists; unknown or broad ones are not sure", () => {
  const local = intents();
  assert.equal(local.understand("打开客厅的灯", { open: false })?.sure, true);
  assert.equal(local.understand("turn on the sauna", { open: false }), undefined, "closed pass: no match");
  assert.equal(local.understand("turn on the sauna", { open: true })?.sure, false);
  assert.equal(local.understand("tell me a joke", { open: true }), undefined);
  assert.equal(local.understand("what's the capital of France", { open: true }), undefined, "no question of a device");
  assert.deepEqual(local.counts(), { matched: 2, answered: 0, unmatched: 3 });
});
