/**
 * LLM usage per day, kept across restarts (`<data_dir>/usage.db`), and what it cost at the configured prices
 * (`llm.prices`): what the console's status page shows as "where the tokens went".
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import type { Clock } from "../clock.ts";
import type { StoreHealth } from "../fs/store_health.ts";
import { useWal } from "../sqlite/durability.ts";
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

/** Token and request counts (of a day, or of one provider's day), as `GET /api/usage` shows them. */
export interface UsageCounts {
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cache_hit_tokens: number;
  cache_miss_tokens: number;
}

/** One provider's part of a day. */
export interface ProviderDayUsage extends UsageCounts {
  /** The provider's name (`<model>@<host>` or its `name:`). */
  name: string;
  /** At its prices (the primary's `llm.prices`, a fallback's own; a fallback without is free); null without prices. */
  cost: number | null;
}

/** One day's usage, as `GET /api/usage` shows it. */
export interface DayUsage extends UsageCounts {
  /** The local date, `YYYY-MM-DD`. */
  day: string;
  /** Share of prompt tokens served from the cache, 0..1 (null without prompt tokens). */
  cache_hit_share: number | null;
  /** At the configured prices, every provider's part added; null without prices (`llm.prices`). */
  cost: number | null;
  /** Each provider's part, by name. */
  providers: ProviderDayUsage[];
}

/** Tokens counted for one provider in the current day or month (answered requests only carry tokens). */
export interface SpentTokens {
  promptTokens: number;
  completionTokens: number;
  cacheHitTokens: number;
  cacheMissTokens: number;
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
  /** `llm.prices`: the primary's, and the currency of every cost; without them no cost is shown. */
  prices?: Prices | undefined;
  /**
   * The primary provider's name (default `primary`): requests recorded without a provider count for it, and so do
   * the rows of a usage.db from before providers were counted apart.
   */
  provider?: string | undefined;
  /** The fallbacks' own prices (`llm.fallbacks[].prices`) by name; a fallback without counts as free. */
  providerPrices?: Readonly<Record<string, Prices>> | undefined;
  /**
   * Told of each write (issue 38.2): a full or read-only disk marks usage.db degraded and the counts stay in memory,
   * written by the first flush after space returns; without it such a write throws like any other.
   */
  health?: Pick<StoreHealth, "failed" | "succeeded"> | undefined;
}

/** The usage.db schema this homed writes (`PRAGMA user_version`). */
export const USAGE_SCHEMA_VERSION = 1;

