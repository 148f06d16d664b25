/**
 * The body of `GET /api/status`, field for field (snake_case, as the API sends it).
 *
 * @module
 */

import type { ChannelInfo } from "../io/io_manager.ts";
import type { BudgetView } from "../provider/budget.ts";
import type { ProviderStatus } from "../provider/provider_chain.ts";
import type { UsageView } from "../provider/usage_view.ts";

/** Token usage since start, as `/api/status` shows it under `llm.usage`. */
export interface UsageBody extends UsageView {
  requests: number;
  retries: number;
  errors: number;
}

/** What `GET /api/status` answers. */
export interface StatusBody {
  ok: true;
  /** homed's version. */
  version: string;
  /** ISO time of the start. */
  started_at: string;
  uptime_ms: number;
  /** The config file, or `embedded defaults`. */
  config: string;
  persona: { source: string; sha256: string; chars: number };
  /** The agent's own status (turns, queue, last error …). */
  agent: Record<string, unknown>;
  /** The device table's channels. */
  devices: ChannelInfo[];
  /** How many tools are registered. */
  tools: number;
  llm: {
    model: string;
    base_url: string;
    /** `llm.thinking`. */
    thinking: boolean | "omit";
    api_key_set: boolean;
    /** Over every provider (the primary and the fallbacks). */
    usage: UsageBody;
    /** The primary, then `llm.fallbacks` in order: each one's state (up, down, over_budget) and probes. */
    providers: ProviderStatus[];
    /** The primary's caps (`llm.budget`) with spend and what is left; null without caps. */
    budget: BudgetView | null;
  };
  memory: { context_entries: number; context_size: number; context_tokens_budget: number };
  knowledge: { topics: number; sections: number };
  /** The timer's status (active schedules, next run, firings). */
  schedules: Record<string, unknown>;
  /** Each service's status, by name. */
  services: Record<string, Record<string, unknown>>;
}
