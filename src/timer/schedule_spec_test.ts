import assert from "node:assert/strict";
import { parseScheduleTime } from "./schedule_spec.ts";

const NOW = Date.UTC(2026, 0, 1);
const at = (value: string) => parseScheduleTime({ at: value }, { now: NOW, timezone: "UTC" });

Deno.test("an impossible date or time is refused naming the field, never rolled over to another day", () => {
  const refusals: Array<[string, string]> = [
    ["2026-02-30T10:00:00+08:00", "the day is 30; February 2026 has 28 days"],
    ["2027-02-29T10:00:00Z", "the day is 29; February 2027 has 28 days"],
    ["2026-04-31T10:00Z", "the day is 31; April 2026 has 30 days"],
    ["2026-13-01T10:00:00Z", "the month is 13; allowed: 01 to 12"],
    ["2026-00-10T10:00:00Z", "the month is 0; allowed: 01 to 12"],
    ["2026-12-00T10:00:00Z", "the day is 0; December 2026 has 31 days"],
    ["2026-12-31T24:00:00Z", "the hour is 24; allowed: 00 to 23"],
    ["2026-12-31T23:60Z", "the minute is 60; allowed: 00 to 59"],
    ["2026-12-31T23:00:61Z", "the second is 61; allowed: 00 to 59"],
    ["2026-12-31T23:00+15:00", "the offset is not a real one (at most ±14:00)"],
  ];
  for (const [value, why] of refusals) {
    assert.throws(() => at(value), (error: Error) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.message, `at: got ${JSON.stringify(value)}, which is no real time: ${why}`);
      return true;
    }, value);
  }
});

Deno.test("real dates at the edges of months and leap years are kept as given", () => {
  assert.deepEqual(at("2028-02-29T10:00:00+08:00"), { kind: "at", at: Date.UTC(2028, 1, 29, 2), timezone: "UTC" });
  assert.deepEqual(at("2026-04-30T23:59:59Z"), { kind: "at", at: Date.UTC(2026, 3, 30, 23, 59, 59), timezone: "UTC" });
  assert.deepEqual(at("2026-12-31T00:00-14:00"), { kind: "at", at: Date.UTC(2026, 11, 31, 14), timezone: "UTC" });
});
