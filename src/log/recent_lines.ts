/**
 * The newest log lines, kept in memory for the console's status page (`GET /api/logs`): the same records the log
 * writes, masked the same way, at most {@link RECENT_LINES} of them.
 *
 * @module
 */

/** How many lines are kept. */
export const RECENT_LINES = 500;

/** One kept line. */
export interface RecentLine {
  time: string;
  level: string;
  category: string;
  message: string;
}

/**
 * A ring of the newest lines.
 *
 * @example
 * ```ts
 * const recent = new RecentLines(2);
 * recent.add({ time: "2026-12-01T08:00:00.000Z", level: "info", category: "homed", message: "one" });
 * recent.add({ time: "2026-12-01T08:00:01.000Z", level: "info", category: "homed", message: "two" });
 * recent.add({ time: "2026-12-01T08:00:02.000Z", level: "info", category: "homed", message: "three" });
 * recent.newest(10).map((line) => line.message); // ["two", "three"]
 * ```
 */
export class RecentLines {
  #lines: Array<RecentLine | undefined>;
  #next = 0;
  #count = 0;

  constructor(capacity = RECENT_LINES) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be at least 1, not ${capacity}`);
    }
    this.#lines = new Array(capacity);
  }

  add(line: RecentLine): void {
    this.#lines[this.#next] = line;
    this.#next = (this.#next + 1) % this.#lines.length;
    this.#count = Math.min(this.#count + 1, this.#lines.length);
  }

  /** The newest `count` lines, oldest first. */
  newest(count: number): RecentLine[] {
    const take = Math.max(0, Math.min(count, this.#count));
    const out: RecentLine[] = [];
    for (let i = take; i > 0; i--) {
      out.push(this.#lines[(this.#next - i + this.#lines.length) % this.#lines.length]!);
    }
    return out;
  }
}
