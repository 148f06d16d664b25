/**
 * The body of `GET /api/status`, field for field (snake_case, as the API sends it).
 *
 * @module
 */

import type { Agent } from "../agent/core/agent.ts";
import type { Persona } from "../agent/personal.ts";
import type { Clock } from "../clock.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { ChannelInfo, IOManager } from "../io/io_manager.ts";
import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
import type { Provider, UsageTotals } from "../provider/provider.ts";
import { usageView } from "../provider/usage_view.ts";
import type { ServiceHost } from "../service/service_host.ts";
import type { TimerDevice } from "../timer/timer.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { VERSION } from "../version.ts";
import type { BudgetView } from "../provider/budget.ts";
import type { LlmAvailability, ProviderStatus } from "../provider/provider_chain.ts";
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

/** Token usage as `/api/status` shows it. */
function usageJson(usage: UsageTotals): UsageBody {
  return { requests: usage.requests, retries: usage.retries, errors: usage.errors, ...usageView(usage) };
}

/** What `/api/status` reads. */
export interface StatusSources {
  loaded: LoadedConfig;
  clock: Clock;
  startedAt: number;
  persona: Persona;
  agent: Agent;
  io: IOManager;
  tools: ToolRegistry;
  provider: Provider;
  llm: LlmAvailability;
  knowledge: KnowledgeBase;
  timer: TimerDevice;
  services: ServiceHost;
}

/**
 * The body of `GET /api/status`, read from the running parts.
 *
 * @example
 * ```ts
 * declare const sources: StatusSources;
 * statusBody(sources).uptime_ms; // how long homed has run
 * ```
 */
export function statusBody(from: StatusSources): StatusBody {
  const { config } = from.loaded;
  const { agent, persona, provider, startedAt } = from;
  return {
    ok: true,
    version: VERSION,
    started_at: new Date(startedAt).toISOString(),
    uptime_ms: Math.round(from.clock.now() - startedAt),
    config: from.loaded.location.path ?? "embedded defaults",
    persona: { source: persona.source, sha256: persona.sha256, chars: persona.text.length },
    agent: agent.status(),
    devices: from.io.channels(),
    tools: from.tools.specs().length,
    llm: {
      model: provider.model,
      base_url: config.llm.base_url,
      thinking: config.llm.thinking,
      api_key_set: config.llm.api_key !== "",
      usage: usageJson(provider.usage()),
      ...from.llm.status(),
    },
    memory: {
      context_entries: agent.contextEntries,
      context_size: config.memory.context_size,
      context_tokens_budget: config.memory.context_tokens,
    },
    knowledge: from.knowledge.counts(),
    schedules: from.timer.status(),
    services: from.services.status(),
  };
}
