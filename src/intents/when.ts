/**
 * Time expressions for reminders, read from tokens (see `tokens.ts`) into a {@link When}: a delay ("二十分钟后",
 * "in 20 minutes"), a time of day on a day ("明天早上八点", "tomorrow at 8 am", "周五下午两点", "on december 25 at
 * 10 am") or a repetition ("每个工作日早上七点", "every saturday at 10"). Usable on its own; the matcher calls it for
 * the `{when}` slot.
 *
 * Hours resolve with the period said: 早上/上午/凌晨/am keep hours up to 12 (凌晨十二点 and 12 am are 0); 中午 puts
 * 1–5 after noon; 下午/晚上/今晚/pm add 12 to hours 1–11 (晚上十二点 is 0:00 of the next day). Without a period the
 * hour stays as said (七点 is 7). Impossible values (hour 25, minute 61, 2月30日) are not read at all.
 *
 * @module
 */

import type { When } from "./intent.ts";
import { parseNumber } from "./numbers.ts";
import { tokenTexts } from "./tokens.ts";

/** One reading of a time expression: what it means and the index of the first token after it. */
export interface WhenParse {
  when: When;
  end: number;
}

/** How a period word turns a said hour into a 24-hour one. */
type Period = "am" | "noon" | "pm" | "night" | "early";

type Day = Extract<When, { kind: "at" }>["day"];
type EveryDays = Extract<When, { kind: "every" }>["days"];

/** A phrase table: token sequences (from the keys) to values, longest phrase first. */
type Phrases<V> = readonly { tokens: readonly string[]; value: V }[];

function phrases<V>(table: Readonly<Record<string, V>>): Phrases<V> {
  return Object.entries(table)
    .map(([text, value]) => ({ tokens: tokenTexts(text), value }))
    .sort((a, b) => b.tokens.length - a.tokens.length);
}

/** Every phrase of `table` that starts at `tokens[i]`, longest first. */
function phrasesAt<V>(tokens: readonly string[], i: number, table: Phrases<V>): { value: V; end: number }[] {
  const out: { value: V; end: number }[] = [];
  for (const { tokens: words, value } of table) {
    if (words.every((word, k) => tokens[i + k] === word)) out.push({ value, end: i + words.length });
  }
  return out;
}

function wordAt(tokens: readonly string[], i: number, ...words: string[]): boolean {
  const token = tokens[i];
  return token !== undefined && words.includes(token);
}

/** Integers at `i` within [min, max]. */
function integersAt(tokens: readonly string[], i: number, min: number, max: number): { value: number; end: number }[] {
  return parseNumber(tokens, i, { integer: true }).filter((p) => p.value >= min && p.value <= max);
}

// ---------------------------------------------------------------------------------------------------------------
// Resolving hours and days

/** The 24-hour hour for `hour` said with `period`, and whether it falls on the next day (晚上十二点). */
function resolveHour(hour: number, period: Period | undefined): { hour: number; nextDay: boolean } | undefined {
  if (!Number.isInteger(hour) || hour < 0 || hour > 23) return undefined;
  switch (period) {
    case undefined:
      return { hour, nextDay: false };
    case "am":
      return hour <= 12 ? { hour, nextDay: false } : undefined;
    case "early":
      return hour === 12 ? { hour: 0, nextDay: false } : hour <= 11 ? { hour, nextDay: false } : undefined;
    case "noon":
      if (hour >= 1 && hour <= 5) return { hour: hour + 12, nextDay: false };
      return hour === 11 || hour === 12 || (hour >= 13 && hour <= 17) ? { hour, nextDay: false } : undefined;
    case "pm":
      if (hour >= 1 && hour <= 11) return { hour: hour + 12, nextDay: false };
      return hour >= 12 ? { hour, nextDay: false } : undefined;
    case "night":
      if (hour >= 1 && hour <= 11) return { hour: hour + 12, nextDay: false };
      if (hour === 12) return { hour: 0, nextDay: true };
      return hour >= 13 ? { hour, nextDay: false } : undefined;
  }
}

