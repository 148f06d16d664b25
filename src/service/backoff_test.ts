import assert from "node:assert/strict";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { Backoff, dial, exponentialBackoff } from "./backoff.ts";

Deno.test("the backoff doubles from the first wait to the longest, spread over ±jitter", () => {
  const policy = { minMs: 1_000, maxMs: 30_000, jitter: 0.5 };
  assert.deepEqual([0, 1, 2, 3, 10].map((n) => exponentialBackoff(n, policy, () => 0.5)), [
    1_000,
    2_000,
    4_000,
    8_000,
    30_000,
  ]);
  assert.equal(exponentialBackoff(2, policy, () => 0), 2_000);
  assert.equal(exponentialBackoff(2, policy, () => 0.999), 5_996);
  assert.equal(exponentialBackoff(2, { ...policy, jitter: 0.25 }, () => 0), 3_000);
  assert.equal(exponentialBackoff(2, { ...policy, multiplier: 3 }, () => 0.5), 9_000);
});

Deno.test("capAfterJitter keeps the longest wait the longest, jitter or not (Home Assistant, MQTT, serial ports)", () => {
  const policy = { minMs: 1_000, maxMs: 60_000, jitter: 0.25 };
  assert.equal(exponentialBackoff(10, policy, () => 0.999), 74_970, "std's way: the cap before the spread");
  assert.equal(exponentialBackoff(10, { ...policy, capAfterJitter: true }, () => 0.999), 60_000);
  assert.equal(exponentialBackoff(10, { ...policy, capAfterJitter: true }, () => 0), 45_000, "below the cap: spread");
  assert.equal(exponentialBackoff(1, { ...policy, capAfterJitter: true }, () => 0.999), 2_499);
});

Deno.test("without jitter the backoff is exact and reads no random number", () => {
  const random = () => assert.fail("no jitter, no random number");
  assert.deepEqual([0, 1, 9, 20].map((n) => exponentialBackoff(n, { minMs: 1_000, maxMs: 300_000 }, random)), [
    1_000,
    2_000,
    300_000,
    300_000,
  ]);
});

Deno.test("a running backoff grows with each wait and starts over on reset", () => {
  const backoff = new Backoff({ minMs: 500, maxMs: 2_000, jitter: 0.2 }, () => 0.5);
  assert.deepEqual([backoff.next(), backoff.next(), backoff.next(), backoff.next()], [500, 1_000, 2_000, 2_000]);
  backoff.reset();
  assert.equal(backoff.next(), 500);
});

Deno.test("dial waits for the first attempt, and no longer than its limit", async () => {
  const clock = new FakeClock();
  const stop = new AbortController();
  let attempts = 0;
  const quick = dial({
    clock,
    waitMs: 3_000,
    loop: async (settled) => {
      attempts++;
      settled();
      await clock.sleep(60_000, stop.signal).catch(() => {});
    },
    onError: (error) => assert.fail(String(error)),
  });
  await quick.started;
  assert.equal(attempts, 1);

  const hanging = dial({
    clock,
    waitMs: 3_000,
    loop: () => new Promise<void>((resolve) => stop.signal.addEventListener("abort", () => resolve())),
    onError: (error) => assert.fail(String(error)),
  });
  clock.advance(3_000);
  await hanging.started;
  stop.abort();
  await Promise.all([quick.run, hanging.run]);
});

Deno.test("a loop that throws is reported, ends the start's wait, and its run does not reject", async () => {
  const clock = new FakeClock();
  const seen: unknown[] = [];
  let ended = false;
  const dialling = dial({
    clock,
    waitMs: 3_000,
    loop: () => Promise.reject(new Error("a bug")),
    onError: (error) => seen.push(error),
    onEnd: () => (ended = true),
  });
  await dialling.started;
  await dialling.run;
  assert.equal(ended, true);
  assert.match(String(seen[0]), /a bug/);
});
