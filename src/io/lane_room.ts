/**
 * How a device waits when the input queue refuses an input because its sender's lane is full
 * (`LaneFullError`): the first few retries only yield to other microtasks — a reader that takes inputs as they come
 * frees the lane within a few — then wait on the device's clock, 1 ms doubling to 100 ms, so a busy agent is polled
 * without spinning. One policy for every device that holds inputs back (serial, MQTT, Home Assistant).
 *
 * @module
 */

/** Retries that only yield before the waits on the clock begin. */
const YIELDS = 8;
/** Longest wait between two retries. */
const MAX_WAIT_MS = 100;

/**
 * Waits before retry number `refused` (1 for the first) of a refused input; `sleep` waits on the device's clock (and
 * rejects when the device stops).
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 *
 * await waitForRoom(1, () => Promise.resolve()); // a microtask
 * await waitForRoom(12, (ms) => systemClock.sleep(ms)); // 8 ms
 * ```
 */
export function waitForRoom(refused: number, sleep: (ms: number) => Promise<void>): Promise<void> {
  return refused <= YIELDS ? Promise.resolve() : sleep(Math.min(2 ** (refused - YIELDS - 1), MAX_WAIT_MS));
}
