import assert from "node:assert/strict";
import { isoWithOffset, nowLine, wallTime, zonedMoment } from "./wall_time.ts";

const SHANGHAI = "Asia/Shanghai";
// Friday 2026-12-04 10:30 in Shanghai.
const NOW = Date.UTC(2026, 11, 4, 2, 30);

Deno.test("wall time and the moment it names agree, in a zone without and with daylight saving", () => {
  assert.deepEqual(wallTime(NOW, SHANGHAI), { year: 2026, month: 12, date: 4, hour: 10, minute: 30, weekday: 5 });
  assert.equal(zonedMoment({ year: 2026, month: 12, date: 4, hour: 10, minute: 30 }, SHANGHAI), NOW);
  // Berlin in summer is UTC+2, in winter UTC+1.
  assert.equal(isoWithOffset(Date.UTC(2026, 6, 1, 17), "Europe/Berlin"), "2026-07-01T19:00:00+02:00");
  assert.equal(isoWithOffset(Date.UTC(2026, 11, 1, 18), "Europe/Berlin"), "2026-12-01T19:00:00+01:00");
  // 02:30 on the spring-forward night does not exist; the moment is still one that schedule_create accepts.
  const gap = zonedMoment({ year: 2026, month: 3, date: 29, hour: 2, minute: 30 }, "Europe/Berlin");
  assert.ok(Math.abs(gap - Date.UTC(2026, 2, 29, 1, 30)) <= 3_600_000, new Date(gap).toISOString());
});

Deno.test("now as the household reads it: local time, weekday, zone and offset, then UTC", () => {
  assert.equal(nowLine(NOW, SHANGHAI), "2026-12-04 10:30, Friday (Asia/Shanghai, UTC+08:00); 2026-12-04T02:30:00.000Z");
  assert.equal(
    nowLine(Date.UTC(2026, 6, 1, 22, 5), "America/New_York"),
    "2026-07-01 18:05, Wednesday (America/New_York, UTC-04:00); 2026-07-01T22:05:00.000Z",
  );
  assert.equal(nowLine(NOW, "UTC"), "2026-12-04 02:30, Friday (UTC, UTC+00:00); 2026-12-04T02:30:00.000Z");
});
