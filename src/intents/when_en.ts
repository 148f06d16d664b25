/**
 * The English grammar of `parseWhen` (`when.ts`): delays ("in 20 minutes", "an hour and a half from now"), a time of
 * day on a day ("tomorrow at 8 am", "on december 25 at 10 am", "half past seven tonight") and repetitions ("every
 * weekday at 7", "on saturdays at 10"). Split out of `when.ts` so each language's grammar is its own file; the shared
 * helpers are in `when_shared.ts`.
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
export function enAt(tokens: readonly string[], i: number): WhenParse[] {
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

export function enEvery(tokens: readonly string[], i: number): WhenParse[] {
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
export function enIn(tokens: readonly string[], i: number): WhenParse[] {
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
