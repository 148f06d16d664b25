import assert from "node:assert/strict";
import type { When } from "./intent.ts";
import { tokenTexts } from "./tokens.ts";
import { parseWhen } from "./when.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The readings of the whole of `text`. */
function whole(text: string, language: "zh" | "en"): When[] {
  const tokens = tokenTexts(text);
  return parseWhen(tokens, 0, language).filter((parse) => parse.end === tokens.length).map((parse) => parse.when);
}

const ZH: [string, When][] = [
  ["二十分钟后", { kind: "in", ms: 20 * MINUTE }],
  ["20分钟以后", { kind: "in", ms: 20 * MINUTE }],
  ["半小时后", { kind: "in", ms: 30 * MINUTE }],
  ["半个小时之后", { kind: "in", ms: 30 * MINUTE }],
  ["一个半小时后", { kind: "in", ms: 90 * MINUTE }],
  ["10秒后", { kind: "in", ms: 10_000 }],
  ["两个小时后", { kind: "in", ms: 2 * HOUR }],
  ["1.5小时后", { kind: "in", ms: 90 * MINUTE }],
  ["一小时二十分钟后", { kind: "in", ms: 80 * MINUTE }],
  ["一刻钟后", { kind: "in", ms: 15 * MINUTE }],
  ["过十分钟", { kind: "in", ms: 10 * MINUTE }],
  ["三天后", { kind: "in", ms: 72 * HOUR }],
  ["明天早上八点", { kind: "at", hour: 8, minute: 0, day: { relative: 1 } }],
  ["今晚七点半", { kind: "at", hour: 19, minute: 30, day: { relative: 0 } }],
  ["下午3点15", { kind: "at", hour: 15, minute: 15, day: "next" }],
  ["下午三点十五分", { kind: "at", hour: 15, minute: 15, day: "next" }],
  ["晚上十点", { kind: "at", hour: 22, minute: 0, day: "next" }],
  ["七点", { kind: "at", hour: 7, minute: 0, day: "next" }],
  ["19:30", { kind: "at", hour: 19, minute: 30, day: "next" }],
  ["后天上午九点", { kind: "at", hour: 9, minute: 0, day: { relative: 2 } }],
  ["周五下午两点", { kind: "at", hour: 14, minute: 0, day: { weekday: 5 } }],
  ["星期一早上七点", { kind: "at", hour: 7, minute: 0, day: { weekday: 1 } }],
  ["礼拜天晚上八点", { kind: "at", hour: 20, minute: 0, day: { weekday: 0 } }],
  ["12月25日上午十点", { kind: "at", hour: 10, minute: 0, day: { month: 12, date: 25 } }],
  ["3月8号下午2点", { kind: "at", hour: 14, minute: 0, day: { month: 3, date: 8 } }],
  ["中午一点", { kind: "at", hour: 13, minute: 0, day: "next" }],
  ["中午十二点", { kind: "at", hour: 12, minute: 0, day: "next" }],
  ["明天中午", { kind: "at", hour: 12, minute: 0, day: { relative: 1 } }],
  ["凌晨十二点", { kind: "at", hour: 0, minute: 0, day: "next" }],
  ["凌晨五点", { kind: "at", hour: 5, minute: 0, day: "next" }],
  ["今晚十二点", { kind: "at", hour: 0, minute: 0, day: { relative: 1 } }],
  ["八点一刻", { kind: "at", hour: 8, minute: 15, day: "next" }],
  ["八点三刻", { kind: "at", hour: 8, minute: 45, day: "next" }],
  ["七点零五", { kind: "at", hour: 7, minute: 5, day: "next" }],
  ["八点钟", { kind: "at", hour: 8, minute: 0, day: "next" }],
  ["明早七点", { kind: "at", hour: 7, minute: 0, day: { relative: 1 } }],
  ["每天早上七点", { kind: "every", hour: 7, minute: 0, days: "daily" }],
  ["每晚十点", { kind: "every", hour: 22, minute: 0, days: "daily" }],
  ["每个工作日早上七点", { kind: "every", hour: 7, minute: 0, days: "weekdays" }],
  ["工作日早上7点", { kind: "every", hour: 7, minute: 0, days: "weekdays" }],
  ["每周六上午十点", { kind: "every", hour: 10, minute: 0, days: [6] }],
  ["每周一三五早上8点", { kind: "every", hour: 8, minute: 0, days: [1, 3, 5] }],
  ["每周一和周三晚上七点", { kind: "every", hour: 19, minute: 0, days: [1, 3] }],
  ["每个星期天下午三点", { kind: "every", hour: 15, minute: 0, days: [0] }],
  ["周末早上九点", { kind: "every", hour: 9, minute: 0, days: "weekends" }],
  ["每周末早上九点", { kind: "every", hour: 9, minute: 0, days: "weekends" }],
];

