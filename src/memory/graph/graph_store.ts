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
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { transaction } from "../database.ts";
import type { VectorStore } from "../../search/store.ts";
import { indexMatchesRows } from "../index_digest.ts";
import { normalizeName, SynonymIndex } from "./synonyms.ts";
import { prepared } from "../../sqlite/prepared.ts";
import { lowerTrust, type Trust } from "../../identity/trust.ts";
import { type Provenance, type Viewer, visibleTo } from "../../identity/visibility.ts";

/**
 * One message a fact was learnt from, as who may read it (`identity/visibility.ts`): its event, channel, sender and
 * their trust. A fact's `heard` lists them (schema 10); an empty list is the household's (facts from before, from the
 * configuration, and every fact also learnt where the household could read it).
 */
export interface HeardIn extends Provenance {
  event: string;
}

/** Read by the owner alone: what is left of a fact's origin once the messages it was heard in are forgotten. */
export const OWNER_ONLY: HeardIn = { event: "", source: "owner-only", sender: "", trust: "owner" };

/**
 * May `viewer` read `fact`? The owner reads every fact, a guest none (a fact merges what everyone said about an
 * entity), a household member those learnt in at least one message they may read — or the household's.
 *
 * @example
 * ```ts
 * declare const fact: Fact;
 * factVisibleTo({ sender: "alice", trust: "household" }, fact);
 * ```
 */
export function factVisibleTo(viewer: Viewer, fact: Pick<Fact, "heard">): boolean {
  if (viewer.trust === "owner") return true;
  if (viewer.trust !== "household") return false;
  return fact.heard.length === 0 || fact.heard.some((heard) => visibleTo(viewer, heard));
}

/** The union of two origins (`[]`: the household's, which takes in any other). */
function unionHeard(a: readonly HeardIn[], b: readonly HeardIn[]): HeardIn[] {
  if (!a.length || !b.length) return [];
  const all = new Map<string, HeardIn>();
  for (const heard of [...a, ...b]) all.set(JSON.stringify([heard.event, heard.source, heard.sender]), heard);
  return [...all.values()];
}

function parseHeard(text: unknown): HeardIn[] {
  try {
    const parsed = JSON.parse(String(text ?? "[]")) as unknown;
    return Array.isArray(parsed) ? parsed as HeardIn[] : [OWNER_ONLY];
  } catch {
    return [OWNER_ONLY];
  }
}

/** An entity. */
export interface Entity {
  id: number;
  name: string;
  type: string;
  aliases: string[];
  mentions: number;
  firstSeen: number;
  lastSeen: number;
}

/** A fact. `validTo` is null while it holds. */
export interface Fact {
  id: number;
  subject: string;
  subjectType: string;
  predicate: string;
  object: string;
  provenance: string[];
  validFrom: number;
  validTo: number | null;
  /** Who corrected it by hand ({@linkcode GraphStore.correct}): set on the fact a correction made, absent otherwise. */
  correctedBy?: string;
  /**
   * Who said it, as their channel named them (the most trusted of those who said it; who corrected it for a
   * correction); `""` when not known (facts from before schema 8, facts from the configuration).
   */
  saidBy: string;
  /** Their trust; facts from before schema 8 are the household's. */
  trust: Trust;
  /** The messages it was learnt from, as who may read them; `[]`: the household's (see {@link factVisibleTo}). */
  heard: HeardIn[];
}

/** An entity as the console lists it: how often it was mentioned, how many facts hold about it, when last seen. */
export interface EntitySummary {
  name: string;
  type: string;
  /** Times a recorded fact named it as its subject (each record, confirmation included, counts one). */
  mentions: number;
  /** Facts that hold about it now (closed history not counted). */
  facts: number;
  /** Milliseconds since the epoch. */
  lastSeen: number;
}

