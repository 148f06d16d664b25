/**
 * homed's one backoff, for everything that tries again: a connection that redials (QQ forward, Home Assistant,
 * MQTT, MCP servers, serial ports), a program started again (watched commands, `gpiomon`), an LLM call retried, a
 * failed job. Attempt `n` (0-based) waits `min(maxMs, minMs · multiplierⁿ)`, spread evenly over ±`jitter` of that,
 * rounded to whole milliseconds. And {@link dial}: start a connection loop, wait a little for its first attempt,
 * and let it go on in the background.
 *
 * @module
 */

import { type Clock, deadline } from "../clock.ts";

/** The shape of a backoff: the first wait, the longest, the growth and the spread. */
export interface BackoffPolicy {
  /** The first wait, ms. */
  minMs: number;
  /** The longest wait before jitter, ms. */
  maxMs: number;
  /** Each wait is this many times the one before (2 unless said). */
  multiplier?: number;
  /** In [0, 1]: each wait is spread evenly over ±this fraction of it (0 unless said: no jitter). */
  jitter?: number;
  /** `maxMs` bounds the wait after the jitter too (a connection's longest wait is its promise to come back). */
  capAfterJitter?: boolean;
}

/**
 * The wait before attempt `attempt + 1`, `attempt` failures in; `random` (in [0, 1), `Math.random` unless given)
 * is read only when the policy has jitter.
 *
 * @example
 * ```ts
 * const policy = { minMs: 1_000, maxMs: 60_000, jitter: 0.25 };
 * exponentialBackoff(0, policy, () => 0.5); // 1000
 * exponentialBackoff(3, policy, () => 0); // 6000
 * exponentialBackoff(10, policy, () => 0.5); // 60000
 * exponentialBackoff(10, policy, () => 0.999); // 74970; with capAfterJitter: 60000
 * ```
 */
export function exponentialBackoff(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const { minMs, maxMs, multiplier = 2, jitter = 0 } = policy;
  const nominal = Math.min(maxMs, minMs * multiplier ** attempt);
  const spread = jitter === 0 ? nominal : nominal * (1 - jitter + 2 * jitter * random());
  return Math.round(policy.capAfterJitter ? Math.min(maxMs, spread) : spread);
}

/** A running backoff: each {@link Backoff.next} waits longer, up to the policy's longest, until a reset. */
export class Backoff {
  readonly policy: BackoffPolicy;
  #random: () => number;
  #attempt = 0;

  /**
   * @example
   * ```ts
   * const backoff = new Backoff({ minMs: 1_000, maxMs: 60_000, jitter: 0.25 }, Math.random);
   * backoff.next(); // 750–1250
   * backoff.next(); // 1500–2500
   * backoff.reset(); // the connection stayed up: the next wait is the first again
   * ```
   */
  constructor(policy: BackoffPolicy, random: () => number) {
    this.policy = policy;
    this.#random = random;
  }

  /** The next wait, ms; the one after it is longer. */
  next(): number {
    return exponentialBackoff(this.#attempt++, this.policy, this.#random);
  }

  /** Starts over at the first wait. */
  reset(): void {
    this.#attempt = 0;
  }
}

/** Options of {@link dial}. */
export interface DialOptions {
  clock: Pick<Clock, "after">;
  /** Longest the start waits for the first attempt; the loop goes on after it. */
  waitMs: number;
  /**
   * Dials and redials with a {@link Backoff} until its stop signal aborts; calls `settled` once the first attempt
   * connected or failed.
   */
  loop(settled: () => void): Promise<void>;
  /** The loop threw (a bug, not a peer's failure): said in the log. */
  onError(error: unknown): void;
  /** The loop ended (stopped or threw), before the start's wait is released. */
  onEnd?(): void;
}

/** A started {@link dial}. */
export interface Dialling {
  /** The loop; resolves once it ended, never rejects. */
  readonly run: Promise<void>;
  /** Resolves once the first attempt settled, the loop ended, or `waitMs` passed; never rejects. */
  readonly started: Promise<void>;
}

/**
 * Starts a connection loop in the background and waits at most `waitMs` for its first attempt: a peer that does
 * not answer must not hold up homed's start. The loop stops when its own stop signal aborts.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 *
 * const stop = new AbortController();
 * const dialling = dial({
 *   clock: systemClock,
 *   waitMs: 3_000,
 *   loop: async (settled) => {
 *     settled();
 *     await systemClock.sleep(60_000, stop.signal).catch(() => {});
 *   },
 *   onError: (error) => console.error(error),
 * });
 * await dialling.started;
 * stop.abort();
 * await dialling.run;
 * ```
 */
export function dial(options: DialOptions): Dialling {
  let settled = () => {};
  const first = new Promise<void>((resolve) => (settled = resolve));
  const run = options.loop(settled).catch(options.onError).finally(() => {
    options.onEnd?.();
    settled();
  });
  const started = (async () => {
    const limit = deadline(options.clock, options.waitMs);
    try {
      await limit.race(first);
    } finally {
      limit.cancel();
    }
  })();
  return { run, started };
}