const EN: [string, When][] = [
  ["in 20 minutes", { kind: "in", ms: 20 * MINUTE }],
  ["in twenty minutes", { kind: "in", ms: 20 * MINUTE }],
  ["in half an hour", { kind: "in", ms: 30 * MINUTE }],
  ["in an hour and a half", { kind: "in", ms: 90 * MINUTE }],
  ["in one and a half hours", { kind: "in", ms: 90 * MINUTE }],
  ["in 10 seconds", { kind: "in", ms: 10_000 }],
  ["in an hour", { kind: "in", ms: HOUR }],
  ["in 2 hours and 30 minutes", { kind: "in", ms: 150 * MINUTE }],
  ["in a quarter of an hour", { kind: "in", ms: 15 * MINUTE }],
  ["20 minutes from now", { kind: "in", ms: 20 * MINUTE }],
  ["at 7 pm", { kind: "at", hour: 19, minute: 0, day: "next" }],
  ["at 7pm", { kind: "at", hour: 19, minute: 0, day: "next" }],
  ["at 7 p.m.", { kind: "at", hour: 19, minute: 0, day: "next" }],
  ["at 7:30", { kind: "at", hour: 7, minute: 30, day: "next" }],
  ["at 19:30", { kind: "at", hour: 19, minute: 30, day: "next" }],
  ["at seven thirty pm", { kind: "at", hour: 19, minute: 30, day: "next" }],
  ["at 12 am", { kind: "at", hour: 0, minute: 0, day: "next" }],
  ["at 12 pm", { kind: "at", hour: 12, minute: 0, day: "next" }],
  ["tomorrow at 8 am", { kind: "at", hour: 8, minute: 0, day: { relative: 1 } }],
  ["tomorrow morning at 8", { kind: "at", hour: 8, minute: 0, day: { relative: 1 } }],
  ["tomorrow evening at 8", { kind: "at", hour: 20, minute: 0, day: { relative: 1 } }],
  ["the day after tomorrow at 9 am", { kind: "at", hour: 9, minute: 0, day: { relative: 2 } }],
  ["tonight at 9", { kind: "at", hour: 21, minute: 0, day: { relative: 0 } }],
  ["at 9 tonight", { kind: "at", hour: 21, minute: 0, day: { relative: 0 } }],
  ["at 7 pm tomorrow", { kind: "at", hour: 19, minute: 0, day: { relative: 1 } }],
  ["on friday at 2 pm", { kind: "at", hour: 14, minute: 0, day: { weekday: 5 } }],
  ["on december 25 at 10 am", { kind: "at", hour: 10, minute: 0, day: { month: 12, date: 25 } }],
  ["on the 25th of december at 10 am", { kind: "at", hour: 10, minute: 0, day: { month: 12, date: 25 } }],
  ["at noon", { kind: "at", hour: 12, minute: 0, day: "next" }],
  ["at midnight", { kind: "at", hour: 0, minute: 0, day: "next" }],
  ["at half past seven", { kind: "at", hour: 7, minute: 30, day: "next" }],
  ["at quarter past seven", { kind: "at", hour: 7, minute: 15, day: "next" }],
  ["at quarter to eight", { kind: "at", hour: 7, minute: 45, day: "next" }],
  ["at ten past six in the evening", { kind: "at", hour: 18, minute: 10, day: "next" }],
  ["every day at 7 am", { kind: "every", hour: 7, minute: 0, days: "daily" }],
  ["every morning at 7", { kind: "every", hour: 7, minute: 0, days: "daily" }],
  ["every weekday at 7", { kind: "every", hour: 7, minute: 0, days: "weekdays" }],
  ["on weekdays at 7 am", { kind: "every", hour: 7, minute: 0, days: "weekdays" }],
  ["every saturday at 10", { kind: "every", hour: 10, minute: 0, days: [6] }],
  ["every monday and friday at 8 am", { kind: "every", hour: 8, minute: 0, days: [1, 5] }],
  ["on weekends at 9", { kind: "every", hour: 9, minute: 0, days: "weekends" }],
  ["at 7 am every day", { kind: "every", hour: 7, minute: 0, days: "daily" }],
];

Deno.test("parseWhen reads Chinese delays, times of day and repetitions", () => {
  for (const [text, when] of ZH) assert.deepEqual(whole(text, "zh")[0], when, text);
});

Deno.test("parseWhen reads English delays, times of day and repetitions", () => {
  for (const [text, when] of EN) assert.deepEqual(whole(text, "en")[0], when, text);
});

Deno.test("parseWhen does not read impossible or incomplete times", () => {
  for (
    const text of [
      "25点",
      "七点61分",
      "2月30日上午十点",
      "13月1日八点",
      "早上十五点",
      "明天",
      "今晚",
      "几分钟后",
      "分钟后",
    ]
  ) {
    assert.deepEqual(whole(text, "zh"), [], text);
  }
  for (const text of ["at 25", "at 7:61", "at 13 pm", "tomorrow", "in a few minutes", "on february 30 at 7 am", "in"]) {
    assert.deepEqual(whole(text, "en"), [], text);
  }
});

Deno.test("parseWhen starts anywhere and reports where it ends, longest first", () => {
  const tokens = tokenTexts("提醒我明天早上八点半开会");
  const parses = parseWhen(tokens, 3, "zh");
  assert.deepEqual(parses[0], { when: { kind: "at", hour: 8, minute: 30, day: { relative: 1 } }, end: 10 });
  assert.ok(parses.some((parse) => parse.end === 9 && parse.when.kind === "at" && parse.when.minute === 0));
  assert.deepEqual(parseWhen(tokens, 0, "zh"), []);
  assert.deepEqual(parseWhen(tokens, tokens.length, "zh"), []);
});

Deno.test("parseWhen keeps the languages apart", () => {
  assert.deepEqual(whole("in 20 minutes", "zh"), []);
  assert.deepEqual(whole("二十分钟后", "en"), []);
});
