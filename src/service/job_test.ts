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
  clock.advance(5_000); // no next run is armed while a run is in progress: only its deadline
  assert.equal(clock.pendingTimers, 1);
  release();
  await again;
  assert.equal(most, 1);
  assert.equal(job.status().runs, 1);
  await job.stop();
});

Deno.test("a run past its deadline is aborted, logged, counted and retried; one that listens ends as failed", async () => {
  const clock = new FakeClock();
  const job = new Job({
    name: "memory.distill",
    everyMs: 60_000,
    deadlineMs: 90_000,
    clock,
    logger: getLogger(["test"]),
    // A peer that never answers, but the run passes the signal on, as the distiller does to its model call.
    run: (signal) => new Promise<void>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
  });
  job.start();
  clock.advance(60_000);
  assert.equal(job.status().running, true);
  clock.advance(89_999);
  assert.equal(job.status().overdue, false);
  clock.advance(1);
  await job.idle();
  const status = job.status();
  assert.equal(status.overruns, 1);
  assert.equal(status.failures, 1);
  assert.equal(status.overdue, false, "the run ended");
  assert.equal(status.last_error, "Job memory.distill ran past its deadline of 90000 ms");
  assert.equal(status.deadline_ms, 90_000);
  assert.equal(status.next_run_at, new Date(clock.now() + 1_000).toISOString(), "retried with backoff");
  await job.stop();
});

Deno.test("a run that ignores its deadline shows the job overdue and is never doubled; its end clears it", async () => {
  const clock = new FakeClock();
  let started = 0;
  let release!: () => void;
  const job = new Job({
    name: "heartbeat",
    everyMs: 10_000,
    clock,
    logger: getLogger(["test"]),
    run: () => (started++, new Promise<void>((resolve) => release = resolve)),
  });
  job.start();
  clock.advance(10_000);
  clock.advance(60_000); // the default deadline: two intervals, at least a minute
  let status = job.status();
  assert.deepEqual([status.running, status.overdue, status.overruns, status.deadline_ms], [true, true, 1, 60_000]);
  clock.advance(600_000);
  assert.equal(started, 1, "no second run on top of the hung one");
  release();
  await job.idle();
  status = job.status();
  assert.deepEqual([status.running, status.overdue, status.runs], [false, false, 1]);
  assert.equal(status.next_run_at, new Date(clock.now() + 10_000).toISOString());
  await job.stop();
});

Deno.test("stop() aborts the run in progress with the stop's reason, counts no failure, and leaves nothing armed", async () => {
  const clock = new FakeClock();
  const reasons: string[] = [];
  const job = new Job({
    name: "knowledge.reindex",
    everyMs: 60_000,
    clock,
    logger: getLogger(["test"]),
    run: (signal) =>
      new Promise<void>((_, reject) =>
        signal.addEventListener("abort", () => (reasons.push(String(signal.reason)), reject(signal.reason)))
      ),
  });
  job.start();
  clock.advance(60_000);
  await job.stop();
  assert.deepEqual(reasons, ["Error: Job knowledge.reindex stopped"]);
  assert.deepEqual([job.status().failures, job.status().overruns, clock.pendingTimers], [0, 0, 0]);
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

Deno.test("stop() waits for a run asked for directly (the console's 'now'), as for one the timer started", async () => {
  const clock = new FakeClock();
  let release!: () => void;
  let ended = false;
  const job = new Job({
    name: "memory.job",
    everyMs: 60_000,
    clock,
    logger: getLogger(["test"]),
    // A run that does not listen to its signal: the stop must still wait for its last write.
    run: async () => {
      await new Promise<void>((resolve) => release = resolve);
      ended = true;
    },
  });
  job.start();
  const asked = job.runOnce();
  assert.equal(job.status().running, true);
  let stopped = false;
  const stopping = job.stop().then(() => stopped = true);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(stopped, false, "stop() returned while the asked-for run was still going");
  release();
  await Promise.all([asked, stopping]);
  assert.equal(ended, true);
  assert.equal(job.status().running, false);
  assert.equal(clock.pendingTimers, 0, "nothing is armed after the stop");
});
