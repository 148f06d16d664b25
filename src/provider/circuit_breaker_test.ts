import assert from "node:assert/strict";
import type { Logger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { type BreakerChange, CircuitBreaker, isAvailabilityFailure } from "./circuit_breaker.ts";
import { ProviderError } from "./provider_error.ts";

/** A logger that keeps its lines as `level: message`. */
function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (message: string) => lines.push(`${level}: ${message}`);
  const logger = {
    debug: keep("debug"),
    info: keep("info"),
    warning: keep("warning"),
    warn: keep("warning"),
    error: keep("error"),
  } as unknown as Logger;
  return { logger, lines };
}

const DOWN = new ProviderError("network", "Cannot reach the LLM server at 127.0.0.1:9: connection refused", {
  retryable: true,
});

Deno.test("availability failures fail over; a bad request, a bad answer or a cancelled call does not", () => {
  for (const code of ["network", "timeout", "server", "rate_limited", "auth", "no_api_key"] as const) {
    assert.ok(isAvailabilityFailure(new ProviderError(code, code)), code);
  }
  // An adapter's script failing on one request (a Lua error, its time limit) says nothing of the server behind it.
  for (const code of ["bad_request", "bad_response", "cancelled", "unavailable", "adapter"] as const) {
    assert.ok(!isAvailabilityFailure(new ProviderError(code, code)), code);
  }
  assert.ok(!isAvailabilityFailure(new Error("not a provider's")));
});

Deno.test("breaker: one failure opens it; probes every interval, one at a time; the first that succeeds closes it", async () => {
  const clock = new FakeClock();
  const { logger, lines } = recordingLogger();
  const changes: BreakerChange["state"][] = [];
  let answer: "down" | "hang" | "up" = "down";
  let running = 0;
  let most = 0;
  let aborted = 0;
  const breaker = new CircuitBreaker({
    name: "m@h",
    clock,
    intervalMs: 30_000,
    timeoutMs: 10_000,
    logger,
    onChange: (change) => changes.push(change.state),
    probe: async (signal) => {
      running++;
      most = Math.max(most, running);
      try {
        if (answer === "down") throw new ProviderError("server", "HTTP 503");
        // Hangs until the breaker gives up on it and aborts its signal.
        if (answer === "hang") {
          await new Promise<void>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
        }
      } catch (error) {
        if (signal.aborted) aborted++;
        throw error;
      } finally {
        running--;
      }
    },
  });
  assert.equal(breaker.state, "closed");
  assert.equal(breaker.nextProbe, undefined);
  breaker.fail(DOWN);
  breaker.fail(DOWN);
  assert.equal(breaker.state, "open");
  assert.deepEqual(changes, ["open"], "one change for two failures");
  assert.equal(breaker.failures, 2);
  assert.equal(breaker.nextProbe, clock.now() + 30_000);
  assert.ok(lines.some((line) => line.startsWith("warning: LLM {name} is down")));

  clock.advance(29_999);
  assert.equal(breaker.probes, 0, "not before the interval");
  clock.advance(1);
  await waitFor(() => breaker.nextProbe !== undefined, "the next probe to be scheduled");
  assert.equal(breaker.probes, 1);
  assert.equal(breaker.lastError?.message, "HTTP 503", "the probe's failure is the reason now");
  assert.equal(breaker.state, "open");

  // A probe that hangs is aborted at its deadline; the next is scheduled only then — never two at once.
  answer = "hang";
  clock.advance(30_000);
  await clock.timersArmed(1);
  assert.equal(breaker.nextProbe, undefined, "no probe is scheduled while one runs");
  clock.advance(10_000);
  await waitFor(() => breaker.nextProbe !== undefined, "the probe after the hung one");
  assert.equal(breaker.lastError?.code, "timeout");
  assert.match(breaker.lastError!.message, /did not answer within 10s/);
  assert.equal(aborted, 1, "the hung probe's signal was aborted");

  answer = "up";
  clock.advance(30_000);
  await waitFor(() => breaker.state === "closed", "the breaker to close");
  assert.deepEqual(changes, ["open", "closed"]);
  assert.equal(breaker.probes, 3);
  assert.equal(most, 1, "probes never overlapped");
  assert.equal(breaker.nextProbe, undefined);
  assert.equal(clock.pendingTimers, 0, "nothing is scheduled while closed");
  breaker.succeed();
  assert.deepEqual(changes, ["open", "closed"], "closing twice changes nothing");
  breaker.close();
});

Deno.test("breaker: a probe that throws something else is logged and isolated; close() stops the probes", async () => {
  const clock = new FakeClock();
  const { logger, lines } = recordingLogger();
  let throwing = true;
  const breaker = new CircuitBreaker({
    name: "m@h",
    clock,
    intervalMs: 1_000,
    timeoutMs: 1_000,
    logger,
    onChange: () => {
      throw new Error("a listener's bug");
    },
    probe: () => {
      if (throwing) throw new TypeError("probe bug");
      return Promise.resolve();
    },
  });
  breaker.fail(DOWN);
  assert.ok(lines.some((line) => line.startsWith("error: A listener")), "a throwing listener is logged");
  clock.advance(1_000);
  await waitFor(() => breaker.nextProbe !== undefined, "the next probe");
  assert.equal(breaker.state, "open");
  assert.match(breaker.lastError!.message, /The probe of m@h failed: probe bug/);
  assert.ok(lines.some((line) => line.startsWith("warning: The probe of LLM {name} failed unexpectedly")));
  breaker.close();
  assert.equal(clock.pendingTimers, 0, "close() cancels the next probe");
  throwing = false;
  clock.advance(10_000);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(breaker.probes, 1, "no probe after close()");
  assert.equal(breaker.state, "open");
});

Deno.test("breaker: a request that answers closes it at once and stops the probes", () => {
  const clock = new FakeClock();
  const breaker = new CircuitBreaker({
    name: "m@h",
    clock,
    intervalMs: 5_000,
    timeoutMs: 1_000,
    logger: recordingLogger().logger,
    probe: () => Promise.reject(new ProviderError("server", "down")),
  });
  breaker.fail(DOWN);
  const opened = breaker.since;
  clock.advance(2_000);
  breaker.succeed();
  assert.equal(breaker.state, "closed");
  assert.equal(breaker.since, opened + 2_000);
  assert.equal(clock.pendingTimers, 0);
  assert.equal(breaker.lastError, DOWN, "the last failure stays for the status");
  breaker.close();
});
