/**
 * The status page's list of what needs attention (`problemsOf` in assets/status_problems.js), fed status bodies as
 * `/api/status` gives them: a job past its deadline and a timer the watchdog had to wake are each said once, by name.
 */

import assert from "node:assert/strict";

const { problemsOf } = await import("./assets/status_problems.js") as {
  problemsOf: (body: unknown, usage: unknown) => Array<{ level: string; text: string }>;
};

Deno.test("a job running past its deadline is listed with its name and deadline; a failing one with its error", () => {
  const jobs = {
    "memory.distill": { overdue: true, deadline_ms: 3_600_000, consecutive_failures: 0 },
    "knowledge.reindex": { overdue: false, deadline_ms: 3_600_000, consecutive_failures: 2, last_error: "disk full" },
  };
  const problems = problemsOf({ services: { memory: { state: "running", jobs } } }, undefined);
  assert.deepEqual(problems, [
    {
      level: "warn",
      text: "The job memory.distill has run past its deadline of 1 h 0 min and was told to stop; it has not ended yet.",
    },
    { level: "warn", text: "The job knowledge.reindex failed 2 times in a row: disk full" },
  ]);
});

Deno.test("a timer woken by its watchdog is listed with the count; none while it never stalled", () => {
  const stalled = problemsOf({ schedules: { stalls: 2, last_wake: "2026-12-05T05:00:00.000Z" } }, undefined);
  assert.equal(stalled.length, 1);
  assert.equal(stalled[0]!.level, "warn");
  assert.match(stalled[0]!.text, /^The reminder timer lost its wake-up 2 times and was woken by the watchdog/);
  assert.deepEqual(problemsOf({ schedules: { stalls: 0, last_wake: "2026-12-05T05:00:00.000Z" } }, undefined), []);
});
