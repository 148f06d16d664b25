/**
 * A full garbage collection while the household is quiet (the agent's heartbeat, no turn running or waiting), when
 * the runtime exposes `gc` — the daemon runs with V8's `--expose-gc` (`DAEMON_V8_FLAGS`). Between V8's own full
 * collections, which come every 10–20 minutes under a household's light but steady load, the old space swelled by
 * ≈ 7 MB and fell back: a saw in the resident memory that the soak read as growth and a small box pays for at its
 * peaks. One collection per quiet heartbeat (`daemon.heartbeat_interval`, 15 s by default) keeps the heap near what
 * is live, for a pause of ≈ 20 ms that no turn waits on (a message that comes during it waits that long).
 *
 * @module
 */

/** What {@link collectIdleGarbage} did: the collections made and the last one's time. */
export interface IdleCollections {
  runs: number;
  last_ms: number | null;
}

const made: IdleCollections = { runs: 0, last_ms: null };

/**
 * Collects garbage now when the runtime allows it (`--expose-gc`); does nothing otherwise.
 *
 * @example
 * ```ts
 * collectIdleGarbage(); // true under `deno run --v8-flags=--expose-gc`
 * idleCollections(); // { runs: 1, last_ms: 21.1 }
 * ```
 */
export function collectIdleGarbage(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== "function") return false;
  const started = performance.now();
  gc();
  made.runs++;
  made.last_ms = Math.round((performance.now() - started) * 10) / 10;
  return true;
}

/** The collections made so far (for `/api/status`). */
export function idleCollections(): IdleCollections {
  return { ...made };
}
