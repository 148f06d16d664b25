import assert from "node:assert/strict";
import { namedPeriod } from "./named_period.ts";

const NOW = new Date(2026, 10, 30, 15).getTime(); // 30 November 2026, local time
const day = (y: number, m: number, d: number) => ({
  start: new Date(y, m, d).getTime(),
  end: new Date(y, m, d + 1).getTime(),
});
const month = (y: number, m: number) => ({ start: new Date(y, m, 1).getTime(), end: new Date(y, m + 1, 1).getTime() });

Deno.test("months and days named in English and Chinese, at their latest occurrence not after now", () => {
  const cases: Array<[string, { start: number; end: number } | undefined]> = [
    ["What did Anna say in October?", month(2026, 9)],
    ["anything from december", month(2025, 11)],
    ["What happened on October 14th?", day(2026, 9, 14)],
    ["the 3rd of March", day(2026, 2, 3)],
    ["notes from Oct 2", day(2026, 9, 2)],
    ["in room 12 on Sept 9", day(2026, 8, 9)],
    ["what did we plan in May", month(2026, 4)],
    ["back in March, who called?", month(2026, 2)],
    ["十月说过什么", month(2026, 9)],
    ["10月14日的事", day(2026, 9, 14)],
    ["十二月三号说了什么", day(2025, 11, 3)],
    ["十一月二十一号", day(2026, 10, 21)],
    ["What did Ben say yesterday?", day(2026, 10, 29)],
    ["昨天谁来过", day(2026, 10, 29)],
  ];
  for (const [query, expected] of cases) assert.deepEqual(namedPeriod(query, NOW), expected, query);
});

Deno.test("no period: modal may, a bare number, march as a verb without a day, an impossible month", () => {
  for (
    const query of [
      "May I ask where the passport is?",
      "Where is the passport?",
      "turn the heating to 21",
      "they march on",
      "13月的事",
      "",
    ]
  ) {
    assert.equal(namedPeriod(query, NOW), undefined, query);
  }
});

Deno.test("Chinese days and weeks relative to today: 前天, 大前天, 上周三, 这周一, 15号, 上个月20号", () => {
  // 30 November 2026 is a Monday.
  const cases: Array<[string, { start: number; end: number } | undefined]> = [
    ["今天谁来过", day(2026, 10, 30)],
    ["前天奶奶买了什么？", day(2026, 10, 28)],
    ["大前天爷爷去了哪里", day(2026, 10, 27)],
    ["爷爷上周三去了哪里？", day(2026, 10, 25)],
    ["上星期天说了什么", day(2026, 10, 29)],
    ["上礼拜五", day(2026, 10, 27)],
    ["上上周一", day(2026, 10, 16)],
    ["这周一", day(2026, 10, 30)],
    ["上周说了什么", { start: new Date(2026, 10, 23).getTime(), end: new Date(2026, 10, 30).getTime() }],
    ["15号妈妈遇见了谁", day(2026, 10, 15)],
    ["二十号那天", day(2026, 10, 20)],
    ["上个月20号买了什么", day(2026, 9, 20)],
    ["上个月底", { start: new Date(2026, 9, 21).getTime(), end: new Date(2026, 10, 1).getTime() }],
    ["这个月", month(2026, 10)],
    ["10月14日的事", day(2026, 9, 14)],
  ];
  for (const [query, expected] of cases) assert.deepEqual(namedPeriod(query, NOW), expected, query);
});

Deno.test("no Chinese period: days still to come, recurring weekdays, numbered things", () => {
  for (
    const query of [
      "明天下雨吗",
      "下周三去看牙",
      "这周五有什么安排",
      "下个月初",
      "每周三上午坐诊",
      "5号线",
      "3号楼在哪",
    ]
  ) {
    assert.equal(namedPeriod(query, NOW), undefined, query);
  }
  // Asked on the 10th, "15号" is last month's 15th.
  assert.deepEqual(namedPeriod("15号说了什么", new Date(2026, 10, 10, 12).getTime()), day(2026, 9, 15));
});
