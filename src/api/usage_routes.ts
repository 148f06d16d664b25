/**
 * Where the tokens went: `GET /api/usage` (LLM usage per day and provider with its estimated cost, the primary's
 * budget, vision and speech calls; household and owner) and `GET /api/logs` (the newest log lines, masked as the log is; owner only).
 *
 * @module
 */

import type { Hono } from "hono";
import type { RecentLines } from "../log/recent_lines.ts";
import type { BudgetView } from "../provider/budget.ts";
import type { UsageLedger } from "../provider/usage_ledger.ts";
import type { ApiVariables } from "./auth.ts";
import { requireTrust } from "./require_trust.ts";
import { intParam } from "./search_params.ts";

/** Calls to one model server, as the media service counts them. */
export interface CallCountsBody {
  calls: number;
  failures: number;
}

/** Options of {@link usageRoutes}. */
export interface UsageRoutesOptions {
  ledger: UsageLedger;
  /** The vision, speech-to-text and text-to-speech calls since start. */
  media: () => { vision: CallCountsBody; stt: CallCountsBody; tts: CallCountsBody };
  /** The newest log lines; without it `GET /api/logs` lists none. */
  recent?: RecentLines | undefined;
  /** The primary's caps (`llm.budget`): limit, spent and left per period; none or null without caps. */
  budget?: (() => BudgetView | null) | undefined;
}

/**
 * Mounts `GET /api/usage` and `GET /api/logs`.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { UsageLedger } from "../provider/usage_ledger.ts";
 * import { type ApiOptions, createApi } from "./app.ts";
 *
 * declare const options: ApiOptions;
 * const ledger = UsageLedger.open({ path: ":memory:", clock: systemClock, timezone: "" });
 * const none = { calls: 0, failures: 0 };
 * const app = createApi({ ...options, routes: [usageRoutes({ ledger, media: () => ({ vision: none, stt: none, tts: none }) })] });
 * ```
 */
export function usageRoutes(options: UsageRoutesOptions): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/usage", (c) => {
      requireTrust(c.get("identity"), "household", "Usage figures");
      const days = intParam(c, "days", { min: 1, max: 366, fallback: 30 });
      const prices = options.ledger.prices;
      const media = options.media();
      const calls = (counts: CallCountsBody) => ({ calls: counts.calls, failures: counts.failures });
      return c.json({
        currency: prices?.currency ?? null,
        prices: prices ? { input: prices.input, input_cache_hit: prices.input_cache_hit, output: prices.output } : null,
        budget: options.budget?.() ?? null,
        days: options.ledger.days(days),
        vision: calls(media.vision),
        speech: { stt: calls(media.stt), tts: calls(media.tts) },
      });
    });
    app.get("/api/logs", (c) => {
      requireTrust(c.get("identity"), "owner", "Log lines");
      const n = intParam(c, "n", { min: 1, max: 500, fallback: 200 });
      return c.json({ lines: options.recent?.newest(n) ?? [] });
    });
  };
}

/**
 * The media service's call counts as `/api/usage` shows them (its status nests them per model server).
 *
 * @example
 * ```ts
 * mediaCounts({ vision: { calls: 3, failures: 1 } }).vision; // { calls: 3, failures: 1 }
 * ```
 */
export function mediaCounts(status: Record<string, unknown>): Record<"vision" | "stt" | "tts", CallCountsBody> {
  const counts = (key: string) => {
    const part = status[key] as { calls?: number; failures?: number } | undefined;
    return { calls: part?.calls ?? 0, failures: part?.failures ?? 0 };
  };
  return { vision: counts("vision"), stt: counts("stt"), tts: counts("tts") };
}
