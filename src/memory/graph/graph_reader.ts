/**
 * The graph's reads: entities and facts for recall, the entity index, the prompt index and the console. Apart from
 * the writes (`graph_writer.ts`) because none of them changes a row; {@link GraphStore} is this plus its writes.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import type { VectorStore } from "../../search/store.ts";
import { indexMatchesRows } from "../index_digest.ts";
import { prepared } from "../../sqlite/prepared.ts";
import type { Trust } from "../../identity/trust.ts";
import type { Fact } from "./fact.ts";
import { factBesidesOrigins, factOf, likeLiteral, normalize } from "./graph_rows.ts";
import { parseHeard } from "./heard.ts";
import { hasEntityAliases } from "./entity_names.ts";

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

/** One entity as text for the entity index: names, type and what holds about it. */
export interface EntityText {
  text: string;
  lastSeen: number;
}

/** The read side of the graph over `memory.db`; {@link GraphStore} extends it with the writes. */
export class GraphReader {
  #db: DatabaseSync;
  /** Whether the file has the alias table (`entity_names.ts`), asked once; a full disk at open leaves it out. */
  #aliasTable: boolean | undefined;

  /**
   * Reads `db` (memory.db, migrated): nothing is read until a method asks.
   *
   * @example
   * ```ts
   * import { openMemoryDb } from "../database.ts";
   *
   * const graph = new GraphReader(openMemoryDb("/var/lib/homed/memory/memory.db"));
   * graph.counts(); // { entities: 12, facts: 30 }
   * ```
   */
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * An entity as one text for the entity index — name, aliases, type and each fact that holds ("位于 卧室") — or
   * `undefined` when it no longer exists.
   *
   * @example
   * ```ts
   * declare const graph: GraphReader;
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
    return this.openFactRowsOf(ids).map(({ heard, ...fact }) => ({ ...fact, heard: parseHeard(heard) }));
  }

  /**
   * As {@link GraphReader.openFactsOf}, each fact's origins (`heard`) left as stored (JSON): a fact said in the
   * household's group every few days has hundreds (≈ 3 kB), and recall reads them only for a household member.
   */
  openFactRowsOf(ids: readonly number[]): Array<Omit<Fact, "heard"> & { entity: number; heard: string }> {
    if (!ids.length) return [];
    const rows = prepared(
      this.#db,
      `SELECT t.id, t.subject AS entity, e.name AS subject, e.type AS subject_type, t.predicate, t.object, t.provenance,
         t.valid_from, t.valid_to, t.corrected_by, t.said_by, t.trust, t.heard
       FROM triples t JOIN entities e ON e.id = t.subject
       WHERE t.valid_to IS NULL AND t.subject IN (SELECT value FROM json_each(?)) ORDER BY t.id`,
    ).all(JSON.stringify(ids)) as Array<Record<string, unknown>>;
    return rows.map((row) => ({
      ...factBesidesOrigins(row),
      heard: String(row.heard ?? "[]"),
      entity: Number(row.entity),
    }));
  }

  /**
   * The facts that hold about the entities named exactly `name` (any type; aliases not searched), found through the
   * name's index — cheap enough for every turn (the prompt's profiles); {@link GraphReader.facts} adds aliases and
   * history.
   *
   * @example
   * ```ts
   * declare const graph: GraphReader;
   * graph.openFactsNamed("alice"); // [{ subject: "alice", predicate: "allergic to", object: "peanuts", … }]
   * ```
   */
  openFactsNamed(name: string): Fact[] {
    const rows = prepared(
      this.#db,
      `SELECT t.id, e.name AS subject, e.type AS subject_type, t.predicate, t.object, t.provenance, t.valid_from,
         t.valid_to, t.corrected_by, t.said_by, t.trust, t.heard
       FROM entities e JOIN triples t ON t.subject = e.id AND t.valid_to IS NULL WHERE e.name = ? ORDER BY t.id`,
    ).all(normalize(name)) as Array<Record<string, unknown>>;
    return rows.map(factOf);
  }

  /**
   * The facts of other entities whose value is `name` (as stored, or all lower case, or capitalised) — "bob" →
   * "brother of" → "alice" for alice's relations — holding ones first, newest first; found through the values' index.
   *
   * @example
   * ```ts
   * declare const graph: GraphReader;
   * graph.factsNaming("alice"); // [{ subject: "bob", predicate: "brother of", object: "alice", … }]
   * ```
   */
  factsNaming(name: string): Fact[] {
    const value = normalize(name);
    const spellings = [value, value.toLowerCase(), value.charAt(0).toUpperCase() + value.slice(1)];
    const rows = prepared(
      this.#db,
      `SELECT t.id, e.name AS subject, e.type AS subject_type, t.predicate, t.object, t.provenance, t.valid_from,
         t.valid_to, t.corrected_by, t.said_by, t.trust, t.heard
       FROM triples t JOIN entities e ON e.id = t.subject
       WHERE t.object IN (?1, ?2, ?3) AND e.name != ?1
       ORDER BY (t.valid_to IS NOT NULL), t.valid_from DESC, t.id DESC`,
    ).all(...spellings) as Array<Record<string, unknown>>;
    return rows.map(factOf);
  }

  /**
   * SQL of the ids of the entities whose name or an alias is `value` (an SQL expression): a lookup in the names'
   * index and one in the alias table — or, in a file without that table (a full disk at open), every entity's aliases
   * read with `json_each`, as all reads by name did before it.
   */
  #namedIds(value: string): string {
    this.#aliasTable ??= hasEntityAliases(this.#db);
    return this.#aliasTable
      ? `SELECT id FROM entities WHERE name = ${value} UNION SELECT entity FROM entity_aliases WHERE alias = ${value}`
      : `SELECT n.id FROM entities n
         WHERE n.name = ${value} OR EXISTS (SELECT 1 FROM json_each(n.aliases) WHERE value = ${value})`;
  }

  /**
   * The facts about the entities named `name` or with it as an alias (any type), holding ones first, then history;
   * newest first within each. Index reads only (the alias table, `triples_subject`): the console's entity pages, the
   * people's profiles and forgetting an entity read it, on a graph of any size.
   *
   * @example
   * ```ts
   * declare const graph: GraphReader;
   * graph.facts("客厅的灯"); // an alias of 客厅灯: [{ subject: "客厅灯", predicate: "位于", object: "卧室", validTo: null, … }, …]
   * ```
   */
  facts(name: string): Fact[] {
    const rows = prepared(
      this.#db,
      `SELECT t.id, e.name AS subject, e.type AS subject_type, t.predicate, t.object, t.provenance, t.valid_from, t.valid_to,
         t.corrected_by, t.said_by, t.trust, t.heard
       FROM triples t JOIN entities e ON e.id = t.subject
       WHERE t.subject IN (${this.#namedIds("?1")})
       ORDER BY (t.valid_to IS NOT NULL), t.valid_from DESC, t.id DESC`,
    ).all(normalize(name)) as Array<Record<string, unknown>>;
    return rows.map(factOf);
  }

  /**
   * The graph index for the system prompt: the most mentioned entities (name, type, mentions), most first.
   *
   * @example
   * ```ts
   * declare const graph: GraphReader;
   * graph.index(50); // [{ name: "客厅灯", type: "device", mentions: 7 }, { name: "Leo", type: "person", mentions: 3 }]
   * ```
   */
  index(limit: number): Array<{ name: string; type: string; mentions: number }> {
    return this.#mostMentioned(limit).map(({ name, type, mentions }) => ({ name, type, mentions }));
  }

  /**
   * {@link GraphReader.index}'s entities, each with the facts that hold about it (that entity's own, by its id): what
   * the system message's index is chosen from after every memory job. Two reads through indexes (`entities_mentioned`,
   * `triples_open`) whatever the graph's size — not {@link GraphReader.facts} per name, whose alias match then read
   * every entity's aliases (a year's 48k rows per name, 97% of a memory job's time on a year), and which would still
   * be a read per name.
   *
   * @example
   * ```ts
   * declare const graph: GraphReader;
   * graph.indexWithFacts(2);
   * // [{ name: "客厅灯", type: "device", mentions: 7, facts: [{ subject: "客厅灯", predicate: "位于", object: "卧室", … }] },
   * //  { name: "Leo", type: "person", mentions: 3, facts: [] }]
   * ```
   */
  indexWithFacts(limit: number): Array<{ name: string; type: string; mentions: number; facts: Fact[] }> {
    const entities = this.#mostMentioned(limit);
    const facts = new Map<number, Fact[]>();
    for (const { entity, ...fact } of this.openFactsOf(entities.map((row) => row.id))) {
      facts.set(entity, [...facts.get(entity) ?? [], fact]);
    }
    return entities.map(({ id, name, type, mentions }) => ({ name, type, mentions, facts: facts.get(id) ?? [] }));
  }

  /** The `limit` most mentioned entities, most first (then the last seen, then by name). */
  #mostMentioned(limit: number): Array<{ id: number; name: string; type: string; mentions: number }> {
    const rows = prepared(
      this.#db,
      "SELECT id, name, type, mentions FROM entities ORDER BY mentions DESC, last_seen DESC, name LIMIT ?",
    ).all(limit) as Array<Record<string, unknown>>;
    return rows.map((row) => ({
      id: Number(row.id),
      name: String(row.name),
      type: String(row.type),
      mentions: Number(row.mentions),
    }));
  }

  /**
   * One fact by its row id, or `undefined`.
   *
   * @example
   * ```ts
   * declare const graph: GraphReader;
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
   * Entities for the console, at most `limit`: with an empty `query` the most mentioned; otherwise those whose name
   * or an alias contains it (case-insensitive for ASCII), exact names first, then names that start with it, then the
   * rest, each group most mentioned first.
   *
   * @example
   * ```ts
   * declare const graph: GraphReader;
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
   * declare const graph: GraphReader;
   * graph.neighbors("Leo", 40);
   * // { center: "Leo", nodes: [{ name: "Leo", type: "pet", mentions: 3 }, { name: "alice", type: "person", mentions: 5 }],
   * //   edges: [{ from: "alice", to: "Leo", predicate: "likes", holds: true }] }
   * ```
   */
  neighbors(name: string, limit: number): Neighborhood | undefined {
    type Node = { id: number; name: string; type: string; mentions: number; aliases: string };
    const centers = prepared(
      this.#db,
      `SELECT id, name, type, mentions, aliases FROM entities e WHERE e.id IN (${this.#namedIds("?1")})
       ORDER BY mentions DESC, last_seen DESC, id`,
    ).all(normalize(name)) as Node[];
    if (!centers.length) return undefined;
    const centerIds = centers.map((center) => center.id);
    const names = new Map<string, number>();
    for (const center of [...centers].reverse()) {
      for (const alias of [center.name, ...JSON.parse(center.aliases) as string[]]) names.set(alias, center.id);
    }
    type Link = { fact: number; from: number; to: number; predicate: string; holds: number };
    // In the order of the fact, then of the entity it names: of a value naming two entities, the first is kept.
    const outgoing = prepared(
      this.#db,
      `SELECT t.id AS fact, t.subject AS "from", o.id AS "to", t.predicate, t.valid_to IS NULL AS holds
       FROM triples t JOIN entities o ON o.id IN (${this.#namedIds("t.object")})
       WHERE t.subject IN (SELECT value FROM json_each(?1)) ORDER BY t.id, o.id`,
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

  /**
   * Who has told memory something: each `said_by` of a fact (holding or closed) said by a household member or the
   * owner, with the highest trust they said one at — the people a profile may be kept for (`profile/`). A guest's
   * facts name no one here: a guest is no member of the household.
   *
   * @example
   * ```ts
   * declare const graph: GraphReader;
   * graph.speakers(); // [{ name: "alice", trust: "household" }, { name: "owner", trust: "owner" }]
   * ```
   */
  speakers(): Array<{ name: string; trust: Trust }> {
    // Speaker by speaker through `triples_speakers` (each the least name after the one before, then whether any of
    // their facts is the owner's): a seek or two per speaker, where grouping every fact read the whole table — once a
    // minute in a turn (the profiles' member list). Each WHERE repeats the index's condition so SQLite may use it.
    const said = "said_by != '' AND trust IN ('owner', 'household')";
    const rows = prepared(
      this.#db,
      `WITH RECURSIVE speaker (name) AS (
         SELECT (SELECT MIN(said_by) FROM triples WHERE ${said})
         UNION ALL
         SELECT (SELECT MIN(said_by) FROM triples WHERE ${said} AND said_by > speaker.name)
         FROM speaker WHERE speaker.name IS NOT NULL)
       SELECT name AS said_by, EXISTS (SELECT 1 FROM triples WHERE ${said} AND said_by = speaker.name AND trust = 'owner')
         AS owner
       FROM speaker WHERE name IS NOT NULL ORDER BY name`,
    ).all() as Array<{ said_by: string; owner: number }>;
    return rows.map((row) => ({ name: row.said_by, trust: row.owner ? "owner" : "household" }));
  }

  /** Entity and open-fact counts. */
  counts(): { entities: number; facts: number } {
    const entities = (prepared(this.#db, "SELECT COUNT(*) AS n FROM entities").get() as { n: number }).n;
    const facts =
      (prepared(this.#db, "SELECT COUNT(*) AS n FROM triples WHERE valid_to IS NULL").get() as { n: number }).n;
    return { entities, facts };
  }
}
