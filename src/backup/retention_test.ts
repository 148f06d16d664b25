import assert from "node:assert/strict";
import { dayAndWeek, keptArchives } from "./retention.ts";

const DAY = 86_400_000;

Deno.test("days and ISO weeks are the household's: 03:30 in Shanghai is the previous day in UTC", () => {
  assert.deepEqual(dayAndWeek(Date.UTC(2026, 11, 6, 19, 30), "Asia/Shanghai"), { day: "2026-12-07", week: "2026-W50" });
  assert.deepEqual(dayAndWeek(Date.UTC(2026, 11, 6, 19, 30), "UTC"), { day: "2026-12-06", week: "2026-W49" });
  // January 1 2027 is a Friday: ISO week 53 of 2026.
  assert.deepEqual(dayAndWeek(Date.UTC(2027, 0, 1, 12), "UTC"), { day: "2027-01-01", week: "2026-W53" });
});

Deno.test("keep: the newest of each of the last `daily` days and of the last `weekly` ISO weeks, nothing else", () => {
  // Two a day (06:00 and 18:00 UTC) from Monday November 16 to Friday December 11, 2026.
  const archives: { at: number }[] = [];
  for (let at = Date.UTC(2026, 10, 16, 6); at <= Date.UTC(2026, 11, 11, 18); at += DAY / 2) archives.push({ at });
  const kept = [...keptArchives(archives, { daily: 7, weekly: 4 }, "UTC")].map((a) => new Date(a.at).toISOString());
  assert.deepEqual(kept.sort(), [
    "2026-11-22T18:00:00.000Z", // Sunday of week 47
    "2026-11-29T18:00:00.000Z", // week 48
    "2026-12-05T18:00:00.000Z", // December 5 to 11: the last seven days (week 49's newest is December 6's)
    "2026-12-06T18:00:00.000Z",
    "2026-12-07T18:00:00.000Z",
    "2026-12-08T18:00:00.000Z",
    "2026-12-09T18:00:00.000Z",
    "2026-12-10T18:00:00.000Z",
    "2026-12-11T18:00:00.000Z",
  ]);
  assert.equal(keptArchives([], { daily: 7, weekly: 4 }, "UTC").size, 0);
  assert.equal(keptArchives(archives, { daily: 1, weekly: 0 }, "UTC").size, 1, "only the newest");
});