/** An entity and those its facts connect it to, one step ({@linkcode GraphStore.neighbors}). */
export interface Neighborhood {
  /** The entity's stored name (a query by alias gives the name it is filed under). */
  center: string;
  /** The entity first, then its neighbours. */
  nodes: Array<{ name: string; type: string; mentions: number }>;
  edges: Array<{ from: string; to: string; predicate: string; holds: boolean }>;
}

/** A correction that cannot be made: the fact no longer holds, or already says the new value. */
export class FactConflict extends Error {
  /**
   * @example
   * ```ts
   * throw new FactConflict('Fact 7 already says "卧室"');
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "FactConflict";
  }
}

/** A fact to record. */
export interface FactDraft {
  subject: { name: string; type: string };
  predicate: string;
  object: string;
  /** When it was said (ms since the epoch). */
  time: number;
  /** Input event ids it comes from. */
  provenance: string[];
  /** The predicate holds one value at a time (a location, a state): a different value closes the old fact. */
  single: boolean;
  /** Who said it (the sender, as their channel named them); absent: not known (e.g. the configuration). */
  saidBy?: string;
  /** Their trust; absent: the household's (what homed learns from its configuration). */
  trust?: Trust;
  /** The messages it was learnt from (see {@link HeardIn}); absent or empty: the household's. */
  heard?: readonly HeardIn[];
}

/**
 * What recording a fact did. `"refused"`: a guest's new value of a single-valued predicate that a household member
 * or the owner said — nothing was recorded (see the module's description).
 */
export type FactOutcome = "added" | "confirmed" | "replaced" | "refused";

/** A guest's claim the graph did not record: the draft, and the holding fact it would have replaced. */
export interface Refusal {
  draft: FactDraft;
  held: Fact;
}

function normalize(text: string): string {
  return text.normalize("NFKC").replace(/\s+/g, " ").trim();
}

/** `text` as a LIKE pattern that matches it literally (with a backslash as the ESCAPE character). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The provenance entry of a fact corrected by hand by `who` (an identity's name).
 *
 * @example
 * ```ts
 * correctedByTag("owner"); // "corrected by owner"
 * ```
 */
export function correctedByTag(who: string): string {
  return `corrected by ${who}`;
}

/** Options of a {@linkcode GraphStore}. */
export interface GraphStoreOptions {
  /** Told when a new name was filed as an alias of a known entity (for the log). */
  onMerge?: (merge: { alias: string; entity: string; type: string }) => void;
  /** Told, after each committed write, which entities it touched (their ids; some may have been deleted). */
  onChange?: (entityIds: ReadonlySet<number>) => void;
  /** Told, after each committed write, of each guest's claim it did not record (for the log). */
  onRefuse?: (refusal: Refusal) => void;
}

/** One entity as text for the entity index: names, type and what holds about it. */
export interface EntityText {
  text: string;
  lastSeen: number;
}

/** The graph. */
export class GraphStore {
  #db: DatabaseSync;
  #synonyms: SynonymIndex;
  #onMerge: NonNullable<GraphStoreOptions["onMerge"]>;
  #onChange: NonNullable<GraphStoreOptions["onChange"]>;
  #onRefuse: NonNullable<GraphStoreOptions["onRefuse"]>;
  #touched = new Set<number>();
  #refused: Refusal[] = [];

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
    this.#db = db;
    this.#onMerge = options.onMerge ?? (() => {});
    this.#onChange = options.onChange ?? (() => {});
    this.#onRefuse = options.onRefuse ?? (() => {});
    this.#synonyms = new SynonymIndex(db);
  }

