/**
 * The graph's writes, each run inside the transaction {@link GraphStore} opens for it: recording a fact (confirmed,
 * replaced, refused or added), correcting and deleting one by hand, forgetting what came from input events — and the
 * filing of entity names they share (an existing entity, an alias of one, or a new one, kept in the synonym index).
 * Apart from the reads (`graph_reader.ts`) and from the transaction and its callbacks (`graph_store.ts`), so each
 * write's rules can be read on their own.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { prepared } from "../../sqlite/prepared.ts";
import { lowerTrust, type Trust } from "../../identity/trust.ts";
import { normalizeName, type SynonymIndex } from "./synonyms.ts";
import { correctedByTag, type Fact, type FactDraft, type FactOutcome, type Refusal } from "./fact.ts";
import { normalize, trustOf } from "./graph_rows.ts";
import { OWNER_ONLY, parseHeard, unionHeard } from "./heard.ts";
import type { GraphReader } from "./graph_reader.ts";

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

/** What one write did besides its result: the entities it touched and the guests' claims it refused. */
export interface WriteChanges {
  /** Ids of the entities it touched (some may have been deleted). */
  touched: Set<number>;
  refused: Refusal[];
}

/**
 * A new name filed as an alias of a known entity (for the log). A type, not an interface: it is passed on as a log
 * record's properties.
 */
export type Merge = { alias: string; entity: string; type: string };

/** The graph's writes; call each inside one transaction, after {@linkcode GraphWriter.begin}. */
export class GraphWriter {
  #db: DatabaseSync;
  #reader: GraphReader;
  #synonyms: SynonymIndex;
  #onMerge: (merge: Merge) => void;
  #changes: WriteChanges = { touched: new Set(), refused: [] };

  /**
   * Writes to `db` through `synonyms` (its rows are in `db`, so they share each transaction); reads facts back
   * through `reader`; tells `onMerge` of each name filed as an alias, within the transaction.
   *
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   * import { GraphReader } from "./graph_reader.ts";
   * import { SynonymIndex } from "./synonyms.ts";
   *
   * const db = openMemoryDb(":memory:");
   * const writer = new GraphWriter(db, new GraphReader(db), new SynonymIndex(db), () => {});
   * ```
   */
  constructor(db: DatabaseSync, reader: GraphReader, synonyms: SynonymIndex, onMerge: (merge: Merge) => void) {
    this.#db = db;
    this.#reader = reader;
    this.#synonyms = synonyms;
    this.#onMerge = onMerge;
  }

  /**
   * Starts a write: what it touches and refuses from now on is gathered in the returned changes (fresh ones, so a
   * callback that keeps them never sees a later write's).
   */
  begin(): WriteChanges {
    this.#changes = { touched: new Set(), refused: [] };
    return this.#changes;
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
   * Records a fact: the same open fact gains provenance ("confirmed"); for a single-valued predicate a different open
   * value is closed at `time` ("replaced") — unless the draft is a guest's and that value was said by a household
   * member or the owner ("refused": nothing recorded); otherwise it is "added". Throws `RangeError` naming an empty
   * field.
   */
  record(draft: FactDraft): FactOutcome {
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
        this.#changes.refused.push({ draft, held: this.#reader.fact(kept.id)! });
        return "refused";
      }
    }
    const subject = this.#entity(name, type, draft.time);
    this.#changes.touched.add(subject);
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
   * is left; entities left without facts are deleted too. Returns how many facts were deleted.
   */
  forget(eventIds: ReadonlySet<string>): number {
    const rows = prepared(this.#db, "SELECT id, subject, provenance, heard FROM triples").all() as Array<
      Record<string, unknown>
    >;
    let deleted = 0;
    for (const row of rows) {
      const provenance = JSON.parse(String(row.provenance)) as string[];
      const left = provenance.filter((id) => !eventIds.has(id));
      if (left.length === provenance.length) continue;
      this.#changes.touched.add(Number(row.subject));
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
  }

  /**
   * Corrects the fact `id` that holds to `value` (normalised, not empty) — see {@linkcode GraphStore.correct}.
   * `undefined` for an unknown id; throws {@linkcode FactConflict} when the fact no longer holds or already has that
   * value.
   */
  correct(
    id: number,
    value: string,
    who: string,
    time: number,
    trust: Trust,
  ): { superseded: Fact; fact: Fact } | undefined {
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
    this.#changes.touched.add(row.subject);
    return { superseded: this.#reader.fact(id)!, fact: this.#reader.fact(made)! };
  }

  /** Deletes one fact by its row id (its entity too when no fact is left about it); whether there was such a fact. */
  delete(id: number): boolean {
    const row = prepared(this.#db, "SELECT subject FROM triples WHERE id = ?").get(id) as
      | { subject: number }
      | undefined;
    if (!row) return false;
    prepared(this.#db, "DELETE FROM triples WHERE id = ?").run(id);
    this.#changes.touched.add(row.subject);
    const orphans = prepared(
      this.#db,
      "DELETE FROM entities WHERE id = ? AND id NOT IN (SELECT subject FROM triples) RETURNING id, name, type, aliases",
    ).all(row.subject) as Array<{ id: number; name: string; type: string; aliases: string }>;
    this.#forgetNames(orphans);
    return true;
  }
}
