/**
 * Layer 3: the graph (the seed's GraphDB) — entities (name, type, aliases, mention count, first and last seen) and facts as triples with
 * provenance and a validity interval. A fact about a single-valued property ("the lamp is in the bedroom" after "the
 * lamp is in the living room") closes the old triple (`valid_to`) instead of adding a contradiction; history stays.
 * The owner may correct a fact by hand (closed, and the new value holds `corrected by <who>`) or delete one; the
 * console lists entities and an entity's one-step neighbours (facts whose object is another entity).
 *
 * Every fact keeps who said it and their trust (`said_by`, `trust`; schema 8 — older facts: unknown speaker, the
 * household's). **A guest's claim never replaces a household member's or the owner's fact:** a guest's new value of a
 * single-valued predicate whose holding fact is of trust `household` or `owner` is not recorded at all — no fact, no
 * closed history row, no mention, no alias — and the refusal is reported to `onRefuse` (the memory logs it); the
 * guest's words stay in the journal and their documents. A guest saying the same value confirms the fact (its
 * provenance grows, its trust does not); someone more trusted confirming a guest's fact makes it theirs (its
 * `saidBy` and `trust` become the confirmer's), so no guest can replace it afterwards. Many-valued facts close
 * nothing, so a guest's are recorded.
 *
 * This module is the store: each write in one transaction, and what it tells its owner after the commit. The reads are
 * `graph_reader.ts`, the rules of each write `graph_writer.ts`, the vocabulary `fact.ts` and `heard.ts` (who may read a
 * fact), the decoding of rows `graph_rows.ts`.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { transaction } from "../database.ts";
import { durably } from "../../sqlite/durability.ts";
import type { Trust } from "../../identity/trust.ts";
import { SynonymIndex } from "./synonyms.ts";
import type { Fact, FactDraft, FactOutcome, Refusal } from "./fact.ts";
import { GraphReader } from "./graph_reader.ts";
import { GraphWriter, type Merge } from "./graph_writer.ts";
import { normalize } from "./graph_rows.ts";

// What this module exported before the reads, the writes and their vocabulary were split out of it: importers of
// the graph find it all here still.
export { correctedByTag, type Entity, type Fact, type FactDraft, type FactOutcome, type Refusal } from "./fact.ts";
export { factVisibleTo, type HeardIn, OWNER_ONLY } from "./heard.ts";
export type { EntitySummary, EntityText, Neighborhood } from "./graph_reader.ts";
export { FactConflict, type Merge } from "./graph_writer.ts";

/** Options of a {@linkcode GraphStore}. */
export interface GraphStoreOptions {
  /** Told when a new name was filed as an alias of a known entity (for the log). */
  onMerge?: (merge: Merge) => void;
  /** Told, after each committed write, which entities it touched (their ids; some may have been deleted). */
  onChange?: (entityIds: ReadonlySet<number>) => void;
  /** Told, after each committed write, of each guest's claim it did not record (for the log). */
  onRefuse?: (refusal: Refusal) => void;
}

/** The graph: its reads ({@link GraphReader}) and, each in one transaction, its writes. */
export class GraphStore extends GraphReader {
  #db: DatabaseSync;
  #writer: GraphWriter;
  #onChange: NonNullable<GraphStoreOptions["onChange"]>;
  #onRefuse: NonNullable<GraphStoreOptions["onRefuse"]>;

  /**
   * Reads nothing: the synonym index of the names and aliases already stored is in `db` (memory.db schema 9).
   *
   * @example
   * ```ts
   * import { log } from "../../log/logging.ts";
   * import { openMemoryDb } from "../database.ts";
   *
   * const logger = log("memory");
   * const graph = new GraphStore(openMemoryDb("/var/lib/homed/memory/memory.db"), {
   *   onMerge: (merge) => logger.info("{alias} is another name of {entity}", merge),
   * });
   * ```
   */
  constructor(db: DatabaseSync, options: GraphStoreOptions = {}) {
    super(db);
    this.#db = db;
    const onMerge = options.onMerge ?? (() => {});
    this.#onChange = options.onChange ?? (() => {});
    this.#onRefuse = options.onRefuse ?? (() => {});
    this.#writer = new GraphWriter(db, this, new SynonymIndex(db), onMerge);
  }

  /** Runs a write in one transaction; the synonym index is in it too, so a rolled-back write files no name. */
  #write<T>(body: (writer: GraphWriter) => T): T {
    const changes = this.#writer.begin();
    const result = transaction(this.#db, () => body(this.#writer));
    if (changes.touched.size) this.#onChange(changes.touched);
    for (const refusal of changes.refused) this.#onRefuse(refusal);
    return result;
  }

