/**
 * The daemon's memory step: the `memory` service started, the context window restored from it (its evictions
 * archived, its state kept), and the memory tools registered.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { Clock } from "../clock.ts";
import type { DamagedFiles } from "../fs/set_aside.ts";
import type { StoreHealth } from "../fs/store_health.ts";
import type { Config } from "../config/schema.ts";
import { ContextWindow } from "../context/context_window.ts";
import type { Provider } from "../provider/provider.ts";
import type { ServiceHost } from "../service/service_host.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { MemoryService } from "./memory_service.ts";

/** Options of {@link startMemory}. */
export interface MemorySetupOptions {
  /** The `memory` section. */
  config: Config["memory"];
  /** `daemon.data_dir`: the layers live in `memory` under it. */
  dataDir: string;
  clock: Clock;
  /** The `memory` logger. */
  logger: Logger;
  /** Where the service is started. */
  services: ServiceHost;
  /** Where the memory tools are registered. */
  tools: ToolRegistry;
  /** The LLM for the distiller; undefined for its rule-based fallback. */
  provider: Provider | undefined;
  /** The persona text, first in the distiller's system message. */
  persona: string;
  /** The butler's own names (facts about them are never recorded). */
  selfNames: readonly string[];
  /** Where a damaged memory file is set aside and recorded (the daemon's list, for `/api/status`). */
  damaged?: DamagedFiles;
  /** Where a write that fails for the disk is recorded (the daemon's, for `/api/status` `storage.degraded`). */
  health?: StoreHealth;
}

/** What {@link startMemory} gives the daemon. */
export interface MemorySetup {
  memory: MemoryService;
  /** Layer 1, restored from the last run; the agent's context. */
  context: ContextWindow;
}

/**
 * Starts the `memory` service and builds the context window on what it restored.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { loadConfig } from "../config/load.ts";
 * import { log } from "../log/logging.ts";
 * import { ServiceHost } from "../service/service_host.ts";
 * import { ToolRegistry } from "../tools/registry.ts";
 *
 * const { config } = await loadConfig({ readEnv: (name) => Deno.env.get(name), cwd: Deno.cwd() });
 * const services = new ServiceHost({ clock: systemClock, logger: log("service"), heartbeatMs: 15_000 });
 * const { memory, context } = await startMemory({
 *   config: config.memory,
 *   dataDir: config.daemon.data_dir,
 *   clock: systemClock,
 *   logger: log("memory"),
 *   services,
 *   tools: new ToolRegistry(),
 *   provider: undefined, // the rule-based distiller
 *   persona: "You are a helpful home butler.",
 *   selfNames: [],
 * });
 * context.size; // the entries restored from the last run
 * ```
 */
export async function startMemory(options: MemorySetupOptions): Promise<MemorySetup> {
  const { config } = options;
  const memory = await options.services.start(
    new MemoryService({
      dir: join(options.dataDir, "memory"),
      clock: options.clock,
      logger: options.logger,
      jobEveryMs: config.distill_interval,
      coldAfterMs: config.cold_after,
      provider: options.provider,
      persona: options.persona,
      selfNames: options.selfNames,
      ...(options.damaged ? { damaged: options.damaged } : {}),
      ...(options.health ? { health: options.health } : {}),
    }),
  );
  const context = new ContextWindow({
    maxEntries: config.context_size,
    maxTokens: config.context_tokens,
    entries: memory.restored,
    onEvict: (entries) => memory.archive(entries),
  });
  for (const tool of memory.tools()) options.tools.register(tool);
  memory.keep(context);
  return { memory, context };
}
