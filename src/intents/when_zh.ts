/**
 * The Chinese grammar of `parseWhen` (`when.ts`): delays (二十分钟后, 过半小时), a time of day on a day (明天早上八点,
 * 周五下午两点, 12月25日10点) and repetitions (每个工作日早上七点, 每周一三五晚上八点). Split out of `when.ts` so each
 * language's grammar is its own file; the shared helpers are in `when_shared.ts`.
 *
 * @module
 */

import { parseNumber } from "./numbers.ts";
import {
  at,
  type Clock,
  colonTime,
  DAY,
  type Day,
  every,
  type EveryDays,
  HOUR,
  integersAt,
  MINUTE,
  type Period,
  phrases,
  phrasesAt,
  SECOND,
  validDate,
  type WhenParse,
  wordAt,
} from "./when_shared.ts";

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
export function zhAt(tokens: readonly string[], i: number): WhenParse[] {
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

export function zhEvery(tokens: readonly string[], i: number): WhenParse[] {
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
export function zhIn(tokens: readonly string[], i: number): WhenParse[] {
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
