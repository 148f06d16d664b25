import assert from "node:assert/strict";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { ProviderError } from "./provider_error.ts";
import { backoffDelay, parseRetryAfter, withRetry } from "./retry.ts";

Deno.test("Retry-After in seconds, as a date, and retry-after-ms", () => {
  const now = Date.UTC(2026, 10, 30, 9);
  assert.equal(parseRetryAfter(new Headers({ "retry-after": "1" }), now), 1000);
  assert.equal(parseRetryAfter(new Headers({ "retry-after": "0.25" }), now), 250);
  assert.equal(parseRetryAfter(new Headers({ "retry-after": new Date(now + 3000).toUTCString() }), now), 3000);
  assert.equal(parseRetryAfter(new Headers({ "retry-after-ms": "120", "retry-after": "9" }), now), 120);
  assert.equal(parseRetryAfter(new Headers({ "retry-after": "soon" }), now), undefined);
  assert.equal(parseRetryAfter(undefined, now), undefined);
});

Deno.test("backoff doubles with jitter, is capped, and Retry-After wins", () => {
  assert.equal(backoffDelay(1, undefined, () => 0.5, 500, 8000), 500);
  assert.equal(backoffDelay(3, undefined, () => 0.5, 500, 8000), 2000);
  assert.equal(backoffDelay(10, undefined, () => 0.5, 500, 8000), 8000);
  assert.equal(backoffDelay(1, undefined, () => 0, 500, 8000), 250);
  assert.equal(backoffDelay(2, 1000, () => 0.9, 500, 8000), 1000);
});

Deno.test("retryable errors are retried up to the limit, waiting as told", async () => {
  const clock = new FakeClock();
  let attempts = 0;
  const result = await withRetry(() => {
    attempts++;
    if (attempts < 3) {
      return Promise.reject(new ProviderError("rate_limited", "slow down", { retryable: true, retryAfterMs: 1000 }));
    }
    return Promise.resolve("ok");
  }, { maxRetries: 2, clock, random: () => 0.5 });
  assert.equal(result, "ok");
  assert.deepEqual(clock.sleeps, [1000, 1000]);

  const exhausted = new FakeClock();
  await assert.rejects(
    withRetry(() => Promise.reject(new ProviderError("server", "HTTP 503", { retryable: true })), {
      maxRetries: 2,
      clock: exhausted,
      random: () => 0.5,
    }),
    /HTTP 503/,
  );
  assert.deepEqual(exhausted.sleeps, [500, 1000]);
});

Deno.test("non-retryable errors and over-long Retry-After fail at once", async () => {
  for (
    const error of [
      new ProviderError("auth", "bad key", { status: 401 }),
      new ProviderError("rate_limited", "come back tomorrow", { retryable: true, retryAfterMs: 86_400_000 }),
      new TypeError("bug"),
    ]
  ) {
    const clock = new FakeClock();
    let attempts = 0;
    await assert.rejects(withRetry(() => {
      attempts++;
      return Promise.reject(error);
    }, { maxRetries: 3, clock, random: () => 0.5 }));
    assert.equal(attempts, 1, error.message);
    assert.deepEqual(clock.sleeps, []);
  }
});
