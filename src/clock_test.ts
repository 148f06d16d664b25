import assert from "node:assert/strict";
import { FakeClock } from "../tests/support/fake_clock.ts";
import { deadline } from "./clock.ts";

Deno.test("deadline: work done in time gives its value; late work gives late; one deadline is shared by waits", async () => {
  const clock = new FakeClock();
  const limit = deadline(clock, 1_000);
  try {
    assert.deepEqual(await limit.race(Promise.resolve(7)), { late: false, value: 7 });
    await assert.rejects(limit.race(Promise.reject(new Error("failed"))), { message: "failed" });
    let release: (value: string) => void = () => {};
    const slow = new Promise<string>((resolve) => release = resolve);
    const raced = limit.race(slow);
    clock.advance(999);
    await Promise.resolve();
    clock.advance(1);
    assert.deepEqual(await raced, { late: true });
    // The same deadline has passed for the next wait too.
    assert.deepEqual(await limit.race(new Promise(() => {})), { late: true });
    release("after");
  } finally {
    limit.cancel();
  }
  const cancelled = deadline(clock, 10);
  assert.equal(clock.pendingTimers, 1);
  cancelled.cancel();
  assert.equal(clock.pendingTimers, 0);
});
