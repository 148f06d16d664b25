/**
 * The primary provider's spending caps (`llm.budget`): money per local day and month at `llm.prices`, and total
 * tokens per day and month. Spend is read from the usage ledger (`usage.db`, counted per provider), so a restart
 * keeps it; days and months are local to `daemon.timezone` on the ledger's clock. Once a cap is reached the chain
 * skips the primary until the period turns.
 *
 * @module
 */

import { costOf, type Prices, type SpentTokens, type UsageLedger } from "./usage_ledger.ts";

/** `llm.budget`: any of the four caps. */
export interface BudgetLimits {
  /** Money per local day, in `llm.prices`' currency. */
  daily?: number | undefined;
  /** Money per local month. */
  monthly?: number | undefined;
  /** Prompt plus completion tokens per local day. */
  daily_tokens?: number | undefined;
  /** Prompt plus completion tokens per local month. */
  monthly_tokens?: number | undefined;
}

/** Which cap. */
export type BudgetKind = keyof BudgetLimits;

/** A cap's period. */
export type BudgetPeriod = "daily" | "monthly";

/** A cap that was reached: the `budget_reached` event's fields. */
export interface BudgetReached {
  kind: BudgetKind;
  period: BudgetPeriod;
  spent: number;
  limit: number;
  /** `llm.prices`' currency, or `tokens`. */
  currency: string;
}

/** One cap as `/api/status` and `/api/usage` show it. */
export interface BudgetLine {
  limit: number;
  spent: number;
  /** What is left before the cap (0 once reached). */
  left: number;
  /** `llm.prices`' currency, or `tokens`. */
  currency: string;
}

/** Every configured cap, now. */
export type BudgetView = { [kind in BudgetKind]?: BudgetLine };

/** Options of {@link Budget}. */
export interface BudgetOptions {
  limits: BudgetLimits;
  ledger: UsageLedger;
  /** The primary's name, as the ledger counts it. */
  provider: string;
  /** `llm.prices`; the money caps need them (the config insists). */
  prices?: Prices | undefined;
}

const KINDS: readonly BudgetKind[] = ["daily", "monthly", "daily_tokens", "monthly_tokens"];

/**
 * Whether `limits` sets any cap.
 *
 * @example
 * ```ts
 * hasLimits({ daily_tokens: 200_000 }); // true
 * hasLimits(undefined); // false
 * ```
 */
export function hasLimits(limits: BudgetLimits | undefined): limits is BudgetLimits {
  return limits !== undefined && KINDS.some((kind) => limits[kind] !== undefined);
}

/** The primary's caps. */
export class Budget {
  #options: BudgetOptions;
  /** Caps already reported reached, as `kind:period-key` (`daily:2026-11-30`). */
  #announced = new Set<string>();

  /**
   * Caps already reached when homed starts count as reported: the owner heard of them before the restart.
   *
   * @example
   * ```ts
   * import { systemClock } from "../clock.ts";
   * import { UsageLedger } from "./usage_ledger.ts";
   *
   * const prices = { input: 2, input_cache_hit: 0.5, output: 8, currency: "CNY" };
   * const ledger = UsageLedger.open({ path: ":memory:", clock: systemClock, timezone: "Asia/Shanghai", prices });
   * const budget = new Budget({ limits: { daily: 5 }, ledger, provider: "primary", prices });
   * budget.reached(); // [] until 5 CNY were spent today
   * budget.view().daily; // { limit: 5, spent: 0, left: 5, currency: "CNY" }
   * ledger.close();
   * ```
   */
  constructor(options: BudgetOptions) {
    this.#options = options;
    this.check();
  }

  /** The caps reached in their current period (spent ≥ limit). */
  reached(): BudgetReached[] {
    return this.#lines().filter((line) => line.spent >= line.limit).map(withoutKey);
  }

  /**
   * The caps reached now, and of them those not reported yet in their period (`fresh`: each cap once per period;
   * once the period turns it may be reached, and reported, again).
   */
  check(): { reached: BudgetReached[]; fresh: BudgetReached[] } {
    const reached = this.#lines().filter((line) => line.spent >= line.limit);
    const fresh = reached.filter((line) => !this.#announced.has(line.key));
    // Only the current periods' keys are kept.
    this.#announced = new Set(reached.map((line) => line.key));
    return { reached: reached.map(withoutKey), fresh: fresh.map(withoutKey) };
  }

  /** Every cap with its spend and what is left. */
  view(): BudgetView {
    const view: BudgetView = {};
    for (const line of this.#lines()) {
      view[line.kind] = {
        limit: line.limit,
        spent: line.spent,
        left: Math.max(0, round6(line.limit - line.spent)),
        currency: line.currency,
      };
    }
    return view;
  }

  #lines(): Array<BudgetReached & { key: string }> {
    const { limits, ledger, provider, prices } = this.#options;
    const periods = ledger.periods();
    const lines: Array<BudgetReached & { key: string }> = [];
    const spent = new Map<"day" | "month", SpentTokens>();
    for (const kind of KINDS) {
      const limit = limits[kind];
      if (limit === undefined) continue;
      const tokens = kind.endsWith("_tokens");
      if (!tokens && !prices) continue;
      const period: BudgetPeriod = kind.startsWith("daily") ? "daily" : "monthly";
      const span = period === "daily" ? "day" : "month";
      let used = spent.get(span);
      if (!used) spent.set(span, used = ledger.spent(provider, span));
      lines.push({
        kind,
        period,
        limit,
        spent: tokens ? used.promptTokens + used.completionTokens : round6(costOf(used, prices!)),
        currency: tokens ? "tokens" : prices!.currency,
        key: `${kind}:${periods[span]}`,
      });
    }
    return lines;
  }
}

/**
 * A reached cap in words, for the chain's error and the log.
 *
 * @example
 * ```ts
 * describeReached({ kind: "daily", period: "daily", spent: 5.02, limit: 5, currency: "CNY" });
 * // "over its daily budget (5.02 of 5 CNY spent)"
 * describeReached({ kind: "monthly_tokens", period: "monthly", spent: 2_000_100, limit: 2_000_000, currency: "tokens" });
 * // "over its monthly token budget (2000100 of 2000000 tokens used)"
 * ```
 */
export function describeReached(reached: BudgetReached): string {
  return reached.currency === "tokens"
    ? `over its ${reached.period} token budget (${reached.spent} of ${reached.limit} tokens used)`
    : `over its ${reached.period} budget (${reached.spent} of ${reached.limit} ${reached.currency} spent)`;
}

function withoutKey({ key: _key, ...reached }: BudgetReached & { key: string }): BudgetReached {
  return reached;
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
