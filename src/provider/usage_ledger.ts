/**
 * LLM usage per day, kept across restarts (`<data_dir>/usage.db`), and what it cost at the configured prices
 * (`llm.prices`): what the console's status page shows as "where the tokens went".
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import type { Clock } from "../clock.ts";
import { prepared } from "../sqlite/prepared.ts";
import type { Usage } from "./provider.ts";

/** `llm.prices`: per million tokens, in `currency`. */
export interface Prices {
  /** Prompt tokens not served from the provider's cache. */
  input: number;
  /** Prompt tokens served from the cache (DeepSeek's `prompt_cache_hit_tokens`). */
  input_cache_hit: number;
  output: number;
  currency: string;
}

/** One day's usage, as `GET /api/usage` shows it. */
export interface DayUsage {
  /** The local date, `YYYY-MM-DD`. */
  day: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cache_hit_tokens: number;
  cache_miss_tokens: number;
  /** Share of prompt tokens served from the cache, 0..1 (null without prompt tokens). */
  cache_hit_share: number | null;
  /** At the configured prices; null without prices. */
  cost: number | null;
}

/**
 * What usage cost: cache misses (or, when the provider reports no split, all prompt tokens) at the input price, cache
 * hits at the cache-hit price, completions at the output price.
 *
 * @example
 * ```ts
 * const usage = { promptTokens: 1_000_000, completionTokens: 1_000_000, totalTokens: 2_000_000, cacheHitTokens: 500_000, cacheMissTokens: 500_000 };
 * costOf(usage, { input: 2, input_cache_hit: 0.2, output: 3, currency: "CNY" }); // 1 + 0.1 + 3 = 4.1
 * ```
 */
export function costOf(
  usage: Pick<Usage, "promptTokens" | "completionTokens" | "cacheHitTokens" | "cacheMissTokens">,
  prices: Prices,
): number {
  const split = usage.cacheHitTokens + usage.cacheMissTokens > 0;
  const missed = split ? usage.cacheMissTokens : usage.promptTokens;
  const hit = split ? usage.cacheHitTokens : 0;
  return (missed * prices.input + hit * prices.input_cache_hit + usage.completionTokens * prices.output) / 1e6;
}

/** How long counts may wait in memory before they are written. */
export const FLUSH_EVERY_MS = 10_000;

interface Counted {
  requests: number;
  errors: number;
  prompt: number;
  completion: number;
  hit: number;
  miss: number;
}

/** Options of {@link UsageLedger.open}. */
export interface UsageLedgerOptions {
  /** The database file; `:memory:` for tests. */
  path: string;
  clock: Clock;
  /** `daemon.timezone`: where a day begins ("" the system's). */
  timezone: string;
  prices?: Prices | undefined;
}

/**
 * The ledger: one row per day, added to on every LLM request.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 *
 * const ledger = UsageLedger.open({ path: ":memory:", clock: systemClock, timezone: "UTC" });
 * ledger.record({ promptTokens: 120, completionTokens: 30, totalTokens: 150, cacheHitTokens: 64, cacheMissTokens: 56 });
 * ledger.days()[0]?.prompt_tokens; // 120
 * ledger.close();
 * ```
 */
export class UsageLedger {
  #db: DatabaseSync;
  #options: UsageLedgerOptions;
  #day: Intl.DateTimeFormat | undefined;
  /** Counts not written yet, by day. */
  #counted = new Map<string, Counted>();
  #lastFlush: number;

  private constructor(db: DatabaseSync, options: UsageLedgerOptions) {
    this.#db = db;
    this.#options = options;
    this.#lastFlush = options.clock.monotonic();
    // Made at the first count: a DateTimeFormat loads ICU locale and zone data (≈ 4 MB resident).
  }

  #format(): Intl.DateTimeFormat {
    return this.#day ??= new Intl.DateTimeFormat("en-CA", {
      ...(this.#options.timezone ? { timeZone: this.#options.timezone } : {}),
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
  }