  /**
   * {@link GraphStore.#write} for a change a person is told of (a correction, a deletion, a forgetting): committed with
   * `synchronous = FULL`, on disk before it returns (issue 38).
   */
  #acknowledged<T>(body: (writer: GraphWriter) => T): T {
    return durably(this.#db, () => this.#write(body));
  }

  /**
   * Records a fact in one transaction: the same open fact gains provenance ("confirmed"); for a single-valued
   * predicate a different open value is closed at `time` ("replaced") — unless the draft is a guest's and that value
   * was said by a household member or the owner ("refused": nothing recorded, `onRefuse` told); otherwise it is
   * "added". Throws `RangeError` naming an empty field.
   *
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   *
   * const graph = new GraphStore(openMemoryDb(":memory:"));
   * const lamp = { name: "客厅灯", type: "device" };
   * graph.record({ subject: lamp, predicate: "位于", object: "客厅", time: Date.now(), provenance: ["e8"], single: true });
   * // "added"
   * graph.record({ subject: lamp, predicate: "位于", object: "卧室", time: Date.now(), provenance: ["e9"], single: true });
   * // "replaced": the lamp is no longer in the living room (a draft without `trust` is the household's)
   * const guest = { saidBy: "visitor", trust: "guest" } as const;
   * graph.record({ subject: lamp, predicate: "位于", object: "车库", time: Date.now(), provenance: ["e10"], single: true, ...guest });
   * // "refused": a guest's claim does not replace the household's fact
   * ```
   */
  record(draft: FactDraft): FactOutcome {
    return this.#write((writer) => writer.record(draft));
  }

  /**
   * Records several facts and runs `also` (e.g. moving the distiller's cursor) in one transaction: all of it lands,
   * or none of it.
   */
  recordBatch(drafts: readonly FactDraft[], also: () => void = () => {}): FactOutcome[] {
    return this.#write((writer) => {
      const outcomes = drafts.map((draft) => writer.record(draft));
      also();
      return outcomes;
    });
  }

  /**
   * Forgets what came from `eventIds`: each fact loses those event ids from its provenance and is deleted when none
   * is left; entities left without facts are deleted too. Returns how many facts were deleted. One transaction.
   */
  forget(eventIds: ReadonlySet<string>): number {
    return this.#acknowledged((writer) => writer.forget(eventIds));
  }

  /**
   * Corrects a fact that holds, in one transaction: it is closed at `time`, and a fact with the same subject and
   * predicate and the new `object` holds from `time`, its provenance `corrected by <who>`, its `correctedBy` and
   * `saidBy` `who` and its trust `trust` (the console lets only the owner correct, so `owner` when not given).
   * When another holding fact of that subject and predicate already has the new value (a many-valued predicate), that
   * one gains the provenance, `correctedBy`, `saidBy` and `trust` instead of a duplicate. The subject's mention count is left alone (a
   * correction is not a mention). Returns `undefined` for an unknown id; throws {@linkcode FactConflict} when the fact
   * no longer holds or already has that value, `RangeError` for an empty object.
   *
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   *
   * const graph = new GraphStore(openMemoryDb(":memory:"));
   * const lamp = { name: "客厅灯", type: "device" };
   * graph.record({ subject: lamp, predicate: "位于", object: "客厅", time: Date.now(), provenance: ["e8"], single: true });
   * const [wrong] = graph.facts("客厅灯");
   * graph.correct(wrong!.id, "卧室", "owner", Date.now());
   * // { superseded: { …, object: "客厅", validTo: … }, fact: { …, object: "卧室", provenance: ["corrected by owner"],
   * //   correctedBy: "owner", saidBy: "owner", trust: "owner" } }
   * ```
   */
  correct(
    id: number,
    object: string,
    who: string,
    time: number,
    trust: Trust = "owner",
  ): { superseded: Fact; fact: Fact } | undefined {
    const value = normalize(object);
    if (value === "") throw new RangeError("A fact needs a non-empty object");
    return this.#acknowledged((writer) => writer.correct(id, value, who, time, trust));
  }

  /**
   * Deletes one fact by its row id (its entity too when no fact is left about it), in one transaction; returns
   * whether there was such a fact.
   *
   * @example
   * ```ts
   * declare const graph: GraphStore;
   * graph.delete(2); // true
   * graph.delete(2); // false: already gone
   * ```
   */
  delete(id: number): boolean {
    return this.#acknowledged((writer) => writer.delete(id));
  }
}
