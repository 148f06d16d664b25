/**
 * The entity index (Indexer.Sync for layer 3): one vector-store document per entity — its names, type and the facts
 * that hold about it — kept in step with the graph after every committed write, so recall finds facts through the
 * index instead of scoring every fact on every query.
 *
 * @module
 */

import type { Viewer } from "../../identity/visibility.ts";
import type { VectorStore } from "../../search/store.ts";
import type { Fact, GraphStore } from "./graph_store.ts";
import { factVisibleTo, type HeardIn, parseHeard } from "./heard.ts";

/** A fact found for a query, scored by how well its entity matched; its origins were checked by the search. */
export interface FactHit {
  fact: Omit<Fact, "heard">;
  score: number;
}

/**
 * A fact kept read, its origins (`heard`) as stored until a household member's search reads them: a fact said in the
 * household's group every few days has hundreds of them (≈ 3 kB of JSON), which the owner's recall never needs.
 */
interface KeptFact {
  fact: Omit<Fact, "heard">;
  stored: string;
  heard?: HeardIn[];
}

/** An entity's document id in the index: this and its id. */
const DOC_PREFIX = "e";
const docId = (id: number) => `${DOC_PREFIX}${id}`;

/**
 * Entities whose open facts are kept read (a household member's name is in most questions: their facts were read from
 * SQLite on every recall). The oldest read goes first; an entry is ≈ one or two facts.
 */
const CACHED_ENTITIES = 4_096;

/** A copy of a cached fact: callers may keep or change what they are given (recall hands out `provenance`). */
const copyOf = (fact: Omit<Fact, "heard">): Omit<Fact, "heard"> => ({ ...fact, provenance: [...fact.provenance] });

/** The index over a graph's entities. */
export class EntityIndex {
  #graph: GraphStore;
  #store: VectorStore;
  /**
   * Open facts of entities, by id, in fact order; dropped in {@linkcode EntityIndex.refresh}, which the graph calls
   * after every committed write with each entity whose facts it changed. The same for every asker: visibility is
   * filtered by the caller on each search.
   */
  #facts = new Map<number, KeptFact[]>();

  /**
   * Wraps an opened store; call {@linkcode EntityIndex.reconcile} once at start.
   *
   * @example
   * ```ts
   * import { join } from "node:path";
   * import { openMemoryDb } from "../database.ts";
   * import { VectorStore } from "../../search/store.ts";
   * import { GraphStore } from "./graph_store.ts";
   *
   * const dir = "/var/lib/homed/memory";
   * const graph = new GraphStore(openMemoryDb(join(dir, "memory.db")), { onChange: (ids) => entities.refresh(ids) });
   * const entities = new EntityIndex(graph, await VectorStore.open(join(dir, "graph-index")));
   * entities.reconcile(); // 0 after a clean stop
   * ```
   */
  constructor(graph: GraphStore, store: VectorStore) {
    this.#graph = graph;
    this.#store = store;
  }

  /**
   * Writes the current text of the entities `ids` (deleting those that no longer exist) in one log write.
   *
   * @example
   * ```ts
   * import type { DatabaseSync } from "node:sqlite";
   * import { GraphStore } from "./graph_store.ts";
   *
   * declare const db: DatabaseSync;
   * declare const entities: EntityIndex;
   * new GraphStore(db, { onChange: (ids) => entities.refresh(ids) });
   * ```
   */
  refresh(ids: Iterable<number>): void {
    const docs: Array<{ id: string; text: string; meta: { time: number } }> = [];
    for (const id of ids) {
      this.#facts.delete(id);
      const entity = this.#graph.entityText(id);
      if (entity) docs.push({ id: docId(id), text: entity.text, meta: { time: entity.lastSeen } });
      else this.#store.delete(docId(id));
    }
    if (docs.length) this.#store.putMany(docs);
  }

  /**
   * Indexes the entities the index does not hold (a crash between the graph's commit and the index's write, or an
   * index set aside as corrupt); returns how many it wrote. With `closedCleanly` (memory was closed cleanly and the
   * index recovered nothing at open) equal counts are taken as complete and no id is read.
   */
  reconcile(options: { closedCleanly?: boolean } = {}): number {
    // After a clean close (see DocumentStore.reconcile) equal counts say nothing is missing.
    if (options.closedCleanly && this.#store.size === this.#graph.counts().entities) return 0;
    if (this.#graph.indexHoldsEntities(this.#store, DOC_PREFIX)) return 0;
    const missing: number[] = [];
    for (const id of this.#graph.eachEntityId()) if (!this.#store.has(docId(id))) missing.push(id);
    this.refresh(missing);
    return missing.length;
  }

  /**
   * The facts that hold about the `k` entities best matching `query`, each scored by its entity's match; with a
   * `viewer`, only those the viewer may read (`factVisibleTo`).
   *
   * @example
   * ```ts
   * declare const entities: EntityIndex;
   * entities.search("where is the living room lamp", 5);
   * // [{ fact: { id: 2, subject: "客厅灯", subjectType: "device", predicate: "位于", object: "卧室", provenance: ["e9"],
   * //   validFrom: 1767657600000, validTo: null }, score: 0.63 }]
   * ```
   */
  search(query: string, k: number, viewer?: Viewer): FactHit[] {
    const hits = this.#store.search(query, { k });
    const scores = new Map(hits.map((hit) => [Number(hit.id.slice(1)), hit.score]));
    const factsOf = new Map<number, KeptFact[]>();
    const missing: number[] = [];
    for (const id of scores.keys()) {
      const cached = this.#facts.get(id);
      if (cached) factsOf.set(id, cached);
      else missing.push(id);
    }
    if (missing.length) {
      for (const id of missing) factsOf.set(id, []);
      for (const { entity, heard, ...fact } of this.#graph.openFactRowsOf(missing)) {
        factsOf.get(entity)!.push({ fact, stored: heard });
      }
      for (const id of missing) {
        if (this.#facts.size >= CACHED_ENTITIES) this.#facts.delete(this.#facts.keys().next().value!);
        this.#facts.set(id, factsOf.get(id)!);
      }
    }
    const found: FactHit[] = [];
    for (const [id, facts] of factsOf) {
      for (const kept of facts) {
        // Its origins are parsed when the viewer's trust asks for them (the owner reads every fact, a guest none).
        const origins = {
          get heard() {
            return (kept.heard ??= parseHeard(kept.stored));
          },
        };
        if (viewer && !factVisibleTo(viewer, origins)) continue;
        found.push({ fact: copyOf(kept.fact), score: scores.get(id)! });
      }
    }
    // Fact order last: one query over all the entities returned them in that order before a stable sort.
    return found.sort((a, b) => b.score - a.score || b.fact.validFrom - a.fact.validFrom || a.fact.id - b.fact.id);
  }
}
