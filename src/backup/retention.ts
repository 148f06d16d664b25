/**
 * Which automatic backups to keep (`backup.keep`): the newest archive of each of the newest `daily` distinct days and
 * of each of the newest `weekly` distinct ISO weeks, days and weeks as the household's clock (`daemon.timezone`)
 * counts them. The two sets overlap (this week's newest is also today's); everything in neither is deleted. The
 * newest archive is always kept, since `daily` is at least 1.
 *
 * @module
 */

/** `backup.keep`. */
export interface KeepPolicy {
  daily: number;
  weekly: number;
}

/**
 * The local day (`2026-12-01`) and ISO week (`2026-W49`) of `ms` in `timezone`.
 *
 * @example
 * ```ts
 * dayAndWeek(Date.UTC(2026, 11, 6, 19, 30), "Asia/Shanghai"); // { day: "2026-12-07", week: "2026-W50" }
 * ```
 */
export function dayAndWeek(ms: number, timezone: string): { day: string; week: string } {
  // en-CA writes dates as YYYY-MM-DD.
  const day = new Intl.DateTimeFormat("en-CA", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(ms);
  const [year, month, date] = day.split("-").map(Number) as [number, number, number];
  // ISO 8601: the week belongs to the year its Thursday is in.
  const thursday = new Date(Date.UTC(year, month - 1, date));
  thursday.setUTCDate(thursday.getUTCDate() + 4 - (thursday.getUTCDay() || 7));
  const weekYear = thursday.getUTCFullYear();
  const week = Math.ceil(((thursday.getTime() - Date.UTC(weekYear, 0, 1)) / 86_400_000 + 1) / 7);
  return { day, week: `${weekYear}-W${String(week).padStart(2, "0")}` };
}

/**
 * The archives `keep` keeps among `archives` (any order; `at` in ms), in `timezone`.
 *
 * @example
 * ```ts
 * const day = 86_400_000;
 * const archives = [0, 1, 2, 3].map((n) => ({ file: `homed-${n}.tar.gz`, at: Date.UTC(2026, 11, 1) + n * day }));
 * keptArchives(archives, { daily: 2, weekly: 0 }, "UTC").size; // 2: December 4 and 3
 * ```
 */
export function keptArchives<T extends { at: number }>(
  archives: readonly T[],
  keep: KeepPolicy,
  timezone: string,
): Set<T> {
  const newestFirst = [...archives].sort((a, b) => b.at - a.at);
  const kept = new Set<T>();
  const pick = (count: number, key: (archive: T) => string) => {
    const buckets = new Set<string>();
    for (const archive of newestFirst) {
      const bucket = key(archive);
      if (buckets.has(bucket)) continue;
      if (buckets.size === count) break;
      buckets.add(bucket);
      kept.add(archive);
    }
  };
  pick(keep.daily, (archive) => dayAndWeek(archive.at, timezone).day);
  pick(keep.weekly, (archive) => dayAndWeek(archive.at, timezone).week);
  return kept;
}
