/**
 * Teaching the memory graph Home Assistant's entities: each entity's name, area and aliases go to the device's
 * `learnEntities` whenever any of them changes — after each registry load, and a microtask after a state event that
 * added, removed or renamed an entity (so a burst of such events is learned once). An unchanged list is not handed
 * over again, and the hand-overs run one after another, never two at once.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { HaCache } from "./ha_cache.ts";

/** One entity as the memory graph learns it. */
export interface LearnedEntity {
  id: string;
  name: string;
  area: string | null;
  aliases: string[];
}

/** Options of {@link HaLearner}. */
export interface HaLearnerOptions {
  /** Called with every entity's name, area and aliases whenever any of them changes; undefined: nothing is learned. */
  learnEntities: ((entities: LearnedEntity[]) => void | Promise<void>) | undefined;
  /** Where the entities are read. */
  cache: HaCache;
  logger: Logger;
}

/** Hands the entities to `learnEntities` when they changed. */
export class HaLearner {
  readonly #options: HaLearnerOptions;
  #learned = "";
  #learning: Promise<void> = Promise.resolve();
  #learnQueued = false;

  /** Learns nothing until told to. */
  constructor(options: HaLearnerOptions) {
    this.#options = options;
  }

  /** The hand-over under way (or the last one, settled); it never rejects. */
  get learning(): Promise<void> {
    return this.#learning;
  }

  /** {@link HaLearner.learn} in a microtask, once however many times it is asked meanwhile. */
  learnSoon(): void {
    if (!this.#options.learnEntities || this.#learnQueued) return;
    this.#learnQueued = true;
    queueMicrotask(() => {
      this.#learnQueued = false;
      this.learn();
    });
  }

  /** Hands the entities to `learnEntities` when their names, areas or aliases differ from the last time. */
  learn(): void {
    const learn = this.#options.learnEntities;
    if (!learn) return;
    const cache = this.#options.cache;
    const entities: LearnedEntity[] = cache.shownIds().map((id) => ({
      id,
      name: cache.nameOf(id),
      area: cache.areaOf(id)?.name ?? null,
      aliases: [...(cache.entry(id)?.aliases ?? [])],
    }));
    const signature = JSON.stringify(entities);
    if (signature === this.#learned) return;
    this.#learned = signature;
    this.#learning = this.#learning.then(() => learn(entities)).catch((error) => {
      this.#options.logger.warning("Learning the Home Assistant entities failed: {error}", { error });
    });
  }
}