  /** Runs a write in one transaction; the synonym index is in it too, so a rolled-back write files no name. */
  #write<T>(body: () => T): T {
    this.#touched = new Set();
    this.#refused = [];
    const result = transaction(this.#db, body);
    if (this.#touched.size) this.#onChange(this.#touched);
    for (const refusal of this.#refused) this.#onRefuse(refusal);
    return result;
  }

  #entity(name: string, type: string, time: number): number {
    const row = prepared(this.#db, "SELECT id FROM entities WHERE name = ? AND type = ?").get(name, type) as
      | { id: number }
      | undefined;
    const id = row?.id ?? this.#fileAsAlias(name, type);
    if (id !== undefined) {
      prepared(this.#db, "UPDATE entities SET mentions = mentions + 1, last_seen = MAX(last_seen, ?) WHERE id = ?")
        .run(time, id);
      return id;
    }
    const inserted = Number(
      prepared(this.#db, "INSERT INTO entities (name, type, mentions, first_seen, last_seen) VALUES (?, ?, 1, ?, ?)")
        .run(name, type, time, time).lastInsertRowid,
    );
    this.#synonyms.add(inserted, name, type);
    return inserted;
  }

  /** The stored entity `name` of `type` is, by name or as another name of it, without changing anything. */
  #find(name: string, type: string): number | undefined {
    const row = prepared(this.#db, "SELECT id FROM entities WHERE name = ? AND type = ?").get(name, type) as
      | { id: number }
      | undefined;
    if (row) return row.id;
    const id = this.#synonyms.probe(name, type);
    if (id === undefined) return undefined;
    // Checked, as a probe's answer always is: an entity deleted by hand (not through the graph) keeps its names.
    return prepared(this.#db, "SELECT 1 FROM entities WHERE id = ? AND type = ?").get(id, type) ? id : undefined;
  }

  /**
   * When `name` is another name of a stored entity of `type`, files it as that entity's alias (logged) and returns
   * its id. The row is checked: an entity deleted by hand (not through the graph) keeps its names in the index.
   */
  #fileAsAlias(name: string, type: string): number | undefined {
    const id = this.#synonyms.probe(name, type);
    if (id === undefined) return undefined;
    const row = prepared(this.#db, "SELECT name, aliases FROM entities WHERE id = ? AND type = ?").get(id, type) as
      | { name: string; aliases: string }
      | undefined;
    if (!row) return undefined;
    const aliases = JSON.parse(row.aliases) as string[];
    if (!aliases.includes(name)) {
      prepared(this.#db, "UPDATE entities SET aliases = ? WHERE id = ?").run(JSON.stringify([...aliases, name]), id);
      this.#synonyms.add(id, name, type);
      this.#onMerge({ alias: name, entity: row.name, type });
    }
    return id;
  }

  /** Takes the names of deleted entities out of the synonym index (in the deleting transaction). */
  #forgetNames(deleted: ReadonlyArray<{ id: number; name: string; type: string; aliases: string }>): void {
    for (const row of deleted) {
      this.#synonyms.remove(row.id, [row.name, ...JSON.parse(row.aliases) as string[]], row.type);
    }
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
    return this.#write(() => this.#record(draft));
  }

  /**
   * Records several facts and runs `also` (e.g. moving the distiller's cursor) in one transaction: all of it lands,
   * or none of it.
   */
  recordBatch(drafts: readonly FactDraft[], also: () => void = () => {}): FactOutcome[] {
    return this.#write(() => {
      const outcomes = drafts.map((draft) => this.#record(draft));
      also();
      return outcomes;
    });
  }

  #record(draft: FactDraft): FactOutcome {
    const name = normalize(draft.subject.name);
    const type = normalize(draft.subject.type);
    const predicate = normalize(draft.predicate);
    const object = normalize(draft.object);
    for (const [field, value] of Object.entries({ "subject.name": name, "subject.type": type, predicate, object })) {
      if (value === "") throw new RangeError(`A fact needs a non-empty ${field}`);
    }
    const trust = trustOf(draft.trust ?? "household");
    const saidBy = normalize(draft.saidBy ?? "");
    // "卧室" and "卧室的" are one value; the stored spelling stays.
    const key = normalizeName(object);
    if (draft.single && trust === "guest") {
      // Looked up before anything changes: a refused claim leaves no mention, alias or row behind.
      const known = this.#find(name, type);
      const held = known === undefined ? [] : this.#open(known, predicate);
      const kept = held.some((row) => normalizeName(row.object) === key)
        ? undefined
        : held.find((row) => trustOf(row.trust) !== "guest");
      if (kept) {
        this.#refused.push({ draft, held: this.fact(kept.id)! });
        return "refused";
      }
    }
    const subject = this.#entity(name, type, draft.time);
    this.#touched.add(subject);
    const open = this.#open(subject, predicate);
    const same = open.find((row) => normalizeName(row.object) === key);
    if (same) {
      const provenance = [...new Set([...JSON.parse(same.provenance) as string[], ...draft.provenance])];
      const heard = unionHeard(parseHeard(same.heard), draft.heard ?? []);
      prepared(this.#db, "UPDATE triples SET provenance = ?, heard = ? WHERE id = ?")
        .run(JSON.stringify(provenance), JSON.stringify(heard), same.id);
      const before = trustOf(same.trust);
      if (lowerTrust(before, trust) === before && before !== trust) {
        prepared(this.#db, "UPDATE triples SET said_by = ?, trust = ? WHERE id = ?").run(saidBy, trust, same.id);
      }
      return "confirmed";
    }
    let outcome: FactOutcome = "added";
    if (draft.single && open.length) {
      prepared(this.#db, "UPDATE triples SET valid_to = ? WHERE subject = ? AND predicate = ? AND valid_to IS NULL")
        .run(draft.time, subject, predicate);
      outcome = "replaced";
    }
    prepared(
      this.#db,
      `INSERT INTO triples (subject, predicate, object, provenance, valid_from, valid_to, said_by, trust, heard)
       VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
    ).run(
      subject,
      predicate,
      object,
      JSON.stringify([...new Set(draft.provenance)]),
      draft.time,
      saidBy,
      trust,
      JSON.stringify(draft.heard ?? []),
    );
    return outcome;
  }

  /** The facts that hold about the entity `subject` with `predicate`. */
  #open(
    subject: number,
    predicate: string,
  ): Array<{ id: number; object: string; provenance: string; trust: string; heard: string }> {
    return prepared(
      this.#db,
      "SELECT id, object, provenance, trust, heard FROM triples WHERE subject = ? AND predicate = ? AND valid_to IS NULL",
    ).all(subject, predicate) as Array<
      { id: number; object: string; provenance: string; trust: string; heard: string }
    >;
  }

  /**
   * Forgets what came from `eventIds`: each fact loses those event ids from its provenance and is deleted when none
   * is left; entities left without facts are deleted too. Returns how many facts were deleted. One transaction.
   */
  forget(eventIds: ReadonlySet<string>): number {
    return this.#write(() => {
      const rows = prepared(this.#db, "SELECT id, subject, provenance, heard FROM triples").all() as Array<
        Record<string, unknown>
      >;
      let deleted = 0;
      for (const row of rows) {
        const provenance = JSON.parse(String(row.provenance)) as string[];
        const left = provenance.filter((id) => !eventIds.has(id));
        if (left.length === provenance.length) continue;
        this.#touched.add(Number(row.subject));
        if (left.length) {
          // The messages it is still learnt from; when those it was heard in are all gone, the owner's alone.
          const was = parseHeard(row.heard);
          const kept = was.filter((heard) => !eventIds.has(heard.event));
          const heard = was.length && !kept.length ? [OWNER_ONLY] : kept;
          prepared(this.#db, "UPDATE triples SET provenance = ?, heard = ? WHERE id = ?").run(
            JSON.stringify(left),
            JSON.stringify(heard),
            Number(row.id),
          );
        } else {
          prepared(this.#db, "DELETE FROM triples WHERE id = ?").run(Number(row.id));
          deleted++;
        }
      }
      const orphans = prepared(
        this.#db,
        "DELETE FROM entities WHERE id NOT IN (SELECT subject FROM triples) RETURNING id, name, type, aliases",
      ).all() as Array<{ id: number; name: string; type: string; aliases: string }>;
      this.#forgetNames(orphans);
      return deleted;
    });
  }

  /**
   * An entity as one text for the entity index — name, aliases, type and each fact that holds ("位于 卧室") — or
   * `undefined` when it no longer exists.
   *
   * @example
   * ```ts
   * declare const graph: GraphStore;
   * graph.entityText(7); // { text: "客厅灯 客厅的灯 device 位于 卧室", lastSeen: 1767657600000 }
   * ```
   */
  entityText(id: number): EntityText | undefined {
    const row = prepared(this.#db, "SELECT name, type, aliases, last_seen FROM entities WHERE id = ?").get(id) as
      | { name: string; type: string; aliases: string; last_seen: number }
      | undefined;
    if (!row) return undefined;
    const facts = prepared(this.#db, "SELECT predicate, object FROM triples WHERE subject = ? AND valid_to IS NULL")
      .all(id) as Array<{ predicate: string; object: string }>;
    const text = [row.name, ...JSON.parse(row.aliases) as string[], row.type]
      .concat(facts.map((fact) => `${fact.predicate} ${fact.object}`)).join(" ");
    return { text, lastSeen: row.last_seen };
  }

  /** Every entity id, for checking the entity index at start. */
  entityIds(): number[] {
    return [...this.eachEntityId()];
  }

  /**
   * True when `store` holds exactly one document per entity, its id `prefix` and the entity's id — told from a digest
   * of the ids (`index_digest.ts`), none of them read into memory.
   */
  indexHoldsEntities(store: VectorStore, prefix: string): boolean {
    if (!/^\w+$/.test(prefix)) {
      throw new RangeError(`An entity document prefix must be a word, not ${JSON.stringify(prefix)}`);
    }
    return indexMatchesRows(this.#db, `'${prefix}' || id`, "entities", store);
  }

  /** Every entity id, in order, read as the caller goes (a year's 48k rows are never one array of objects). */
  *eachEntityId(): Generator<number> {
    for (const row of prepared(this.#db, "SELECT id FROM entities ORDER BY id").iterate() as Iterable<{ id: number }>) {
      yield row.id;
    }
  }

  /** The facts that hold about the entities `ids`, in fact order. */
  openFactsOf(ids: readonly number[]): Array<Fact & { entity: number }> {
    if (!ids.length) return [];
    const rows = prepared(
      this.#db,
      `SELECT t.id, t.subject AS entity, e.name AS subject, e.type AS subject_type, t.predicate, t.object, t.provenance,
         t.valid_from, t.valid_to, t.corrected_by, t.said_by, t.trust, t.heard
       FROM triples t JOIN entities e ON e.id = t.subject
       WHERE t.valid_to IS NULL AND t.subject IN (SELECT value FROM json_each(?)) ORDER BY t.id`,
    ).all(JSON.stringify(ids)) as Array<Record<string, unknown>>;
    return rows.map((row) => ({ ...factOf(row), entity: Number(row.entity) }));
  }

  /** The facts about an entity (any type), holding ones first, then history; newest first within each. */
  facts(name: string): Fact[] {
    const rows = prepared(
      this.#db,
      `SELECT t.id, e.name AS subject, e.type AS subject_type, t.predicate, t.object, t.provenance, t.valid_from, t.valid_to,
         t.corrected_by, t.said_by, t.trust, t.heard
       FROM triples t JOIN entities e ON e.id = t.subject
       WHERE e.name = ?1 OR EXISTS (SELECT 1 FROM json_each(e.aliases) WHERE value = ?1)
       ORDER BY (t.valid_to IS NOT NULL), t.valid_from DESC, t.id DESC`,
    ).all(normalize(name)) as Array<Record<string, unknown>>;
    return rows.map(factOf);
  }

  /**
   * The graph index for the system prompt: the most mentioned entities (name, type, mentions), most first.
   *
   * @example
   * ```ts
   * declare const graph: GraphStore;
   * graph.index(50); // [{ name: "客厅灯", type: "device", mentions: 7 }, { name: "Leo", type: "person", mentions: 3 }]
   * ```
   */
  index(limit: number): Array<{ name: string; type: string; mentions: number }> {
    const rows = prepared(
      this.#db,
      "SELECT name, type, mentions FROM entities ORDER BY mentions DESC, last_seen DESC, name LIMIT ?",
    ).all(limit) as Array<Record<string, unknown>>;
    return rows.map((row) => ({ name: String(row.name), type: String(row.type), mentions: Number(row.mentions) }));
  }

  /**
   * One fact by its row id, or `undefined`.
   *
   * @example
   * ```ts
   * declare const graph: GraphStore;
   * graph.fact(2); // { id: 2, subject: "客厅灯", subjectType: "device", predicate: "位于", object: "卧室", … }
   * ```
   */
  fact(id: number): Fact | undefined {
    const row = prepared(
      this.#db,
      `SELECT t.id, e.name AS subject, e.type AS subject_type, t.predicate, t.object, t.provenance, t.valid_from, t.valid_to,
         t.corrected_by, t.said_by, t.trust, t.heard
       FROM triples t JOIN entities e ON e.id = t.subject WHERE t.id = ?`,
    ).get(id) as Record<string, unknown> | undefined;
    return row ? factOf(row) : undefined;
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
    return this.#write(() => {
      const row = prepared(
        this.#db,
        "SELECT subject, predicate, object, valid_from, valid_to, heard FROM triples WHERE id = ?",
      ).get(id) as
        | {
          subject: number;
          predicate: string;
          object: string;
          valid_from: number;
          valid_to: number | null;
          heard: string;
        }
        | undefined;
      if (!row) return undefined;
      if (row.valid_to !== null) {
        throw new FactConflict(
          `Fact ${id} no longer holds (closed ${new Date(row.valid_to).toISOString()}); correct the fact that holds`,
        );
      }
      if (normalizeName(row.object) === normalizeName(value)) {
        throw new FactConflict(`Fact ${id} already says ${JSON.stringify(row.object)}`);
      }
      const tag = correctedByTag(who);
      // Never closed before it began (a clock set back).
      const at = Math.max(time, Number(row.valid_from));
      prepared(this.#db, "UPDATE triples SET valid_to = ? WHERE id = ?").run(at, id);
      const open = prepared(
        this.#db,
        "SELECT id, object, provenance, heard FROM triples WHERE subject = ? AND predicate = ? AND valid_to IS NULL",
      ).all(row.subject, row.predicate) as Array<{ id: number; object: string; provenance: string; heard: string }>;
      // The corrected value is read by whoever could read the value it corrects.
      const heard = parseHeard(row.heard);
      const same = open.find((other) => normalizeName(other.object) === normalizeName(value));
      let made: number;
      if (same) {
        const provenance = [...new Set([...JSON.parse(same.provenance) as string[], tag])];
        prepared(
          this.#db,
          "UPDATE triples SET provenance = ?, corrected_by = ?, said_by = ?, trust = ?, heard = ? WHERE id = ?",
        ).run(
          JSON.stringify(provenance),
          who,
          who,
          trust,
          JSON.stringify(unionHeard(parseHeard(same.heard), heard)),
          same.id,
        );
        made = same.id;
      } else {
        made = Number(
          prepared(
            this.#db,
            `INSERT INTO triples (subject, predicate, object, provenance, valid_from, valid_to, corrected_by, said_by, trust,
               heard)
             VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`,
          ).run(row.subject, row.predicate, value, JSON.stringify([tag]), at, who, who, trust, JSON.stringify(heard))
            .lastInsertRowid,
        );
      }
      this.#touched.add(row.subject);
      return { superseded: this.fact(id)!, fact: this.fact(made)! };
    });
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
    return this.#write(() => {
      const row = prepared(this.#db, "SELECT subject FROM triples WHERE id = ?").get(id) as
        | { subject: number }
        | undefined;
      if (!row) return false;
      prepared(this.#db, "DELETE FROM triples WHERE id = ?").run(id);
      this.#touched.add(row.subject);
      const orphans = prepared(
        this.#db,
        "DELETE FROM entities WHERE id = ? AND id NOT IN (SELECT subject FROM triples) RETURNING id, name, type, aliases",
      ).all(row.subject) as Array<{ id: number; name: string; type: string; aliases: string }>;
      this.#forgetNames(orphans);
      return true;
    });
  }

  /**
   * Entities for the console, at most `limit`: with an empty `query` the most mentioned; otherwise those whose name
   * or an alias contains it (case-insensitive for ASCII), exact names first, then names that start with it, then the
   * rest, each group most mentioned first.
   *
   * @example
   * ```ts
   * declare const graph: GraphStore;
   * graph.entities("灯", 20); // [{ name: "客厅灯", type: "device", mentions: 7, facts: 2, lastSeen: 1767657600000 }]
   * ```
   */
  entities(query: string, limit: number): EntitySummary[] {
    const q = normalize(query);
    const rows = (q === ""
      ? prepared(
        this.#db,
        `SELECT e.name, e.type, e.mentions, e.last_seen,
           (SELECT COUNT(*) FROM triples t WHERE t.subject = e.id AND t.valid_to IS NULL) AS facts
         FROM entities e ORDER BY e.mentions DESC, e.last_seen DESC, e.name LIMIT ?`,
      ).all(limit)
      : prepared(
        this.#db,
        `SELECT e.name, e.type, e.mentions, e.last_seen,
           (SELECT COUNT(*) FROM triples t WHERE t.subject = e.id AND t.valid_to IS NULL) AS facts,
           CASE
             WHEN e.name LIKE ?1 ESCAPE '\\' OR EXISTS (SELECT 1 FROM json_each(e.aliases) WHERE value LIKE ?1 ESCAPE '\\')
               THEN 0
             WHEN e.name LIKE ?2 ESCAPE '\\' OR EXISTS (SELECT 1 FROM json_each(e.aliases) WHERE value LIKE ?2 ESCAPE '\\')
               THEN 1
             ELSE 2 END AS rank
         FROM entities e
         WHERE e.name LIKE ?3 ESCAPE '\\' OR EXISTS (SELECT 1 FROM json_each(e.aliases) WHERE value LIKE ?3 ESCAPE '\\')
         ORDER BY rank, e.mentions DESC, e.last_seen DESC, e.name LIMIT ?4`,
      ).all(likeLiteral(q), `${likeLiteral(q)}%`, `%${likeLiteral(q)}%`, limit)) as Array<Record<string, unknown>>;
    return rows.map((row) => ({
      name: String(row.name),
      type: String(row.type),
      mentions: Number(row.mentions),
      facts: Number(row.facts),
      lastSeen: Number(row.last_seen),
    }));
  }

  /**
   * An entity (by name or alias; every type of that name) and the entities its facts connect it to, one step: facts
   * of it whose object is another entity's name or alias, and facts of other entities whose object is its name or an
   * alias. Objects are matched as stored (after the graph's whitespace and NFKC normalisation), not fuzzily. At most
   * `limit` nodes, the entity first, then neighbours joined by a holding fact, then the most mentioned; only edges
   * between nodes shown. `undefined` when no entity has that name.
   *
   * @example
   * ```ts
   * declare const graph: GraphStore;
   * graph.neighbors("Leo", 40);
   * // { center: "Leo", nodes: [{ name: "Leo", type: "pet", mentions: 3 }, { name: "alice", type: "person", mentions: 5 }],
   * //   edges: [{ from: "alice", to: "Leo", predicate: "likes", holds: true }] }
   * ```
   */
  neighbors(name: string, limit: number): Neighborhood | undefined {
    type Node = { id: number; name: string; type: string; mentions: number; aliases: string };
    const centers = prepared(
      this.#db,
      `SELECT id, name, type, mentions, aliases FROM entities e
       WHERE e.name = ?1 OR EXISTS (SELECT 1 FROM json_each(e.aliases) WHERE value = ?1)
       ORDER BY mentions DESC, last_seen DESC, id`,
    ).all(normalize(name)) as Node[];
    if (!centers.length) return undefined;
    const centerIds = centers.map((center) => center.id);
    const names = new Map<string, number>();
    for (const center of [...centers].reverse()) {
      for (const alias of [center.name, ...JSON.parse(center.aliases) as string[]]) names.set(alias, center.id);
    }
    type Link = { fact: number; from: number; to: number; predicate: string; holds: number };
    const outgoing = prepared(
      this.#db,
      `SELECT t.id AS fact, t.subject AS "from", o.id AS "to", t.predicate, t.valid_to IS NULL AS holds
       FROM triples t JOIN entities o
         ON o.name = t.object OR EXISTS (SELECT 1 FROM json_each(o.aliases) WHERE value = t.object)
       WHERE t.subject IN (SELECT value FROM json_each(?1))`,
    ).all(JSON.stringify(centerIds)) as Link[];
    const incoming = (prepared(
      this.#db,
      `SELECT t.id AS fact, t.subject AS "from", t.object, t.predicate, t.valid_to IS NULL AS holds
       FROM triples t WHERE t.object IN (SELECT value FROM json_each(?1))`,
    ).all(JSON.stringify([...names.keys()])) as Array<Omit<Link, "to"> & { object: string }>)
      .map(({ object, ...link }) => ({ ...link, to: names.get(object)! }));
    const seen = new Set<number>();
    const links = [...outgoing, ...incoming].filter((link) => {
      if (link.from === link.to || seen.has(link.fact)) return false;
      seen.add(link.fact);
      return true;
    });
    const otherIds = [...new Set(links.flatMap((link) => [link.from, link.to]))].filter((id) =>
      !centerIds.includes(id)
    );
    const others = prepared(
      this.#db,
      "SELECT id, name, type, mentions, aliases FROM entities WHERE id IN (SELECT value FROM json_each(?))",
    ).all(JSON.stringify(otherIds)) as Node[];
    const holding = new Set(links.filter((link) => link.holds).flatMap((link) => [link.from, link.to]));
    others.sort((a, b) =>
      Number(holding.has(b.id)) - Number(holding.has(a.id)) || b.mentions - a.mentions || a.name.localeCompare(b.name)
    );
    const shown = [...centers, ...others].slice(0, Math.max(1, limit));
    const byId = new Map(shown.map((node) => [node.id, node]));
    return {
      center: centers[0]!.name,
      nodes: shown.map(({ name, type, mentions }) => ({ name, type, mentions })),
      edges: links.filter((link) => byId.has(link.from) && byId.has(link.to)).map((link) => ({
        from: byId.get(link.from)!.name,
        to: byId.get(link.to)!.name,
        predicate: link.predicate,
        holds: Boolean(link.holds),
      })),
    };
  }

  /** Entity and open-fact counts. */
  counts(): { entities: number; facts: number } {
    const entities = (prepared(this.#db, "SELECT COUNT(*) AS n FROM entities").get() as { n: number }).n;
    const facts =
      (prepared(this.#db, "SELECT COUNT(*) AS n FROM triples WHERE valid_to IS NULL").get() as { n: number }).n;
    return { entities, facts };
  }
}

function factOf(row: Record<string, unknown>): Fact {
  return {
    id: Number(row.id),
    subject: String(row.subject),
    subjectType: String(row.subject_type),
    predicate: String(row.predicate),
    object: String(row.object),
    provenance: JSON.parse(String(row.provenance)) as string[],
    validFrom: Number(row.valid_from),
    validTo: row.valid_to === null ? null : Number(row.valid_to),
    ...(typeof row.corrected_by === "string" ? { correctedBy: row.corrected_by } : {}),
    saidBy: String(row.said_by ?? ""),
    trust: trustOf(String(row.trust ?? "household")),
    heard: parseHeard(row.heard ?? "[]"),
  };
}

/** A trust level read back from the database; anything else counts as a guest's (as `lowerTrust` does). */
function trustOf(value: string): Trust {
  return value === "owner" || value === "household" ? value : "guest";
}
