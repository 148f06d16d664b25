/**
 * When a schedule runs: a one-shot `at` (an ISO-8601 time with its offset — the model resolves "at 8 pm" and "in 20
 * minutes" into one) or a recurring 5-field `cron` in a time zone (croner; daylight-saving gaps and repeats are its
 * job). Every refusal is a `TypeError` whose message names the field, the value and what is allowed.
 *
 * @module
 */

import type { Cron } from "croner";
import { validTimeZone } from "../config/schema.ts";
import { MONTH_NAMES } from "../text/month_names.ts";
import { isoWithOffset, zonedMoment } from "../text/wall_time.ts";

let CronClass: typeof Cron | undefined;

/**
 * Loads the cron library (≈ 1.5 MB resident) the first time a recurring schedule needs it; a household with only
 * one-shot reminders never pays for it.
 *
 * @example
 * ```ts
 * await loadCron();
 * nextCronRun("0 7 * * *", "Asia/Shanghai", Date.now()); // the next 07:00 in Shanghai, as epoch ms
 * ```
 */
export async function loadCron(): Promise<void> {
  CronClass ??= (await import("croner")).Cron;
}

function cronJob(cron: string, timezone: string): Cron {
  if (!CronClass) throw new Error("The cron library is not loaded yet (loadCron)");
  return new CronClass(cron, { timezone, paused: true, mode: "5-part" });
}

/** A checked schedule time. */
export type ScheduleTime =
  | { kind: "at"; at: number; timezone: string }
  | { kind: "cron"; cron: string; timezone: string };

/** A wall time without an offset (seconds optional): the zone's own. */
const LOCAL_ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/** An ISO-8601 date-time with seconds optional and an explicit offset (`Z` or `±hh:mm`). */
const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * Why the fields of an ISO time that matched {@link ISO_WITH_OFFSET} name no real moment, or `undefined`. `Date.parse`
 * rolls impossible dates over (February 30 becomes March 2), so each field is checked against its own range first.
 */
function impossibleField(match: RegExpExecArray): string | undefined {
  // Seconds and the offset are optional: an absent group counts as 0.
  const [, year, month, day, hour, minute, second, offsetHour, offsetMinute] = match.map((group) => Number(group ?? 0));
  if (month! < 1 || month! > 12) return `the month is ${month}; allowed: 01 to 12`;
  const days = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  if (day! < 1 || day! > days) {
    return `the day is ${day}; ${MONTH_NAMES[month! - 1]} ${year} has ${days} days`;
  }
  if (hour! > 23) return `the hour is ${hour}; allowed: 00 to 23`;
  if (minute! > 59) return `the minute is ${minute}; allowed: 00 to 59`;
  if (second! > 59) return `the second is ${second}; allowed: 00 to 59`;
  if (offsetHour! > 14 || offsetMinute! > 59) return `the offset is not a real one (at most ±14:00)`;
  return undefined;
}

/**
 * The next run of `cron` in `timezone` strictly after `after` (ms), or `undefined` when there is none. Needs
 * {@link loadCron} first.
 *
 * @example
 * ```ts
 * await loadCron();
 * nextCronRun("0 7 * * 1-5", "Asia/Shanghai", Date.parse("2026-11-30T09:00:00Z"));
 * // Date.parse("2026-11-30T23:00:00Z"): Tuesday 07:00 in Shanghai
 * ```
 */
export function nextCronRun(cron: string, timezone: string, after: number): number | undefined {
  return cronJob(cron, timezone).nextRun(new Date(after))?.getTime();
}

/**
 * The latest run of `cron` in `timezone` at or before `atOrBefore` (ms), or `undefined`.
 *
 * @example
 * ```ts
 * await loadCron();
 * previousCronRun("0 * * * *", "UTC", Date.parse("2026-11-30T12:45:00Z")); // Date.parse("2026-11-30T12:00:00Z")
 * ```
 */
export function previousCronRun(cron: string, timezone: string, atOrBefore: number): number | undefined {
  return cronJob(cron, timezone).previousRuns(1, new Date(atOrBefore + 1))[0]?.getTime();
}

