import assert from "node:assert/strict";
import { isoWithOffset } from "../text/wall_time.ts";
import { everyCron, whenMoment } from "./zoned_time.ts";

const SHANGHAI = "Asia/Shanghai";
// Friday 2026-12-04 10:30 in Shanghai.
const NOW = Date.UTC(2026, 11, 4, 2, 30);

Deno.test("when: in, at today or tomorrow, on a weekday, on a date (next year once past), every", () => {
  const iso = (ms: number) => isoWithOffset(ms, SHANGHAI);
  assert.equal(iso(whenMoment({ kind: "in", ms: 20 * 60_000 }, NOW, SHANGHAI)), "2026-12-04T10:50:00+08:00");
  assert.equal(
    iso(whenMoment({ kind: "at", hour: 19, minute: 0, day: "next" }, NOW, SHANGHAI)),
    "2026-12-04T19:00:00+08:00",
  );
  assert.equal(
    iso(whenMoment({ kind: "at", hour: 7, minute: 0, day: "next" }, NOW, SHANGHAI)),
    "2026-12-05T07:00:00+08:00",
    "07:00 has passed today: tomorrow's",
  );
  assert.equal(
    iso(whenMoment({ kind: "at", hour: 8, minute: 15, day: { relative: 2 } }, NOW, SHANGHAI)),
    "2026-12-06T08:15:00+08:00",
  );
  assert.equal(
    iso(whenMoment({ kind: "at", hour: 14, minute: 0, day: { weekday: 5 } }, NOW, SHANGHAI)),
    "2026-12-04T14:00:00+08:00",
    "this Friday, still ahead",
  );
  assert.equal(
    iso(whenMoment({ kind: "at", hour: 9, minute: 0, day: { weekday: 5 } }, NOW, SHANGHAI)),
    "2026-12-11T09:00:00+08:00",
    "this Friday's 09:00 has passed: next Friday",
  );
  assert.equal(
    iso(whenMoment({ kind: "at", hour: 10, minute: 0, day: { month: 1, date: 31 } }, NOW, SHANGHAI)),
    "2027-01-31T10:00:00+08:00",
  );
  assert.equal(
    iso(whenMoment({ kind: "at", hour: 10, minute: 0, day: { month: 12, date: 25 } }, NOW, SHANGHAI)),
    "2026-12-25T10:00:00+08:00",
  );
  assert.equal(everyCron({ kind: "every", hour: 7, minute: 0, days: "weekdays" }), "0 7 * * 1-5");
  assert.equal(everyCron({ kind: "every", hour: 9, minute: 30, days: "weekends" }), "30 9 * * 0,6");
  assert.equal(everyCron({ kind: "every", hour: 8, minute: 0, days: [5, 1, 3, 1] }), "0 8 * * 1,3,5");
  assert.equal(everyCron({ kind: "every", hour: 22, minute: 0, days: "daily" }), "0 22 * * *");
});
