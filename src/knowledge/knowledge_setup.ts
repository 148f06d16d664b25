/**
 * The daemon's knowledge step: the starter knowledge on a first start, then the `knowledge` service started.
 *
 * @module
 */

import type { DamagedFiles } from "../fs/set_aside.ts";
import type { StoreHealth } from "../fs/store_health.ts";
import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { Clock } from "../clock.ts";
import type { ServiceHost } from "../service/service_host.ts";
import type { KnowledgeBase } from "./knowledge_base.ts";
import { KnowledgeService } from "./knowledge_service.ts";
import { seedKnowledge } from "./starter_knowledge.ts";

/** Options of {@link startKnowledge}. */
export interface KnowledgeSetupOptions {
  /** `paths.knowledge`. */
  dir: string;
  /** `daemon.data_dir`: the section index goes in `vector/knowledge` under it. */
  dataDir: string;
  /** `memory.distill_interval`: how often the index is rebuilt. */
  reindexEveryMs: number;
  clock: Clock;
  /** The `knowledge` logger (seeding and the service). */
  logger: Logger;
  /** Where the service is started. */
  services: ServiceHost;
  /** Where a damaged index file is set aside and recorded (the daemon's list, for `/api/status`). */
  damaged?: DamagedFiles;
  /** Where an index write the disk refuses marks "knowledge index" degraded (the daemon's, for `/api/status`). */
  health?: StoreHealth;
}

/** What {@link startKnowledge} gives the daemon. */
export interface KnowledgeSetup {
  service: KnowledgeService;
  /** The open knowledge base (tools, prompt, routes, status). */
  base: KnowledgeBase;
}

/**
 * Seeds the starter knowledge when the folder is new (a first start of the standard layout), then starts the
 * `knowledge` service.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { log } from "../log/logging.ts";
 * import { ServiceHost } from "../service/service_host.ts";
 *
 * const services = new ServiceHost({ clock: systemClock, logger: log("service"), heartbeatMs: 15_000 });
 * const knowledge = await startKnowledge({
 *   dir: "/var/lib/homed/knowledge",
 *   dataDir: "/var/lib/homed",
 *   reindexEveryMs: 30 * 60_000,
 *   clock: systemClock,
 *   logger: log("knowledge"),
 *   services,
 * });
 * knowledge.base.counts(); // { topics: 2, sections: … } with the starter knowledge
 * ```
 */
export async function startKnowledge(options: KnowledgeSetupOptions): Promise<KnowledgeSetup> {
  const { dir, dataDir, clock, logger } = options;
  // A first start of the standard layout (or a new knowledge folder): the starter knowledge goes in.
  await seedKnowledge(dir, logger);
  const service = await options.services.start(
    new KnowledgeService({
      dir,
      indexDir: join(dataDir, "vector", "knowledge"),
      dataDir,
      clock,
      logger,
      reindexEveryMs: options.reindexEveryMs,
      ...(options.damaged ? { damaged: options.damaged } : {}),
      ...(options.health ? { health: options.health } : {}),
    }),
  );
  return { service, base: service.base };
}