/**
 * The ledger: one row per day and provider, added to on every LLM request.
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
  /** Counts not written yet, by day and provider. */
  #counted = new Map<string, Counted & { day: string; provider: string }>();
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

  /**
   * Opens (creating) the ledger. A usage.db of the first schema (one row per day) is migrated in one transaction: its
   * rows become the primary's (`options.provider`). One written by a newer homed is refused, untouched.
   */
  static open(options: UsageLedgerOptions): UsageLedger {
    const db = new DatabaseSync(options.path);
    try {
      // Counters of spent tokens: the last seconds may go in a power cut (src/sqlite/durability.ts).
      useWal(db, "derived");
      migrate(db, options.path, options.provider ?? "primary");
    } catch (error) {
      db.close();
      throw error;
    }
    return new UsageLedger(db, options);
  }

  /** The configured prices, if any. */
  get prices(): Prices | undefined {
    return this.#options.prices;
  }

  /** Adds one answered request of `provider` (default: the primary) — its usage, when the provider reported it. */
  record(usage: Usage | undefined, provider?: string): void {
    const day = this.#pending(this.#today(), provider);
    day.requests++;
    day.prompt += usage?.promptTokens ?? 0;
    day.completion += usage?.completionTokens ?? 0;
    day.hit += usage?.cacheHitTokens ?? 0;
    day.miss += usage?.cacheMissTokens ?? 0;
    this.#flushSometimes();
  }

  /** Adds one failed request of `provider` (default: the primary). */
  recordError(provider?: string): void {
    const day = this.#pending(this.#today(), provider);
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
      `INSERT INTO usage_provider_days (day, provider, requests, errors, prompt_tokens, completion_tokens,
        cache_hit_tokens, cache_miss_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (day, provider) DO UPDATE SET
        requests = requests + excluded.requests, errors = errors + excluded.errors,
        prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        completion_tokens = completion_tokens + excluded.completion_tokens,
        cache_hit_tokens = cache_hit_tokens + excluded.cache_hit_tokens,
        cache_miss_tokens = cache_miss_tokens + excluded.cache_miss_tokens`,
    );
    this.#db.exec("BEGIN");
    try {
      for (const c of this.#counted.values()) {
        add.run(c.day, c.provider, c.requests, c.errors, c.prompt, c.completion, c.hit, c.miss);
      }
      this.#db.exec("COMMIT");
    } catch (error) {
      // SQLite may have rolled back already (a full disk does): then there is no transaction left to end.
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      if (this.#options.health?.failed("usage.db", this.#options.path, error)) return;
      throw error;
    }
    this.#counted.clear();
    this.#options.health?.succeeded("usage.db");
  }

  #pending(day: string, provider = this.#primary()): Counted {
    const key = `${day}\u0000${provider}`;
    let counted = this.#counted.get(key);
    if (!counted) {
      this.#counted.set(
        key,
        counted = { day, provider, requests: 0, errors: 0, prompt: 0, completion: 0, hit: 0, miss: 0 },
      );
    }
    return counted;
  }

  #primary(): string {
    return this.#options.provider ?? "primary";
  }

  /**
   * The current local day (`YYYY-MM-DD`) and month (`YYYY-MM`) in `daemon.timezone`, on the ledger's clock.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const ledger = UsageLedger.open({ path: ":memory:", clock: systemClock, timezone: "Asia/Shanghai" });
   * ledger.periods(); // { day: "2026-12-01", month: "2026-12" }
   * ledger.close();
   * ```
   */
  periods(): { day: string; month: string } {
    const day = this.#today();
    return { day, month: day.slice(0, 7) };
  }

  /**
   * The tokens `provider` was counted in the current local day or month — written and still in memory alike.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   *
   * const ledger = UsageLedger.open({ path: ":memory:", clock: systemClock, timezone: "UTC", provider: "a@b" });
   * ledger.record({ promptTokens: 120, completionTokens: 30, totalTokens: 150, cacheHitTokens: 0, cacheMissTokens: 0 });
   * ledger.spent("a@b", "month").completionTokens; // 30
   * ledger.close();
   * ```
   */
  spent(provider: string, period: "day" | "month"): SpentTokens {
    const periods = this.periods();
    const key = period === "day" ? periods.day : periods.month;
    const row = prepared(
      this.#db,
      `SELECT COALESCE(SUM(prompt_tokens), 0) AS prompt, COALESCE(SUM(completion_tokens), 0) AS completion,
        COALESCE(SUM(cache_hit_tokens), 0) AS hit, COALESCE(SUM(cache_miss_tokens), 0) AS miss
        FROM usage_provider_days WHERE provider = ? AND substr(day, 1, ?) = ?`,
    ).get(provider, key.length, key) as { prompt: number; completion: number; hit: number; miss: number };
    const spent = {
      promptTokens: row.prompt,
      completionTokens: row.completion,
      cacheHitTokens: row.hit,
      cacheMissTokens: row.miss,
    };
    for (const counted of this.#counted.values()) {
      if (counted.provider !== provider || !counted.day.startsWith(key)) continue;
      spent.promptTokens += counted.prompt;
      spent.completionTokens += counted.completion;
      spent.cacheHitTokens += counted.hit;
      spent.cacheMissTokens += counted.miss;
    }
    return spent;
  }

  #flushSometimes(): void {
    if (this.#options.clock.monotonic() - this.#lastFlush >= FLUSH_EVERY_MS) this.flush();
  }

  /** The last `count` days that had requests, newest first, each with every provider's part. */
  days(count = 30): DayUsage[] {
    this.flush();
    const rows = prepared(
      this.#db,
      `SELECT * FROM usage_provider_days WHERE day IN (SELECT DISTINCT day FROM usage_provider_days ORDER BY day DESC
        LIMIT ?) ORDER BY day DESC, requests DESC, provider`,
    ).all(count) as unknown as Array<UsageCounts & { day: string; provider: string }>;
    const days: DayUsage[] = [];
    for (const row of rows) {
      let day = days.at(-1);
      if (day?.day !== row.day) {
        days.push(
          day = {
            day: row.day,
            ...zeroCounts(),
            cache_hit_share: null,
            cost: this.#options.prices ? 0 : null,
            providers: [],
          },
        );
      }
      const counts = countsOf(row);
      const cost = this.#costOf(row.provider, counts);
      day.providers.push({ name: row.provider, ...counts, cost });
      for (const key of Object.keys(counts) as Array<keyof UsageCounts>) day[key] += counts[key];
      if (day.cost !== null && cost !== null) day.cost += cost;
    }
    for (const day of days) {
      day.cache_hit_share = day.prompt_tokens > 0
        ? Math.round(day.cache_hit_tokens / day.prompt_tokens * 1000) / 1000
        : null;
      if (day.cost !== null) day.cost = round6(day.cost);
    }
    return days;
  }

  /** What `counts` of `provider` cost: null without `llm.prices`; a fallback without prices of its own is free. */
  #costOf(provider: string, counts: UsageCounts): number | null {
    const { prices, providerPrices } = this.#options;
    if (!prices) return null;
    const own = provider === this.#primary() ? prices : providerPrices?.[provider];
    if (!own) return 0;
    return round6(costOf({
      promptTokens: counts.prompt_tokens,
      completionTokens: counts.completion_tokens,
      cacheHitTokens: counts.cache_hit_tokens,
      cacheMissTokens: counts.cache_miss_tokens,
    }, own));
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

