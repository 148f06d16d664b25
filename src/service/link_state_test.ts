import assert from "node:assert/strict";
import { LinkState } from "./link_state.ts";

type State = "idle" | "connecting" | "connected" | "waiting" | "stopped";

/** A connection that is driven by hand: each transition of the base, opened up for the test. */
class Link extends LinkState<State> {
  constructor() {
    super("idle");
  }

  get wasUp(): boolean {
    return this.everUp;
  }

  to(state: State): void {
    this.moveTo(state);
  }

  up(now: number): boolean {
    return this.linkUp("connected", now);
  }

  down(): void {
    this.linkDown();
  }

  failed(error: string): void {
    this.linkFailed(error);
  }

  retry(at: number, sleep: () => Promise<void>): Promise<boolean> {
    return this.waitToRetry(at, sleep);
  }
}

Deno.test("a new link is in its first state, never up, with nothing to say", () => {
  const link = new Link();
  assert.equal(link.state, "idle");
  assert.equal(link.connectedAt, null);
  assert.equal(link.reconnects, 0);
  assert.equal(link.lastError, null);
  assert.equal(link.nextRetryAt, null);
  assert.equal(link.wasUp, false);
});

Deno.test("the first time up is no reconnect; each time after it is one", () => {
  const link = new Link();
  link.to("connecting");
  assert.equal(link.state, "connecting");
  assert.equal(link.up(1_000), false);
  assert.deepEqual([link.state, link.connectedAt, link.reconnects, link.wasUp], ["connected", 1_000, 0, true]);
  link.failed("the peer closed the connection");
  assert.equal(link.connectedAt, 1_000, "a loss alone keeps when the last connection came up");
  link.down();
  assert.equal(link.connectedAt, null);
  assert.equal(link.lastError, "the peer closed the connection");
  assert.equal(link.up(5_000), true);
  assert.deepEqual([link.connectedAt, link.reconnects, link.lastError], [5_000, 1, "the peer closed the connection"]);
  link.up(9_000);
  assert.equal(link.reconnects, 2);
});

Deno.test("the next attempt is due only while the wait lasts; a wait that rejects says so", async () => {
  const link = new Link();
  let wake = () => {};
  const waited = link.retry(42_000, () => new Promise<void>((resolve) => (wake = resolve)));
  assert.equal(link.nextRetryAt, 42_000);
  wake();
  assert.equal(await waited, true);
  assert.equal(link.nextRetryAt, null);

  const stop = new AbortController();
  const stopped = link.retry(
    43_000,
    () => new Promise<void>((_, reject) => stop.signal.addEventListener("abort", () => reject(stop.signal.reason))),
  );
  assert.equal(link.nextRetryAt, 43_000);
  stop.abort();
  assert.equal(await stopped, false);
  assert.equal(link.nextRetryAt, null);
  assert.equal(await link.retry(44_000, () => Promise.reject(new Error("already stopped"))), false);
  assert.equal(link.nextRetryAt, null);
});