/**
 * Checks `at` / `cron` / `timezone` as the tool receives them (a `cron` needs {@link loadCron} first).
 *
 * @example
 * ```ts
 * const now = Date.parse("2026-11-30T09:00:00Z");
 * parseScheduleTime({ at: "2026-12-01T20:00:00+08:00" }, { now, timezone: "Asia/Shanghai" });
 * // { kind: "at", at: 1796126400000, timezone: "Asia/Shanghai" }
 * await loadCron();
 * parseScheduleTime({ cron: "0  7 * * 1-5" }, { now, timezone: "Asia/Shanghai" });
 * // { kind: "cron", cron: "0 7 * * 1-5", timezone: "Asia/Shanghai" }
 * ```
 */
export function parseScheduleTime(
  args: { at?: unknown; cron?: unknown; timezone?: unknown },
  options: { now: number; timezone: string },
): ScheduleTime {
  let timezone = options.timezone;
  if (args.timezone !== undefined) {
    if (typeof args.timezone !== "string" || !validTimeZone(args.timezone)) {
      throw new TypeError(
        `timezone: got ${JSON.stringify(args.timezone)}; allowed: an IANA time zone such as Asia/Shanghai`,
      );
    }
    timezone = args.timezone;
  }
  const hasAt = args.at !== undefined, hasCron = args.cron !== undefined;
  if (hasAt === hasCron) {
    throw new TypeError(
      `at, cron: ${
        hasAt ? "both were given" : "neither was given"
      }; allowed: exactly one — "at" for once, "cron" to repeat`,
    );
  }
  if (hasAt) {
    let at = args.at;
    // A wall time without an offset is the household's (or the schedule's own zone's): "2026-12-01T20:00".
    const local = typeof at === "string" ? LOCAL_ISO.exec(at) : null;
    if (local) {
      const [, year, month, date, hour, minute] = local.map(Number);
      const offset = isoWithOffset(
        zonedMoment({ year: year!, month: month!, date: date!, hour: hour!, minute: minute! }, timezone),
        timezone,
      ).slice(19);
      at = `${local[1]}-${local[2]}-${local[3]}T${local[4]}:${local[5]}:${local[6] ?? "00"}${offset}`;
    }
    const match = typeof at === "string" ? ISO_WITH_OFFSET.exec(at) : null;
    const impossible = match ? impossibleField(match) : undefined;
    if (impossible) throw new TypeError(`at: got ${JSON.stringify(at)}, which is no real time: ${impossible}`);
    if (typeof at !== "string" || !match || Number.isNaN(Date.parse(at))) {
      throw new TypeError(
        `at: got ${JSON.stringify(args.at)}; allowed: an ISO-8601 time, with its offset (2026-12-01T20:00:00+08:00) ` +
          `or without one for the household's zone ${timezone} (2026-12-01T20:00)`,
      );
    }
    const when = Date.parse(at);
    if (when <= options.now) {
      throw new TypeError(`at: ${at} is in the past (it is now ${new Date(options.now).toISOString()})`);
    }
    return { kind: "at", at: when, timezone };
  }
  const cron = args.cron;
  if (typeof cron !== "string") {
    throw new TypeError(`cron: got ${JSON.stringify(cron)}; allowed: 5 fields, minute hour day month weekday`);
  }
  const pattern = cron.trim().replace(/\s+/g, " ");
  try {
    if (nextCronRun(pattern, timezone, options.now) === undefined) {
      throw new RangeError("it never runs after now");
    }
  } catch (error) {
    throw new TypeError(
      `cron: got ${JSON.stringify(cron)}; allowed: 5 fields, minute hour day month weekday (e.g. "0 7 * * 1-5") — ${
        (error as Error).message.replace(/^CronPattern: /, "")
      }`,
    );
  }
  return { kind: "cron", cron: pattern, timezone };
}

/**
 * A time as people in `timezone` read it: `2026-12-01 20:00 (Asia/Shanghai)`.
 *
 * @example
 * ```ts
 * localTime(Date.UTC(2026, 11, 1, 12), "Asia/Shanghai"); // "2026-12-01 20:00 (Asia/Shanghai)"
 * ```
 */
export function localTime(ms: number, timezone: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(new Date(ms));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")} (${timezone})`;
}
