/**
 * What a spoken time means in the household's zone: "at 7 pm", "tomorrow", "on Friday" as a moment, "every weekday at
 * 7" as the cron `schedule_create` takes (the zone arithmetic is `text/wall_time.ts`).
 *
 * @module
 */

import { type WallTime, wallTime, zonedMoment } from "../text/wall_time.ts";
import type { When } from "./intent.ts";

/** The next moment a `When` of kind `in` or `at` names, from `now`; a date already past is next year's. */
export function whenMoment(when: Exclude<When, { kind: "every" }>, now: number, timezone: string): number {
  if (when.kind === "in") return now + when.ms;
  const today = wallTime(now, timezone);
  const at = (offsetDays: number, base: WallTime = today) => {
    // Date.UTC rolls the day over months and years; the wall date is then read back in the zone's calendar.
    const day = new Date(Date.UTC(base.year, base.month - 1, base.date + offsetDays));
    return zonedMoment({
      year: day.getUTCFullYear(),
      month: day.getUTCMonth() + 1,
      date: day.getUTCDate(),
      hour: when.hour,
      minute: when.minute,
    }, timezone);
  };
  const { day } = when;
  if (day === "next") {
    const first = at(0);
    return first > now ? first : at(1);
  }
  if ("relative" in day) return at(day.relative);
  if ("weekday" in day) {
    const ahead = (day.weekday - today.weekday + 7) % 7;
    const first = at(ahead);
    return first > now ? first : at(ahead + 7);
  }
  const thisYear = zonedMoment({ year: today.year, month: day.month, date: day.date, ...whenClock(when) }, timezone);
  return thisYear > now
    ? thisYear
    : zonedMoment({ year: today.year + 1, month: day.month, date: day.date, ...whenClock(when) }, timezone);
}

function whenClock(when: { hour: number; minute: number }): { hour: number; minute: number } {
  return { hour: when.hour, minute: when.minute };
}

/**
 * The 5-field cron of a repeating `When`.
 *
 * @example
 * ```ts
 * everyCron({ kind: "every", hour: 7, minute: 0, days: "weekdays" }); // "0 7 * * 1-5"
 * ```
 */
export function everyCron(when: Extract<When, { kind: "every" }>): string {
  const days = when.days === "daily"
    ? "*"
    : when.days === "weekdays"
    ? "1-5"
    : when.days === "weekends"
    ? "0,6"
    : [...new Set(when.days)].sort().join(",");
  return `${when.minute} ${when.hour} * * ${days}`;
}
