/**
 * The knowledge base as a {@link Service}: opens its index and the base, watches the folder, re-scans on the
 * heartbeat (fsync of the index log included), and re-indexes as a periodic job.
 *
 * @module
 */

import type { DamagedFiles } from "../fs/set_aside.ts";
import type { StoreHealth } from "../fs/store_health.ts";
import type { Logger } from "@logtape/logtape";
import type { Clock } from "../clock.ts";
import { checkContained } from "../fs/contained.ts";
import { VectorStore } from "../search/store.ts";
import type { JobSpec, Service } from "../service/service.ts";
import { KnowledgeBase } from "./knowledge_base.ts";

/** Options of {@link KnowledgeService}. */
export interface KnowledgeServiceOptions {
  /** `paths.knowledge`. */
  dir: string;
  /** Folder of the section index (`data_dir/vector/knowledge`). */
  indexDir: string;
  /** `daemon.data_dir`: the index folder must lie inside it with no link on the way. */
  dataDir: string;
  clock: Clock;
  logger: Logger;
  /** `memory.distill_interval`: how often the index is rebuilt and snapshotted. */
  reindexEveryMs: number;
  /** Where a damaged index file is set aside and recorded (`fs/set_aside.ts`; the daemon's list). */
  damaged?: DamagedFiles;
  /** Where an index write the disk refuses marks "knowledge index" degraded (`/api/status` `storage.degraded`). */
  health?: StoreHealth;
}

/** The `knowledge` service. */
export class KnowledgeService implements Service {
  readonly name = "knowledge";
  #options: KnowledgeServiceOptions;
  #store: VectorStore | undefined;
  #base: KnowledgeBase | undefined;

  /**
   * @example
   * ```ts
   * import { join } from "node:path";
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   * import { ServiceHost } from "../service/service_host.ts";
   *
   * const dataDir = "/var/lib/homed"; // daemon.data_dir
   * const services = new ServiceHost({ clock: systemClock, logger: log(), heartbeatMs: 15_000 });
   * const knowledge = await services.start(
   *   new KnowledgeService({
   *     dir: join(dataDir, "knowledge"),
   *     indexDir: join(dataDir, "vector", "knowledge"),
   *     dataDir,
   *     clock: systemClock,
   *     logger: log("knowledge"),
   *     reindexEveryMs: 30 * 60_000,
   *   }),
   * );
   * knowledge.base.search("rice cooker");
   * ```
   */
  constructor(options: KnowledgeServiceOptions) {
    this.#options = options;
  }

  /** The knowledge base; only after {@link KnowledgeService.start}. */
  get base(): KnowledgeBase {
    if (!this.#base) throw new RangeError("The knowledge service is not started");
    return this.#base;
  }

  async start(): Promise<void> {
    const { logger, clock } = this.#options;
    await checkContained(this.#options.dataDir, this.#options.indexDir);
    const store = await VectorStore.open(this.#options.indexDir, {
      compactEvery: 5_000,
      now: () => clock.now(),
      ...(this.#options.damaged ? { damaged: this.#options.damaged } : {}),
      onRecovery: (message) => logger.warning("Knowledge index: {message}", { message }),
      ...(this.#options.health ? { health: { record: this.#options.health, store: "knowledge index" } } : {}),
    });
    try {
      this.#base = await KnowledgeBase.open({ dir: this.#options.dir, store, clock, logger });
    } catch (error) {
      await store.close();
      throw new Error(`paths.knowledge: ${this.#options.dir} cannot be used: ${(error as Error).message}`, {
        cause: error,
      });
    }
    this.#store = store;
    this.#base.watch();
  }

  async stop(): Promise<void> {
    await this.#base?.close();
    await this.#store?.close();
  }

  /** Flushes the index log (rewriting the index if its files vanished) and picks up edits the watcher missed. */
  async heartbeat(): Promise<void> {
    await this.#store?.sync();
    await this.#base?.sync();
  }

  jobs(): JobSpec[] {
    return [{ name: "reindex", everyMs: this.#options.reindexEveryMs, run: () => this.base.reindex() }];
  }

  status(): Record<string, unknown> {
    return {
      ...this.#base?.counts(),
      index_documents: this.#store?.size ?? 0,
      index_generation: this.#store?.generation ?? 0,
    };
  }
}