/** The day after `day`, for a time past midnight said as the evening before; undefined when it cannot be said. */
function nextDayOf(day: Day): Day | undefined {
  if (day === "next") return "next";
  if ("relative" in day) return day.relative < 2 ? { relative: (day.relative + 1) as 1 | 2 } : undefined;
  if ("weekday" in day) return { weekday: (day.weekday + 1) % 7 };
  return undefined;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function validDate(month: number, date: number): boolean {
  return month >= 1 && month <= 12 && date >= 1 && date <= DAYS_IN_MONTH[month - 1]!;
}

/** Builds an "at" reading, or none when the hour cannot be resolved. */
function at(hour: number, minute: number, period: Period | undefined, day: Day, end: number): WhenParse[] {
  const resolved = resolveHour(hour, period);
  if (resolved === undefined || minute < 0 || minute > 59) return [];
  const onDay = resolved.nextDay ? nextDayOf(day) : day;
  if (onDay === undefined) return [];
  return [{ when: { kind: "at", hour: resolved.hour, minute, day: onDay }, end }];
}

function every(
  hour: number,
  minute: number,
  period: Period | undefined,
  days: EveryDays,
  end: number,
): WhenParse[] {
  const resolved = resolveHour(hour, period);
  if (resolved === undefined || resolved.nextDay || minute < 0 || minute > 59) return [];
  return [{ when: { kind: "every", hour: resolved.hour, minute, days }, end }];
}

/** A clock time as said: hour and minute before resolving, and a period said inside it ("7 pm", "noon"). */
interface Clock {
  hour: number;
  minute: number;
  period?: Period;
  end: number;
  /** Said so that it cannot be anything but a time ("7:30", "7 pm", "noon"), so English may drop "at". */
  plain: boolean;
  /** Already a 24-hour time whatever period the day carries ("noon", "midnight"). */
  fixed?: boolean;
}

const COLON_TIME = /^(\d{1,2}):(\d{2})$/;

function colonTime(tokens: readonly string[], i: number): Clock[] {
  const match = COLON_TIME.exec(tokens[i] ?? "");
  if (match === null) return [];
  return [{ hour: Number(match[1]), minute: Number(match[2]), end: i + 1, plain: true }];
}

// ---------------------------------------------------------------------------------------------------------------
// Chinese

const ZH_PERIODS = phrases<Period>({
  早上: "am",
  早晨: "am",
  上午: "am",
  清晨: "am",
  一早: "am",
  早: "am",
  中午: "noon",
  正午: "noon",
  下午: "pm",
  傍晚: "pm",
  晚上: "night",
  晚间: "night",
  夜里: "night",
  夜晚: "night",
  晚: "night",
  凌晨: "early",
  半夜: "early",
  午夜: "early",
  深夜: "early",
});

const ZH_DAYS = phrases<{ day: Day; period?: Period }>({
  今天: { day: { relative: 0 } },
  今日: { day: { relative: 0 } },
  今儿: { day: { relative: 0 } },
  明天: { day: { relative: 1 } },
  明日: { day: { relative: 1 } },
  明儿: { day: { relative: 1 } },
  后天: { day: { relative: 2 } },
  今晚: { day: { relative: 0 }, period: "night" },
  今夜: { day: { relative: 0 }, period: "night" },
  今早: { day: { relative: 0 }, period: "am" },
  明早: { day: { relative: 1 }, period: "am" },
  明晨: { day: { relative: 1 }, period: "am" },
  明晚: { day: { relative: 1 }, period: "night" },
});

const ZH_WEEK_WORDS = phrases({ 周: true, 星期: true, 礼拜: true, 週: true, 禮拜: true });
const ZH_WEEKDAY_CHARS: Readonly<Record<string, number>> = {
  一: 1,
  二: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  日: 0,
  天: 0,
  "1": 1,
  "2": 2,
  "3": 3,
  "4": 4,
  "5": 5,
  "6": 6,
  "7": 0,
};
const ZH_AND = new Set(["和", "跟", "与", "及", "还", "有", "以", "、"]);
const ZH_HOUR_MARK = new Set(["点", "點", "时", "時"]);

/** 周五, 星期一, 礼拜天 (with an optional 这/本 before): the weekday and the token after it. */
function zhWeekday(tokens: readonly string[], i: number): { weekday: number; end: number }[] {
  const start = wordAt(tokens, i, "这", "本") ? i + 1 : i;
  const out: { weekday: number; end: number }[] = [];
  for (const week of phrasesAt(tokens, start, ZH_WEEK_WORDS)) {
    const weekday = ZH_WEEKDAY_CHARS[tokens[week.end] ?? ""];
    if (weekday !== undefined && tokens[week.end + 1] !== "点") out.push({ weekday, end: week.end + 1 });
  }
  return out;
}

/** 12月25日, 12月25号: month and date. */
function zhDate(tokens: readonly string[], i: number): { month: number; date: number; end: number }[] {
  const out: { month: number; date: number; end: number }[] = [];
  for (const month of integersAt(tokens, i, 1, 12)) {
    if (tokens[month.end] !== "月") continue;
    for (const date of integersAt(tokens, month.end + 1, 1, 31)) {
      if (wordAt(tokens, date.end, "日", "号", "號") && validDate(month.value, date.value)) {
        out.push({ month: month.value, date: date.value, end: date.end + 1 });
      }
    }
  }
  return out;
}

/** Where a day may be said: 明天, 今晚, 周五, 12月25日 (with the period some of them carry). */
function zhDayPhrases(tokens: readonly string[], i: number): { day: Day; period?: Period; end: number }[] {
  const out: { day: Day; period?: Period; end: number }[] = [];
  for (const found of phrasesAt(tokens, i, ZH_DAYS)) {
    out.push(found.value.period ? { ...found.value, end: found.end } : { day: found.value.day, end: found.end });
  }
  for (const { weekday, end } of zhWeekday(tokens, i)) out.push({ day: { weekday }, end });
  for (const { month, date, end } of zhDate(tokens, i)) out.push({ day: { month, date }, end });
  return out;
}

/** 七点, 7点, 七点半, 八点一刻, 下午3点15, 三点十五分, 七点零五, 八点钟, 19:30. */
function zhClock(tokens: readonly string[], i: number): Clock[] {
  const out: Clock[] = colonTime(tokens, i);
  for (const hour of integersAt(tokens, i, 0, 24)) {
    if (!ZH_HOUR_MARK.has(tokens[hour.end] ?? "")) continue;
    const after = hour.end + 1;
    const add = (minute: number, end: number) => out.push({ hour: hour.value, minute, end, plain: true });
    const next = tokens[after];
    if (next === "半") add(30, after + 1);
    if ((next === "一" || next === "1") && tokens[after + 1] === "刻") add(15, after + 2);
    if ((next === "三" || next === "3") && tokens[after + 1] === "刻") add(45, after + 2);
    if (next === "整" || next === "钟" || next === "鐘") add(0, after + 1);
    const minuteAt = next === "零" || next === "〇" ? after + 1 : after;
    for (const minute of integersAt(tokens, minuteAt, minuteAt > after ? 1 : 0, 59)) {
      if (minuteAt > after && minute.value > 9) continue; // 零 leads only a single digit: 七点零五
      if (tokens[minute.end] === "分") add(minute.value, minute.end + 1);
      add(minute.value, minute.end);
    }
    add(0, after);
  }
  return out;
}

/** [day] [period] clock, or a day and 中午 alone (= 12:00). */
function zhAt(tokens: readonly string[], i: number): WhenParse[] {
  const out: WhenParse[] = [];
  const starts: { day: Day; period?: Period; end: number }[] = [{ day: "next", end: i }, ...zhDayPhrases(tokens, i)];
  for (const start of starts) {
    const periods: { period?: Period; end: number }[] = [
      start.period ? { period: start.period, end: start.end } : {
        end: start.end,
      },
    ];
    if (!start.period) {
      for (const found of phrasesAt(tokens, start.end, ZH_PERIODS)) {
        periods.push({ period: found.value, end: found.end });
      }
    }
    for (const { period, end } of periods) {
      for (const clock of zhClock(tokens, end)) out.push(...at(clock.hour, clock.minute, period, start.day, clock.end));
      // 明天中午: noon itself is a time.
      if (period === "noon" && end > start.end) out.push(...at(12, 0, undefined, start.day, end));
    }
  }
  return out;
}

const ZH_EVERY_DAYS = phrases<{ days: EveryDays; period?: Period }>({
  每天: { days: "daily" },
  每日: { days: "daily" },
  天天: { days: "daily" },
  每一天: { days: "daily" },
  每晚: { days: "daily", period: "night" },
  每早: { days: "daily", period: "am" },
  每个工作日: { days: "weekdays" },
  每一个工作日: { days: "weekdays" },
  每工作日: { days: "weekdays" },
  每逢工作日: { days: "weekdays" },
  工作日: { days: "weekdays" },
  周一到周五: { days: "weekdays" },
  每周一到周五: { days: "weekdays" },
  星期一到星期五: { days: "weekdays" },
  每个星期一到星期五: { days: "weekdays" },
  周末: { days: "weekends" },
  每个周末: { days: "weekends" },
  每周末: { days: "weekends" },
  每逢周末: { days: "weekends" },
  每到周末: { days: "weekends" },
});
const ZH_EVERY_WEEK = phrases({ 每: true, 每个: true, 每逢: true, 每一个: true });

/** 每周一三五, 每周一和周三, 每个星期六: the weekdays, ascending. */
function zhEveryWeekdays(tokens: readonly string[], i: number): { days: number[]; end: number }[] {
  const out: { days: number[]; end: number }[] = [];
  for (const each of phrasesAt(tokens, i, ZH_EVERY_WEEK)) {
    for (const week of phrasesAt(tokens, each.end, ZH_WEEK_WORDS)) {
      const days = new Set<number>();
      let end = week.end;
      let cursor = week.end;
      for (;;) {
        const weekday = ZH_WEEKDAY_CHARS[tokens[cursor] ?? ""];
        if (weekday === undefined || tokens[cursor + 1] === "点") break;
        days.add(weekday);
        end = cursor + 1;
        cursor = end;
        while (ZH_AND.has(tokens[cursor] ?? "")) cursor++;
        const again = phrasesAt(tokens, cursor, ZH_WEEK_WORDS)[0];
        if (again) cursor = again.end;
      }
      if (days.size > 0) out.push({ days: [...days].sort((a, b) => a - b), end });
    }
  }
  return out;
}

function zhEvery(tokens: readonly string[], i: number): WhenParse[] {
  const starts: { days: EveryDays; period?: Period; end: number }[] = [];
  for (const found of phrasesAt(tokens, i, ZH_EVERY_DAYS)) starts.push({ ...found.value, end: found.end });
  for (const found of zhEveryWeekdays(tokens, i)) {
    if (starts.some((start) => start.end === found.end)) continue; // 每周末 is weekends, not a weekday list
    starts.push({ days: found.days, end: found.end });
  }
  const out: WhenParse[] = [];
  for (const start of starts) {
    const from = tokens[start.end] === "的" ? start.end + 1 : start.end;
    const periods: { period?: Period; end: number }[] = [
      start.period ? { period: start.period, end: from } : { end: from },
    ];
    if (!start.period) {
      for (const found of phrasesAt(tokens, from, ZH_PERIODS)) periods.push({ period: found.value, end: found.end });
    }
    for (const { period, end } of periods) {
      for (const clock of zhClock(tokens, end)) {
        out.push(...every(clock.hour, clock.minute, period, start.days, clock.end));
      }
    }
  }
  return out;
}

const ZH_AFTER = phrases({ 后: true, 以后: true, 之后: true, 过后: true, 後: true, 以後: true });
const ZH_HOUR_UNITS = phrases({ 小时: true, 钟头: true, 鐘頭: true, 小時: true });
const ZH_MINUTE_UNITS = phrases({ 分钟: true, 分: true, 分鐘: true });
const ZH_SECOND_UNITS = phrases({ 秒: true, 秒钟: true, 秒鐘: true });

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** 二十分钟, 半小时, 一个半小时, 两个小时, 一小时二十分钟, 10秒, 一刻钟, 三天: durations in ms. */
function zhDuration(tokens: readonly string[], i: number): { ms: number; end: number }[] {
  const out: { ms: number; end: number }[] = [];
  const minutesAfter = (base: number, from: number) => {
    for (const n of parseNumber(tokens, from)) {
      for (const unit of phrasesAt(tokens, n.end, ZH_MINUTE_UNITS)) {
        out.push({ ms: base + n.value * MINUTE, end: unit.end });
      }
    }
  };
  // Hours: 两个小时, 2小时, 一个半小时, 半小时, 半个钟头.
  const hourStarts: { hours: number; end: number }[] = [];
  if (tokens[i] === "半") hourStarts.push({ hours: 0.5, end: tokens[i + 1] === "个" ? i + 2 : i + 1 });
  for (const n of parseNumber(tokens, i)) {
    if (tokens[n.end] === "个") {
      hourStarts.push({ hours: n.value, end: n.end + 1 });
      if (tokens[n.end + 1] === "半") hourStarts.push({ hours: n.value + 0.5, end: n.end + 2 });
    } else {
      hourStarts.push({ hours: n.value, end: n.end });
      if (tokens[n.end] === "半") hourStarts.push({ hours: n.value + 0.5, end: n.end + 1 });
    }
  }
  for (const start of hourStarts) {
    for (const unit of phrasesAt(tokens, start.end, ZH_HOUR_UNITS)) {
      out.push({ ms: start.hours * HOUR, end: unit.end });
      if (Number.isInteger(start.hours)) minutesAfter(start.hours * HOUR, unit.end);
    }
  }
  // Minutes, seconds, days.
  if (tokens[i] === "半") {
    for (const unit of phrasesAt(tokens, i + 1, ZH_MINUTE_UNITS)) out.push({ ms: 30 * SECOND, end: unit.end });
  }
  if ((tokens[i] === "一" || tokens[i] === "1") && tokens[i + 1] === "刻" && tokens[i + 2] === "钟") {
    out.push({ ms: 15 * MINUTE, end: i + 3 });
  }
  for (const n of parseNumber(tokens, i)) {
    for (const unit of phrasesAt(tokens, n.end, ZH_MINUTE_UNITS)) {
      out.push({ ms: n.value * MINUTE, end: unit.end });
      for (const s of parseNumber(tokens, unit.end)) {
        for (const sUnit of phrasesAt(tokens, s.end, ZH_SECOND_UNITS)) {
          out.push({ ms: n.value * MINUTE + s.value * SECOND, end: sUnit.end });
        }
      }
    }
    for (const unit of phrasesAt(tokens, n.end, ZH_SECOND_UNITS)) out.push({ ms: n.value * SECOND, end: unit.end });
    if (tokens[n.end] === "天") out.push({ ms: n.value * DAY, end: n.end + 1 });
  }
  return out;
}

/** [过] duration 后/以后/之后, or 过 duration. */
function zhIn(tokens: readonly string[], i: number): WhenParse[] {
  const out: WhenParse[] = [];
  const pass = tokens[i] === "过";
  for (const duration of zhDuration(tokens, pass ? i + 1 : i)) {
    const ms = Math.round(duration.ms);
    if (ms <= 0) continue;
    for (const after of phrasesAt(tokens, duration.end, ZH_AFTER)) {
      out.push({ when: { kind: "in", ms }, end: after.end });
    }
    if (pass) out.push({ when: { kind: "in", ms }, end: duration.end });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// English

const EN_WEEKDAYS: Readonly<Record<string, number>> = {
  sunday: 0,
  sun: 0,
  monday: 1,
  mon: 1,
  tuesday: 2,
  tue: 2,
  tues: 2,
  wednesday: 3,
  wed: 3,
  thursday: 4,
  thu: 4,
  thur: 4,
  thurs: 4,
  friday: 5,
  fri: 5,
  saturday: 6,
  sat: 6,
};
const EN_WEEKDAYS_PLURAL: Readonly<Record<string, number>> = {
  sundays: 0,
  mondays: 1,
  tuesdays: 2,
  wednesdays: 3,
  thursdays: 4,
  fridays: 5,
  saturdays: 6,
};
const EN_MONTHS: Readonly<Record<string, number>> = {
  january: 1,
  jan: 1,
  february: 2,
  feb: 2,
  march: 3,
  mar: 3,
  april: 4,
  apr: 4,
  may: 5,
  june: 6,
  jun: 6,
  july: 7,
  jul: 7,
  august: 8,
  aug: 8,
  september: 9,
  sep: 9,
  sept: 9,
  october: 10,
  oct: 10,
  november: 11,
  nov: 11,
  december: 12,
  dec: 12,
};
const EN_ORDINAL = new Set(["st", "nd", "rd", "th"]);

const EN_AMPM = phrases<Period>({
  am: "am",
  "a m": "am",
  pm: "pm",
  "p m": "pm",
  "in the morning": "am",
  "in the afternoon": "pm",
  "in the evening": "pm",
  "at night": "night",
});
const EN_PARTS_OF_DAY: Readonly<Record<string, Period>> = {
  morning: "am",
  afternoon: "pm",
  evening: "pm",
  night: "night",
};

/** Hours 1–12 said in words or digits ("seven", "7"), for "half past seven". */
function enHour12(tokens: readonly string[], i: number) {
  return integersAt(tokens, i, 1, 12);
}

/** 7, 7:30, seven thirty, 7 o'clock, half past seven, quarter to eight, ten past six, noon, midnight. */
function enClock(tokens: readonly string[], i: number): Clock[] {
  const out: Clock[] = colonTime(tokens, i);
  if (wordAt(tokens, i, "noon", "midday")) out.push({ hour: 12, minute: 0, end: i + 1, plain: true, fixed: true });
  if (tokens[i] === "midnight") out.push({ hour: 0, minute: 0, end: i + 1, plain: true, fixed: true });
  // half past seven, quarter past/to eight, ten (minutes) past six, twenty to nine
  const offsets: { minutes: number; end: number }[] = [];
  if (tokens[i] === "half") offsets.push({ minutes: 30, end: i + 1 });
  const quarterAt = tokens[i] === "a" && tokens[i + 1] === "quarter" ? i + 1 : i;
  if (tokens[quarterAt] === "quarter") offsets.push({ minutes: 15, end: quarterAt + 1 });
  for (const n of integersAt(tokens, i, 1, 29)) {
    offsets.push({
      minutes: n.value,
      end: wordAt(tokens, n.end, "minutes", "minute", "mins", "min") ? n.end + 1 : n.end,
    });
  }
  for (const offset of offsets) {
    const direction = tokens[offset.end];
    if (direction !== "past" && direction !== "after" && direction !== "to" && direction !== "before") continue;
    if (offset.minutes === 30 && (direction === "to" || direction === "before")) continue;
    for (const hour of enHour12(tokens, offset.end + 1)) {
      const forward = direction === "past" || direction === "after";
      const h = forward ? hour.value : (hour.value + 11) % 12 || 12;
      out.push({ hour: h, minute: forward ? offset.minutes : 60 - offset.minutes, end: hour.end, plain: true });
    }
  }
  // 7, seven, 7 o'clock, seven thirty, 7 30, seven oh five
  for (const hour of integersAt(tokens, i, 0, 23)) {
    if (tokens[hour.end] === "o'clock") out.push({ hour: hour.value, minute: 0, end: hour.end + 1, plain: true });
    if (tokens[hour.end] === "o" && tokens[hour.end + 1] === "clock") {
      out.push({ hour: hour.value, minute: 0, end: hour.end + 2, plain: true });
    }
    if (tokens[hour.end] === "oh") {
      for (const m of integersAt(tokens, hour.end + 1, 1, 9)) {
        out.push({ hour: hour.value, minute: m.value, end: m.end, plain: false });
      }
    }
    for (const m of integersAt(tokens, hour.end, 10, 59)) {
      if (wordAt(tokens, m.end, "minutes", "minute", "hours", "hour")) continue; // "in 2 30 minutes" is not a time
      out.push({ hour: hour.value, minute: m.value, end: m.end, plain: false });
    }
    out.push({ hour: hour.value, minute: 0, end: hour.end, plain: false });
  }
  // am/pm after any of them ("7 pm", "7:30 am", "half past seven in the evening")
  const withPeriod: Clock[] = [];
  for (const clock of out) {
    if (clock.fixed || clock.hour < 1 || clock.hour > 12) continue; // "13 pm" is no time
    for (const found of phrasesAt(tokens, clock.end, EN_AMPM)) {
      withPeriod.push({ ...clock, period: found.value, end: found.end, plain: true });
    }
  }
  return [...withPeriod, ...out];
}

/** [at] clock: "at" may be left out only when the time is unmistakable ("7 pm", "7:30", "noon"). */
function enAtClock(tokens: readonly string[], i: number): Clock[] {
  const out: Clock[] = [];
  if (tokens[i] === "at") out.push(...enClock(tokens, i + 1));
  out.push(...enClock(tokens, i).filter((clock) => clock.plain));
  return out;
}

/** The hour of `clock` resolved with its own period, else the day's. */
function resolvedPeriod(clock: Clock, dayPeriod: Period | undefined): Period | undefined {
  if (clock.fixed) return undefined;
  if (clock.period === "am") return clock.hour === 12 ? "early" : "am"; // 12 am is midnight
  return clock.period ?? dayPeriod;
}

/** A date: december 25, december 25th, 25 december, the 25th of december. */
function enDate(tokens: readonly string[], i: number): { month: number; date: number; end: number }[] {
  const out: { month: number; date: number; end: number }[] = [];
  const dateAt = (j: number) =>
    integersAt(tokens, j, 1, 31).map((d) => ({
      value: d.value,
      end: EN_ORDINAL.has(tokens[d.end] ?? "") ? d.end + 1 : d.end,
    }));
  const month = EN_MONTHS[tokens[i] ?? ""];
  if (month !== undefined) {
    for (const d of dateAt(i + 1)) if (validDate(month, d.value)) out.push({ month, date: d.value, end: d.end });
  }
  const start = tokens[i] === "the" ? i + 1 : i;
  for (const d of dateAt(start)) {
    const ofAt = tokens[d.end] === "of" ? d.end + 1 : d.end;
    const m = EN_MONTHS[tokens[ofAt] ?? ""];
    if (m !== undefined && validDate(m, d.value)) out.push({ month: m, date: d.value, end: ofAt + 1 });
  }
  return out;
}

/** today, tomorrow (morning), tonight, this evening, the day after tomorrow, (on) friday (morning), on december 25. */
function enDayPhrases(tokens: readonly string[], i: number): { day: Day; period?: Period; end: number }[] {
  const out: { day: Day; period?: Period; end: number }[] = [];
  const withPart = (day: Day, end: number) => {
    out.push({ day, end });
    const part = EN_PARTS_OF_DAY[tokens[end] ?? ""];
    if (part !== undefined) out.push({ day, period: part, end: end + 1 });
  };
  if (tokens[i] === "today") withPart({ relative: 0 }, i + 1);
  if (tokens[i] === "tomorrow") withPart({ relative: 1 }, i + 1);
  const afterAt = tokens[i] === "the" ? i + 1 : i;
  if (tokens[afterAt] === "day" && tokens[afterAt + 1] === "after" && tokens[afterAt + 2] === "tomorrow") {
    withPart({ relative: 2 }, afterAt + 3);
  }
  if (tokens[i] === "tonight") out.push({ day: { relative: 0 }, period: "night", end: i + 1 });
  if (tokens[i] === "this") {
    const part = EN_PARTS_OF_DAY[tokens[i + 1] ?? ""];
    if (part !== undefined) out.push({ day: { relative: 0 }, period: part, end: i + 2 });
  }
  const on = tokens[i] === "on" ? i + 1 : i;
  const weekdayAt = tokens[on] === "this" ? on + 1 : on;
  const weekday = EN_WEEKDAYS[tokens[weekdayAt] ?? ""];
  if (weekday !== undefined) withPart({ weekday }, weekdayAt + 1);
  for (const { month, date, end } of enDate(tokens, on)) out.push({ day: { month, date }, end });
  return out;
}

/** day [at] clock, [at] clock day, at clock. */
function enAt(tokens: readonly string[], i: number): WhenParse[] {
  const out: WhenParse[] = [];
  for (const start of enDayPhrases(tokens, i)) {
    for (const clock of enAtClock(tokens, start.end)) {
      out.push(...at(clock.hour, clock.minute, resolvedPeriod(clock, start.period), start.day, clock.end));
    }
  }
  for (const clock of enAtClock(tokens, i)) {
    out.push(...at(clock.hour, clock.minute, resolvedPeriod(clock, undefined), "next", clock.end));
    for (const day of enDayPhrases(tokens, clock.end)) {
      out.push(...at(clock.hour, clock.minute, resolvedPeriod(clock, day.period), day.day, day.end));
    }
  }
  return out;
}

/** every day, daily, every morning, every weekday, on weekends, every monday and friday, on saturdays. */
function enEveryPhrases(
  tokens: readonly string[],
  i: number,
): { days: EveryDays; period?: Period; end: number }[] {
  const out: { days: EveryDays; period?: Period; end: number }[] = [];
  const withPart = (days: EveryDays, end: number) => {
    out.push({ days, end });
    const part = EN_PARTS_OF_DAY[tokens[end] ?? ""];
    if (part !== undefined) out.push({ days, period: part, end: end + 1 });
  };
  const each = wordAt(tokens, i, "every", "each");
  if (wordAt(tokens, i, "daily", "everyday")) out.push({ days: "daily", end: i + 1 });
  if (each && tokens[i + 1] === "day") withPart("daily", i + 2);
  if (each) {
    const part = EN_PARTS_OF_DAY[tokens[i + 1] ?? ""];
    if (part !== undefined) out.push({ days: "daily", period: part, end: i + 2 });
  }
  if (each && tokens[i + 1] === "weekday") withPart("weekdays", i + 2);
  if (each && tokens[i + 1] === "weekend") withPart("weekends", i + 2);
  const on = tokens[i] === "on" ? i + 1 : i;
  if (tokens[on] === "weekdays") out.push({ days: "weekdays", end: on + 1 });
  if (tokens[on] === "weekends") out.push({ days: "weekends", end: on + 1 });
  // every monday (and) wednesday (and) friday / on mondays and fridays
  const table = each ? EN_WEEKDAYS : EN_WEEKDAYS_PLURAL;
  let cursor = each ? i + 1 : on;
  const days = new Set<number>();
  for (;;) {
    const day = table[tokens[cursor] ?? ""];
    if (day === undefined) break;
    days.add(day);
    const end = cursor + 1;
    withPart([...days].sort((a, b) => a - b), end);
    cursor = tokens[end] === "and" ? end + 1 : end;
  }
  return out;
}

function enEvery(tokens: readonly string[], i: number): WhenParse[] {
  const out: WhenParse[] = [];
  for (const start of enEveryPhrases(tokens, i)) {
    for (const clock of enAtClock(tokens, start.end)) {
      out.push(...every(clock.hour, clock.minute, resolvedPeriod(clock, start.period), start.days, clock.end));
    }
  }
  for (const clock of enAtClock(tokens, i)) {
    for (const end of enEveryPhrases(tokens, clock.end)) {
      out.push(...every(clock.hour, clock.minute, resolvedPeriod(clock, end.period), end.days, end.end));
    }
  }
  return out;
}

const EN_UNITS: Readonly<Record<string, number>> = {
  second: SECOND,
  seconds: SECOND,
  sec: SECOND,
  secs: SECOND,
  minute: MINUTE,
  minutes: MINUTE,
  min: MINUTE,
  mins: MINUTE,
  hour: HOUR,
  hours: HOUR,
  hr: HOUR,
  hrs: HOUR,
  day: DAY,
  days: DAY,
};

/** "a", "an", or a number. */
function enAmounts(tokens: readonly string[], i: number): { value: number; end: number }[] {
  if (wordAt(tokens, i, "a", "an")) return [{ value: 1, end: i + 1 }];
  return parseNumber(tokens, i);
}

/** 20 minutes, half an hour, an hour and a half, one and a half hours, 2 hours and 30 minutes, a quarter of an hour. */
function enDuration(tokens: readonly string[], i: number): { ms: number; end: number }[] {
  const out: { ms: number; end: number }[] = [];
  const half = tokens[i] === "a" && tokens[i + 1] === "half" ? i + 1 : i;
  if (tokens[half] === "half") {
    const unitAt = wordAt(tokens, half + 1, "a", "an") ? half + 2 : half + 1;
    const unit = EN_UNITS[tokens[unitAt] ?? ""];
    if (unit !== undefined) out.push({ ms: unit / 2, end: unitAt + 1 });
  }
  const quarter = tokens[i] === "a" && tokens[i + 1] === "quarter" ? i + 1 : i;
  if (tokens[quarter] === "quarter") {
    if (tokens[quarter + 1] === "of" && wordAt(tokens, quarter + 2, "an", "a") && tokens[quarter + 3] === "hour") {
      out.push({ ms: 15 * MINUTE, end: quarter + 4 });
    }
    if (tokens[quarter + 1] === "hour") out.push({ ms: 15 * MINUTE, end: quarter + 2 });
  }
  for (const amount of enAmounts(tokens, i)) {
    // one and a half hours
    if (tokens[amount.end] === "and" && tokens[amount.end + 1] === "a" && tokens[amount.end + 2] === "half") {
      const unit = EN_UNITS[tokens[amount.end + 3] ?? ""];
      if (unit !== undefined) out.push({ ms: (amount.value + 0.5) * unit, end: amount.end + 4 });
    }
    const unit = EN_UNITS[tokens[amount.end] ?? ""];
    if (unit === undefined) continue;
    const base = amount.value * unit;
    const end = amount.end + 1;
    out.push({ ms: base, end });
    // an hour and a half
    if (tokens[end] === "and" && tokens[end + 1] === "a" && tokens[end + 2] === "half") {
      out.push({ ms: base + unit / 2, end: end + 3 });
    }
    // 2 hours (and) 30 minutes
    const nextAt = tokens[end] === "and" ? end + 1 : end;
    for (const more of parseNumber(tokens, nextAt)) {
      const smaller = EN_UNITS[tokens[more.end] ?? ""];
      if (smaller !== undefined && smaller < unit) out.push({ ms: base + more.value * smaller, end: more.end + 1 });
    }
  }
  return out;
}

/** in duration, duration from now, duration later. */
function enIn(tokens: readonly string[], i: number): WhenParse[] {
  const out: WhenParse[] = [];
  const push = (ms: number, end: number) => {
    if (ms > 0) out.push({ when: { kind: "in", ms: Math.round(ms) }, end });
  };
  if (tokens[i] === "in") { for (const d of enDuration(tokens, i + 1)) push(d.ms, d.end); }
  for (const d of enDuration(tokens, i)) {
    if (tokens[d.end] === "from" && tokens[d.end + 1] === "now") push(d.ms, d.end + 2);
    if (tokens[d.end] === "later") push(d.ms, d.end + 1);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

function sameWhen(a: When, b: When): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Every reading of a time expression that starts at `tokens[from]`, longest first (one per end and meaning); [] when
 * none starts there. `language` picks the grammar.
 *
 * @example
 * ```ts
 * import { tokenTexts } from "./tokens.ts";
 *
 * parseWhen(tokenTexts("明天早上八点提醒我"), 0, "zh")[0];
 * // { when: { kind: "at", hour: 8, minute: 0, day: { relative: 1 } }, end: 6 }
 * parseWhen(tokenTexts("in half an hour"), 0, "en")[0]; // { when: { kind: "in", ms: 1800000 }, end: 4 }
 * ```
 */
export function parseWhen(tokens: readonly string[], from: number, language: "zh" | "en"): WhenParse[] {
  const found = language === "zh"
    ? [...zhIn(tokens, from), ...zhEvery(tokens, from), ...zhAt(tokens, from)]
    : [...enIn(tokens, from), ...enEvery(tokens, from), ...enAt(tokens, from)];
  const out: WhenParse[] = [];
  for (const parse of found) {
    if (!out.some((seen) => seen.end === parse.end && sameWhen(seen.when, parse.when))) out.push(parse);
  }
  return out.sort((a, b) => b.end - a.end);
}
