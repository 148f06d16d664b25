/**
 * The body of `GET /api/status`, field for field (snake_case, as the API sends it).
 *
 * @module
 */

import { type IdleCollections, idleCollections } from "../agent/idle_collection.ts";
import type { Agent } from "../agent/core/agent.ts";
import type { Persona } from "../agent/personal.ts";
import type { Clock } from "../clock.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { DamagedFiles, SetAsideFile } from "../fs/set_aside.ts";
import type { DegradedStore, StoreHealth } from "../fs/store_health.ts";
import type { ChannelInfo, IOManager } from "../io/io_manager.ts";
import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
import type { Provider, UsageTotals } from "../provider/provider.ts";
import { usageView } from "../provider/usage_view.ts";
import type { ServiceHost } from "../service/service_host.ts";
import type { DiskSpaceBody } from "../service/disk_watch.ts";
import type { BackupsStatus } from "../backup/backup_service.ts";
import type { TimerDevice } from "../timer/timer.ts";
import { getHeapSpaceStatistics } from "node:v8";
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
  /**
   * homed's own memory (`Deno.memoryUsage()`): the resident set, and the JS heap V8 holds and uses; `external` is what
   * JS objects hold outside the heap (buffers). The soak benchmark and a person watching a long run read these.
   */
  process: {
    pid: number;
    rss_bytes: number;
    heap_total_bytes: number;
    heap_used_bytes: number;
    external_bytes: number;
    /**
     * The JS heap by V8's spaces that hold anything (`old_space`, `code_space`, `large_object_space`, …): what each
     * holds and uses — which one a climb of `heap_total_bytes` is in (a soak's question).
     */
    heap_spaces: Record<string, { size_bytes: number; used_bytes: number }>;
    /** The full collections made on quiet heartbeats (`agent/idle_collection.ts`) and the last one's time. */
    idle_collections: IdleCollections;
  };
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
  /** Automatic backups: where they go, the schedule, the last one, the next time, how many are kept, the last error. */
  backups: BackupsStatus;
  /**
   * Damaged files homed set aside since it started (issue 38: `<file>.damaged-<ISO time>` beside each, and homed
   * started with what was intact); empty when none was. `homed restore --latest` goes back to the last backup.
   * And the data dir's disk (issue 38.6): free and total bytes, and `low` below `daemon.low_disk` (`low_below`).
   * `degraded` (issue 38.2): the stores that cannot write now (a full or read-only disk), since when and why; empty
   * when every store writes.
   */
  storage: { set_aside: SetAsideFile[]; degraded: DegradedStore[] } & DiskSpaceBody;
}

/** Token usage as `/api/status` shows it. */
function usageJson(usage: UsageTotals): UsageBody {
  return { requests: usage.requests, retries: usage.retries, errors: usage.errors, ...usageView(usage) };
}

/** homed's pid and memory figures, as `/api/status` shows them under `process`. */
function processMemory(): StatusBody["process"] {
  const memory = Deno.memoryUsage();
  return {
    pid: Deno.pid,
    rss_bytes: memory.rss,
    heap_total_bytes: memory.heapTotal,
    heap_used_bytes: memory.heapUsed,
    external_bytes: memory.external,
    heap_spaces: Object.fromEntries(
      getHeapSpaceStatistics().filter((space) => space.space_size > 0).map((space) => [
        space.space_name,
        { size_bytes: space.space_size, used_bytes: space.space_used_size },
      ]),
    ),
    idle_collections: idleCollections(),
  };
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
  backups: { backups(): BackupsStatus };
  /** The damaged files set aside (`fs/set_aside.ts`). */
  damaged: Pick<DamagedFiles, "entries">;
  /** The stores that cannot write now (`fs/store_health.ts`). */
  health: Pick<StoreHealth, "degraded">;
  /** The data dir's free space (`service/disk_watch.ts`). */
  disk: { space(): DiskSpaceBody };
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
    process: processMemory(),
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
    backups: from.backups.backups(),
    storage: { set_aside: [...from.damaged.entries], degraded: from.health.degraded, ...from.disk.space() },
  };
}
