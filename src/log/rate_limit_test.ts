import assert from "node:assert/strict";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { LogLimiter } from "./rate_limit.ts";

/** A limiter whose lines land in `lines`, as a caller would write them. */
function limited(options: { lines?: number; windowMs?: number } = {}) {
  const clock = new FakeClock();
  const limiter = new LogLimiter({ clock, ...options });
  const lines: string[] = [];
  const write = (key: string, text: string) => {
    if (
      limiter.allow(key, (count, seconds) => lines.push(`${count} more like this in the last ${seconds} s (${key})`))
    ) {
      lines.push(text);
    }
  };
  return { clock, limiter, lines, write };
}

Deno.test("a flood is cut to the first lines of each window and one summary with the count when it ends", () => {
  const { clock, lines, write } = limited({ lines: 3, windowMs: 10_000 });
  for (let i = 0; i < 30_000; i++) write("dropped", `dropped frame ${i}`);
  assert.deepEqual(lines, ["dropped frame 0", "dropped frame 1", "dropped frame 2"]);
  clock.advance(9_999);
  assert.equal(lines.length, 3, "nothing before the window ends");
  clock.advance(1);
  assert.deepEqual(lines.slice(3), ["29997 more like this in the last 10 s (dropped)"]);
  // A new window: lines are written again.
  write("dropped", "dropped frame 30000");
  assert.deepEqual(lines.slice(4), ["dropped frame 30000"]);
  assert.equal(clock.pendingTimers, 0, "no timer while nothing is held back");
});

Deno.test("keys are limited apart; a quiet window writes no summary; flush writes what is pending and stops timers", () => {
  const { clock, limiter, lines, write } = limited({ lines: 1, windowMs: 5_000 });
  write("ignored", "ignored 1");
  write("ignored", "ignored 2");
  write("dropped", "dropped 1");
  write("ignored", "ignored 3");
  assert.deepEqual(lines, ["ignored 1", "dropped 1"]);
  assert.equal(limiter.held("ignored"), 2);
  assert.equal(limiter.held("dropped"), 0);
  clock.advance(6_000);
  assert.deepEqual(lines.slice(2), ["2 more like this in the last 5 s (ignored)"], "dropped held nothing back");
  write("dropped", "dropped 2");
  write("dropped", "dropped 3");
  assert.equal(clock.pendingTimers, 1);
  limiter.flush();
  assert.deepEqual(lines.slice(3), ["dropped 2", "1 more like this in the last 5 s (dropped)"]);
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("a line that comes after the window ended, before its timer ran, follows the summary", () => {
  const clock = new FakeClock();
  const lines: string[] = [];
  // A clock whose timers never fire on their own, as when the event loop is busy.
  const stalled = { monotonic: () => clock.monotonic(), after: () => () => {} };
  const limiter = new LogLimiter({ clock: stalled, lines: 1, windowMs: 1_000 });
  const write = (text: string) => {
    if (limiter.allow("k", (count, seconds) => lines.push(`${count} more like this in the last ${seconds} s`))) {
      lines.push(text);
    }
  };
  write("a");
  write("b");
  clock.advance(1_000);
  write("c");
  assert.deepEqual(lines, ["a", "1 more like this in the last 1 s", "c"]);
});

Deno.test("a limit of no lines or no time is refused with both values", () => {
  const clock = new FakeClock();
  assert.throws(
    () => new LogLimiter({ clock, lines: 0, windowMs: 1_000 }),
    /^RangeError: A log limit needs lines ≥ 1 and windowMs > 0, got 0 and 1000$/,
  );
});
