/**
 * Wall-clock time in a time zone: what the household's clock shows at a moment, the moment a wall time names, the ISO
 * time with the zone's offset, and "now" as the household reads it. Intl does the zone rules (daylight saving
 * included); its zone data is loaded the first time one of these runs.
 *
 * @module
 */

/** A moment as the household's clock shows it. */
export interface WallTime {
  year: number;
  /** 1–12. */
  month: number;
  /** 1–31. */
  date: number;
  hour: number;
  minute: number;
  /** 0 = Sunday … 6 = Saturday. */
  weekday: number;
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/**
 * What the clock on the wall in `timezone` shows at `ms`.
 *
 * @example
 * ```ts
 * wallTime(Date.UTC(2026, 11, 4, 16, 30), "Asia/Shanghai");
 * // { year: 2026, month: 12, date: 5, hour: 0, minute: 30, weekday: 6 }
 * ```
 */
export function wallTime(ms: number, timezone: string): WallTime {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: timezone,
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    weekday: "short",
    hourCycle: "h23",
  }).formatToParts(new Date(ms));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return {
    year: Number(part("year")),
    month: Number(part("month")),
    date: Number(part("day")),
    hour: Number(part("hour")) % 24,
    minute: Number(part("minute")),
    weekday: WEEKDAYS.indexOf(part("weekday")),
  };
}

/** Minutes `timezone` is ahead of UTC at `ms`. */
function offsetMinutes(ms: number, timezone: string): number {
  const wall = wallTime(ms, timezone);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.date, wall.hour, wall.minute);
  return Math.round((asUtc - Math.floor(ms / 60_000) * 60_000) / 60_000);
}

/**
 * The moment the wall clock of `timezone` shows this date and time (a time skipped by daylight saving moves on by the
 * gap, as clocks do).
 *
 * @example
 * ```ts
 * new Date(zonedMoment({ year: 2026, month: 12, date: 4, hour: 19, minute: 0 }, "Asia/Shanghai")).toISOString();
 * // "2026-12-04T11:00:00.000Z"
 * ```
 */
export function zonedMoment(
  wall: Pick<WallTime, "year" | "month" | "date" | "hour" | "minute">,
  timezone: string,
): number {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.date, wall.hour, wall.minute);
  let guess = asUtc - offsetMinutes(asUtc, timezone) * 60_000;
  // Once more: the offset at the guess may differ from the offset at the naive time (near a change).
  guess = asUtc - offsetMinutes(guess, timezone) * 60_000;
  return guess;
}

/**
 * `ms` as ISO-8601 with the zone's offset, as `schedule_create`'s `at` takes it.
 *
 * @example
 * ```ts
 * isoWithOffset(Date.UTC(2026, 11, 4, 11, 0), "Asia/Shanghai"); // "2026-12-04T19:00:00+08:00"
 * ```
 */
export function isoWithOffset(ms: number, timezone: string): string {
  const wall = wallTime(ms, timezone);
  const offset = offsetMinutes(ms, timezone);
  const sign = offset < 0 ? "-" : "+";
  const two = (n: number) => String(n).padStart(2, "0");
  const abs = Math.abs(offset);
  const seconds = Math.floor(ms / 1_000) % 60;
  return `${wall.year}-${two(wall.month)}-${two(wall.date)}T${two(wall.hour)}:${two(wall.minute)}:${
    two(seconds)
  }${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}

/**
 * "Now" as the household reads it, for the prompt: the local date and time, the weekday, the zone and its offset,
 * then the instant in UTC — so "at 7" and "tomorrow" are resolved in the household's zone, not the server's.
 *
 * @example
 * ```ts
 * nowLine(Date.UTC(2026, 11, 4, 11, 0), "Asia/Shanghai");
 * // "2026-12-04 19:00, Friday (Asia/Shanghai, UTC+08:00); 2026-12-04T11:00:00.000Z"
 * ```
 */
export function nowLine(ms: number, timezone: string): string {
  const wall = wallTime(ms, timezone);
  const two = (n: number) => String(n).padStart(2, "0");
  const weekday = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"][wall.weekday];
  const offset = isoWithOffset(ms, timezone).slice(19);
  return `${wall.year}-${two(wall.month)}-${two(wall.date)} ${two(wall.hour)}:${two(wall.minute)}, ${weekday} ` +
    `(${timezone}, UTC${offset === "Z" ? "+00:00" : offset}); ${new Date(ms).toISOString()}`;
}