/** Creates the schema, or migrates the first one (a row per day, `usage_days`) with its rows given to `primary`. */
function migrate(db: DatabaseSync, path: string, primary: string): void {
  const version = (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (version > USAGE_SCHEMA_VERSION) {
    throw new Error(
      `${path} was written by a newer homed (usage schema ${version}; this one knows ${USAGE_SCHEMA_VERSION}); ` +
        "it was left untouched — run that homed, or move the file away",
    );
  }
  if (version === USAGE_SCHEMA_VERSION) return;
  db.exec("BEGIN");
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS usage_provider_days (
      day TEXT NOT NULL, provider TEXT NOT NULL, requests INTEGER NOT NULL DEFAULT 0,
      errors INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
      completion_tokens INTEGER NOT NULL DEFAULT 0, cache_hit_tokens INTEGER NOT NULL DEFAULT 0,
      cache_miss_tokens INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (day, provider))`);
    const legacy = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage_days'").get();
    if (legacy) {
      db.prepare(
        `INSERT INTO usage_provider_days (day, provider, requests, errors, prompt_tokens, completion_tokens,
          cache_hit_tokens, cache_miss_tokens) SELECT day, ?, requests, errors, prompt_tokens, completion_tokens,
          cache_hit_tokens, cache_miss_tokens FROM usage_days`,
      ).run(primary);
      db.exec("DROP TABLE usage_days");
    }
    db.exec(`PRAGMA user_version = ${USAGE_SCHEMA_VERSION}`);
    db.exec("COMMIT");
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}

function zeroCounts(): UsageCounts {
  return {
    requests: 0,
    errors: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cache_hit_tokens: 0,
    cache_miss_tokens: 0,
  };
}

function countsOf(row: UsageCounts): UsageCounts {
  return {
    requests: row.requests,
    errors: row.errors,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    cache_hit_tokens: row.cache_hit_tokens,
    cache_miss_tokens: row.cache_miss_tokens,
  };
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