  /** Opens (creating) the ledger. */
  static open(options: UsageLedgerOptions): UsageLedger {
    const db = new DatabaseSync(options.path);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec(`CREATE TABLE IF NOT EXISTS usage_days (
      day TEXT PRIMARY KEY, requests INTEGER NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0,
      prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
      cache_hit_tokens INTEGER NOT NULL DEFAULT 0, cache_miss_tokens INTEGER NOT NULL DEFAULT 0)`);
    return new UsageLedger(db, options);
  }

  /** The configured prices, if any. */
  get prices(): Prices | undefined {
    return this.#options.prices;
  }

  /** Adds one answered request (its usage, when the provider reported it). */
  record(usage: Usage | undefined): void {
    const day = this.#pending(this.#today());
    day.requests++;
    day.prompt += usage?.promptTokens ?? 0;
    day.completion += usage?.completionTokens ?? 0;
    day.hit += usage?.cacheHitTokens ?? 0;
    day.miss += usage?.cacheMissTokens ?? 0;
    this.#flushSometimes();
  }

  /** Adds one failed request. */
  recordError(): void {
    const day = this.#pending(this.#today());
    day.requests++;
    day.errors++;
    this.#flushSometimes();
  }

  /**
   * Writes what was counted since the last write, in one transaction. Counting stays in memory between writes (at
   * most {@link FLUSH_EVERY_MS}), so a turn does not pay a database write per request; a killed homed loses at most
   * those seconds' counts.
   */
  flush(): void {
    this.#lastFlush = this.#options.clock.monotonic();
    if (this.#counted.size === 0) return;
    const add = prepared(
      this.#db,
      `INSERT INTO usage_days (day, requests, errors, prompt_tokens, completion_tokens, cache_hit_tokens,
        cache_miss_tokens) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (day) DO UPDATE SET
        requests = requests + excluded.requests, errors = errors + excluded.errors,
        prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        completion_tokens = completion_tokens + excluded.completion_tokens,
        cache_hit_tokens = cache_hit_tokens + excluded.cache_hit_tokens,
        cache_miss_tokens = cache_miss_tokens + excluded.cache_miss_tokens`,
    );
    this.#db.exec("BEGIN");
    try {
      for (const [day, c] of this.#counted) add.run(day, c.requests, c.errors, c.prompt, c.completion, c.hit, c.miss);
      this.#db.exec("COMMIT");
    } catch (error) {
      this.#db.exec("ROLLBACK");
      throw error;
    }
    this.#counted.clear();
  }

  #pending(day: string): Counted {
    let counted = this.#counted.get(day);
    if (!counted) {
      this.#counted.set(day, counted = { requests: 0, errors: 0, prompt: 0, completion: 0, hit: 0, miss: 0 });
    }
    return counted;
  }

  #flushSometimes(): void {
    if (this.#options.clock.monotonic() - this.#lastFlush >= FLUSH_EVERY_MS) this.flush();
  }

  /** The last `count` days that had requests, newest first. */
  days(count = 30): DayUsage[] {
    this.flush();
    const rows = prepared(this.#db, "SELECT * FROM usage_days ORDER BY day DESC LIMIT ?").all(count) as Array<
      Omit<DayUsage, "cache_hit_share" | "cost">
    >;
    const prices = this.#options.prices;
    return rows.map((row) => ({
      day: row.day,
      requests: row.requests,
      errors: row.errors,
      prompt_tokens: row.prompt_tokens,
      completion_tokens: row.completion_tokens,
      cache_hit_tokens: row.cache_hit_tokens,
      cache_miss_tokens: row.cache_miss_tokens,
      cache_hit_share: row.prompt_tokens > 0
        ? Math.round(row.cache_hit_tokens / row.prompt_tokens * 1000) / 1000
        : null,
      cost: prices
        ? Math.round(
          costOf({
            promptTokens: row.prompt_tokens,
            completionTokens: row.completion_tokens,
            cacheHitTokens: row.cache_hit_tokens,
            cacheMissTokens: row.cache_miss_tokens,
          }, prices) * 1e6,
        ) / 1e6
        : null,
    }));
  }

  /** Writes what is counted, then closes the database. */
  close(): void {
    if (!this.#db.isOpen) return;
    try {
      this.flush();
    } finally {
      this.#db.close();
    }
  }

  #today(): string {
    return this.#format().format(this.#options.clock.now());
  }
}
