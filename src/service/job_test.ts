import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { Job, retryDelay } from "./job.ts";

Deno.test("a job that throws is logged, counted, retried with backoff, and recovers", async () => {
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 30, 9) });
  let failing = true;
  let runs = 0;
  const job = new Job({
    name: "knowledge.reindex",
    everyMs: 60_000,
    clock,
    logger: getLogger(["test"]),
    run: () => {
      runs++;
      if (failing) throw new Deno.errors.NotFound("No such file or directory (os error 2): data/vector/knowledge");
    },
  });
  job.start();
  clock.advance(60_000);
  await job.idle(); // the run the timer started
  assert.equal(runs, 1);
  let status = job.status();
  assert.equal(status.failures, 1);
  assert.equal(status.consecutive_failures, 1);
  assert.match(status.last_error!, /data\/vector\/knowledge/);
  assert.equal(status.next_run_at, new Date(clock.now() + 1_000).toISOString(), "first retry after 1 s");
  clock.advance(1_000);
  await job.idle();
  assert.equal(job.status().next_run_at, new Date(clock.now() + 2_000).toISOString(), "then 2 s");
  failing = false;
  clock.advance(2_000);
  await job.idle();
  status = job.status();
  assert.equal(runs, 3);
  assert.equal(status.consecutive_failures, 0);
  assert.equal(status.failures, 2);
  assert.equal(status.last_error, null);
  assert.equal(status.next_run_at, new Date(clock.now() + 60_000).toISOString(), "back to the interval");
  await job.stop();
  assert.equal(job.status().next_run_at, null);
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("runs never overlap: a run still going when the next is due is awaited, not doubled", async () => {
  const clock = new FakeClock();
  let active = 0;
  let most = 0;
  let release!: () => void;
  const job = new Job({
    name: "slow",
    everyMs: 1_000,
    clock,
    logger: getLogger(["test"]),
    run: async () => {
      active++;
      most = Math.max(most, active);
      await new Promise<void>((resolve) => release = resolve);
      active--;
    },
  });
  job.start();
  clock.advance(1_000);
  const again = job.runOnce();
  clock.advance(5_000); // no timer is armed while a run is in progress
  assert.equal(clock.pendingTimers, 0);
  release();
  await again;
  assert.equal(most, 1);
  assert.equal(job.status().runs, 1);
  await job.stop();
});

Deno.test("the retry delay doubles per failure, capped at max(retryMax, interval)", () => {
  assert.deepEqual([0, 1, 2, 3, 10].map((n) => retryDelay(15_000, n, 1_000, 300_000)), [
    15_000,
    1_000,
    2_000,
    4_000,
    300_000,
  ]);
  assert.equal(retryDelay(3_600_000, 20, 1_000, 300_000), 3_600_000);
});
