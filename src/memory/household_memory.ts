/**
 * The memory a folder holds, as `openMemory` (`memory.ts`) opens it: the journal of what was said, layer-2 documents and the
 * layer-3 graph (their rows in `memory.db`, each with its index), and in memory the last utterances — recall's recent
 * context, and what was said just before a document. Opening checks both indexes against `memory.db` (every id only
 * after a crash); the memory job distils the journal into facts and archives cold documents; recall ranks documents,
 * facts and recent lines for one asker.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { similarities } from "../search/relevance.ts";
import { readersIncluded, visibleTo } from "../identity/visibility.ts";
import { checkpointMemoryDb, openMemoryDb, readMeta, writeMeta } from "./database.ts";
import { DamagedFiles } from "../fs/set_aside.ts";
import { checkedOpen, SQLITE_DAMAGE } from "../sqlite/damage.ts";
import { durably } from "../sqlite/durability.ts";
import {
  COLD_AFTER_MS,
  COLD_MAX_HITS,
  DOCUMENT_FILTER_KEYS,
  DOCUMENT_SCORING,
  type DocumentDraft,
  DocumentStore,
} from "./document/document_store.ts";
import { saidBefore, sessionOf } from "./recall/conversation.ts";
import { namedPeriod } from "./recall/named_period.ts";
import { namedSpeakers, SPEAKER_BOOST, spokenBy } from "./recall/speakers.ts";
import { hasTimeWords, isWhenQuestion } from "./recall/time_words.ts";
import { byConversation, withWhatMatched } from "./recall/what_matched.ts";
import { EntityIndex } from "./graph/entity_index.ts";
import { GraphStore } from "./graph/graph_store.ts";
import { Distiller } from "./pipeline/distiller.ts";
import { quoted } from "./pipeline/screen.ts";
import { LogLimiter } from "../log/rate_limit.ts";
import { heardIn, origins, saidByGuest } from "./text/origins.ts";
import { type MemoryEntry, TextMemory } from "./text/text_memory.ts";
import type { ScoringOptions } from "../search/inverted_index.ts";
import { VectorStore } from "../search/store.ts";
import type { JobReport, Memory, OpenMemoryOptions, RecallItem, RecallOptions } from "./memory.ts";
import { onlySaidBy } from "./recall/asker.ts";

/** What memory starts with when `memory.db` is damaged (its rows are the facts' and documents' only copy). */
const MEMORY_DB_KEPT = {
  en: "a new, empty memory.db: facts are distilled again from the journal; the documents come back only with a backup",
  zh: "一个新的空 memory.db：事实会从对话日志里重新提炼；存进去的文档只能从备份找回",
};

/** The memory.db meta key of the distiller's cursor: how many journal lines it has taken. */
const CURSOR = "distilled_upto";

/** How much more a document or utterance that names a time counts for a when-question. */
const WHEN_BOOST = 2;
/**
 * A query that names a month or a day ("in October", "10月14日", "yesterday") prefers what was said then. Not fitted:
 * no question of the sets names a date, so this is a rule (1.5, as the speaker preference), tested, not tuned.
 */
const DATE_BOOST = 1.5;

/** Utterances kept in memory to find what was said just before a document's (a layer-1 exchange lives ≤ 30 of them). */
const SAID_LIMIT = 256;

/** The memory.db meta key that says memory was closed cleanly (the indexes then need no check of every id). */
const CLOSED_CLEANLY = "closed_cleanly";

/** The files {@link HouseholdMemory.open} opens, all or none. */
interface Stores {
  journal: TextMemory;
  index: VectorStore;
  entityStore: VectorStore;
  db: DatabaseSync;
}

/** An open memory's parts, from {@link HouseholdMemory.open} to its constructor. */
interface Parts extends Stores {
  options: OpenMemoryOptions;
  documents: DocumentStore;
  graph: GraphStore;
  entities: EntityIndex;
  distiller: Distiller;
  limiter: LogLimiter;
  /** The journal's last {@link SAID_LIMIT} utterances. */
  said: MemoryEntry[];
}

/**
 * The {@link Memory} of one folder. Open it with {@link HouseholdMemory.open} (or `openMemory`); the methods are the
 * interface's.
 */
export class HouseholdMemory implements Memory {
  #options: OpenMemoryOptions;
  #journal: TextMemory;
  #index: VectorStore;
  #entityStore: VectorStore;
  #db: DatabaseSync;
  #documents: DocumentStore;
  #graph: GraphStore;
  #entities: EntityIndex;
  #distiller: Distiller;
  #limiter: LogLimiter;
  #recentLimit: number;
  /** The last {@link SAID_LIMIT} utterances, oldest first: what was said just before a document. */
  #said: MemoryEntry[];
  /** The last `recentLimit` utterances, oldest first: recall's recent context. */
  #recent: MemoryEntry[];
  #totals = { tokens: 0, runs: 0, failures: 0 };
  /** The job run in progress, if any. */
  #running: Promise<JobReport> | undefined;

  private constructor(parts: Parts) {
    this.#options = parts.options;
    this.#journal = parts.journal;
    this.#index = parts.index;
    this.#entityStore = parts.entityStore;
    this.#db = parts.db;
    this.#documents = parts.documents;
    this.#graph = parts.graph;
    this.#entities = parts.entities;
    this.#distiller = parts.distiller;
    this.#limiter = parts.limiter;
    this.#recentLimit = parts.options.recentLimit ?? 30;
    this.#said = parts.said;
    this.#recent = parts.said.slice(-this.#recentLimit);
  }

  /**
   * Opens the memory in `dir`: the stores (all or none), a check of both indexes against `memory.db` (every id only
   * after a crash), the last utterances.
   *
   * @example
   * ```ts
   * import { join } from "node:path";
   * import { systemClock } from "../clock.ts";
   * import { log } from "../log/logging.ts";
   *
   * const memory = await HouseholdMemory.open({
   *   dir: join("/var/lib/homed", "memory"),
   *   clock: systemClock,
   *   logger: log("memory"),
   * });
   * memory.status(); // { candidates: 120, distilled: 120, documents: 40, … }
   * ```
   */
  static async open(options: OpenMemoryOptions): Promise<HouseholdMemory> {
    const { dir, clock, logger } = options;
    await Deno.mkdir(dir, { recursive: true });
    const { journal, index, entityStore, db } = await openStores(options);
    // A clean close synced every store after its last write; a run that crashes never gets to mark it again.
    const closedCleanly = readMeta(db, CLOSED_CLEANLY) === "1";
    writeMeta(db, CLOSED_CLEANLY, "0");
    const trusted = (store: VectorStore) => closedCleanly && store.report.recovered.length === 0;
    const documents = DocumentStore.over(db, index, clock);
    const reindexedDocuments = documents.reconcile({ closedCleanly: trusted(index) });
    if (reindexedDocuments) {
      logger.info("Document index: indexed {count} documents it did not hold", { count: reindexedDocuments });
    }
    // Log lines that what people say (or a model answers) can cause at will are limited per kind.
    const limiter = new LogLimiter({ clock });
    // The graph tells the entity index what each committed write touched; the index needs the graph to read them.
    // The callback runs on writes only, never during construction, so `entities` exists by then.
    const graph = loggedGraph(db, logger, limiter, (ids) => entities.refresh(ids));
    const entities = new EntityIndex(graph, entityStore);
    const reindexed = entities.reconcile({ closedCleanly: trusted(entityStore) });
    if (reindexed) logger.info("Entity index: indexed {count} entities it did not hold", { count: reindexed });
    const distiller = new Distiller({
      provider: options.provider,
      persona: options.persona ?? "",
      logger,
      selfNames: options.selfNames ?? [],
      limiter,
    });
    const said = await journal.last(SAID_LIMIT);
    return new HouseholdMemory({
      options,
      journal,
      index,
      entityStore,
      db,
      documents,
      graph,
      entities,
      distiller,
      limiter,
      said,
    });
  }

  async observe(entry: MemoryEntry): Promise<void> {
    await this.#journal.append(entry);
    this.#recent.push(entry);
    if (this.#recent.length > this.#recentLimit) this.#recent.shift();
    this.#said.push(entry);
    if (this.#said.length > SAID_LIMIT) this.#said.shift();
  }

  keepDocument(draft: DocumentDraft): void {
    const said = this.#said;
    let context = draft.context ?? saidBefore(said, draft.provenance[0]);
    // A guest's document is found by its own words only: what someone else said just before never ranks it.
    const guest = onlySaidBy(draft.trust ? { sender: draft.sender ?? "", trust: draft.trust } : undefined);
    if (context && guest !== undefined && !saidByGuest(said, guest).has(context.eventId)) context = undefined;
    // Nor is anyone's document found (or shown) by words its readers may not read: the owner's private line said
    // just before a member's on the shared `http` channel stays out of the member's document.
    const before = context && said.find((entry) => entry.eventId === context!.eventId && entry.role === "user");
    if (context && before && draft.source !== undefined) {
      const document = { source: draft.source, sender: draft.sender ?? "", trust: draft.trust };
      if (!readersIncluded(origins(said)(before), document)) context = undefined;
    }
    const session = draft.session ?? sessionOf(said, draft.provenance[0]);
    this.#documents.add({ ...draft, ...(context ? { context } : {}), ...(session ? { session } : {}) });
  }

  runJobs(signal?: AbortSignal): Promise<JobReport> {
    // One run at a time; a second caller waits for the first.
    this.#running ??= this.#runJobs(signal).finally(() => (this.#running = undefined));
    return this.#running;
  }

  async #runJobs(signal?: AbortSignal): Promise<JobReport> {
    const { clock, logger } = this.#options;
    const report: JobReport = { distilled: 0, facts: 0, tokens: 0, archived: 0 };
    let cursor = Number(readMeta(this.#db, CURSOR) ?? 0);
    // Only what the distiller has not seen is kept in memory; the rest is read past.
    const pending = await this.#journal.from(cursor);
    const first = cursor;
    const batchSize = this.#options.batchSize ?? 40;
    while (cursor - first < pending.length) {
      const batch = pending.slice(cursor - first, cursor - first + batchSize);
      try {
        // Screened (instructions, the butler itself, identity and trust, duplicates) and attributed (who said each
        // fact, with which trust) by the distiller; the graph refuses a guest's claim against the household's.
        const result = await this.#distiller.distill(batch, signal);
        report.tokens += result.tokens;
        const next = cursor + batch.length;
        const time = batch.at(-1)!.time;
        // Each fact remembers the chats it was learnt in: who may read it follows them (issue 34.4).
        const outcomes = this.#graph.recordBatch(
          result.facts.map((fact) => ({ ...fact, time, heard: heardIn(batch, fact.provenance) })),
          () => writeMeta(this.#db, CURSOR, String(next)),
        );
        report.facts += outcomes.filter((outcome) => outcome !== "refused").length;
        report.distilled += batch.length;
        cursor = next;
      } catch (error) {
        report.tokens += (error as { tokens?: number }).tokens ?? 0;
        report.error = (error as Error).message;
        logger.warning("Distilling {count} candidates failed; they wait for the next run: {error}", {
          count: batch.length,
          error: report.error,
        });
        break;
      }
    }
    report.archived = this.#documents.archiveCold(
      clock.now() - (this.#options.coldAfterMs ?? COLD_AFTER_MS),
      COLD_MAX_HITS,
    );
    this.#totals.tokens += report.tokens;
    this.#totals.runs++;
    if (report.error) this.#totals.failures++;
    if (report.distilled || report.archived) {
      logger.info(
        "Memory job: {distilled} candidates → {facts} facts, {archived} documents archived, {tokens} tokens",
        {
          ...report,
        },
      );
    }
    return report;
  }

  recall(query: string, { k = 5, asker }: RecallOptions = {}): Promise<RecallItem[]> {
    const asksWhen = isWhenQuestion(query);
    const period = namedPeriod(query, this.#options.clock.now());
    const guest = onlySaidBy(asker);
    // The asker reads only what is theirs to read (identity/visibility.ts): documents, recent lines and facts.
    const recent = this.#recent;
    const origin = origins(recent);
    const heard = asker ? recent.filter((entry) => visibleTo(asker, origin(entry))) : recent;
    const line = (entry: MemoryEntry) => `${entry.role === "user" ? entry.sender : "butler"}: ${entry.text}`;
    // The time and speaker preferences below re-rank: they need a wider pool of documents than the k they keep. Which
    // speakers the query names is told from the documents found; when it names none that any document or recent line
    // has, the pool is the k best (the wider pool's first k), and the rows beyond them are not read: a year's first
    // asking of such a question read 30 rows for 5 (≈ 0.15 ms).
    const heardLines = heard.map(line);
    const wide = asksWhen || Boolean(period) || this.#documents.namesASpeaker(query) ||
      namedSpeakers(query, heardLines).size > 0;
    const found = this.#documents.search(query, wide ? Math.max(3 * k, 30) : k, false, asker);
    const named = namedSpeakers(query, [...found.map((hit) => hit.document.text), ...heardLines]);
    const pool = asksWhen || period || named.size ? found : found.slice(0, k);
    const shown = new Map(pool.map((hit) => [hit.document.id, hit.document]));
    const items: Array<RecallItem & { document?: string; source?: string; documents?: string[] }> = withWhatMatched(
      pool,
      query,
      named,
    );
    // A fact merges what everyone said about an entity: a guest's recall holds none; a household member's, those
    // learnt where they may read (or the household's).
    const facts = guest !== undefined
      ? []
      : asker
      ? this.#entities.search(query, 3 * k, asker).slice(0, k)
      : this.#entities.search(query, k);
    for (const { fact, score } of facts) {
      items.push({
        kind: "fact",
        text: `${fact.subject} (${fact.subjectType}) ${fact.predicate}: ${fact.object}`,
        score,
        time: fact.validFrom,
        provenance: fact.provenance,
      });
    }
    similarities(heard.map((entry) => entry.text), query).forEach((score, i) => {
      const entry = heard[i]!;
      if (score > 0) {
        items.push({
          kind: "context",
          text: heardLines[i]!,
          score,
          time: entry.time,
          provenance: [entry.eventId],
        });
      }
    });
    // A when-question prefers what names a time (factor chosen on the tune half by eval:conversation-fields).
    const rounded = items.map((item) => {
      let score = asksWhen && item.kind !== "fact" && hasTimeWords(item.text) ? item.score * WHEN_BOOST : item.score;
      if (named.size && item.kind !== "fact" && spokenBy(item.text, named)) score *= SPEAKER_BOOST;
      if (period && item.time >= period.start && item.time < period.end) score *= DATE_BOOST;
      return { ...item, score: Math.round(score * 1000) / 1000 };
    });
    // The k best, a conversation's turns among them one item: recall is read within a budget of characters.
    const best = byConversation(rounded.sort((a, b) => b.score - a.score || b.time - a.time), k);
    // Only what is returned counts as accessed.
    this.#documents.touch(
      best.flatMap((item) => (item.documents ?? (item.document ? [item.document] : [])).map((id) => shown.get(id)!)),
    );
    return Promise.resolve(best.map(({ document: _id, documents: _ids, source: _source, ...item }) => item));
  }

  async forget(eventIds: readonly string[]): Promise<{ candidates: number; documents: number; facts: number }> {
    const ids = new Set(eventIds);
    await this.#running?.catch(() => {});
    const removed = await this.#journal.forget(ids);
    for (const list of [this.#recent, this.#said]) {
      for (let i = list.length - 1; i >= 0; i--) if (ids.has(list[i]!.eventId)) list.splice(i, 1);
    }
    // A forgetting is told to a person: its rows are on disk (fsync'd) before this returns.
    const result = durably(this.#db, () => {
      // The distiller's cursor counts journal lines: lines removed before it move it back.
      const cursor = Number(readMeta(this.#db, CURSOR) ?? 0);
      const before = removed.filter((index) => index < cursor).length;
      if (before) writeMeta(this.#db, CURSOR, String(cursor - before));
      return {
        candidates: removed.length,
        documents: this.#documents.forget(ids),
        facts: this.#graph.forget(ids),
      };
    });
    this.#options.logger.info(
      "Forgot {candidates} candidates, {documents} documents, {facts} facts of {events} events",
      {
        ...result,
        events: ids.size,
      },
    );
    return result;
  }

  candidates(): Promise<MemoryEntry[]> {
    return this.#journal.entries();
  }

  async messages(eventIds: readonly string[]): Promise<Map<string, MemoryEntry>> {
    const found = await this.#journal.lookup(new Set(eventIds));
    return new Map([...found].map(([id, entries]) => [id, entries.find((e) => e.role === "user") ?? entries[0]!]));
  }

  documents(): DocumentStore {
    return this.#documents;
  }

  graph(): GraphStore {
    return this.#graph;
  }

  status(): Record<string, unknown> {
    return {
      candidates: this.#journal.count,
      distilled: Number(readMeta(this.#db, CURSOR) ?? 0),
      documents: this.#documents.size,
      archived_documents: this.#documents.archived,
      ...this.#graph.counts(),
      distiller: this.#options.provider ? "llm" : "rules",
      distiller_tokens: this.#totals.tokens,
      distiller_runs: this.#totals.runs,
      distiller_failures: this.#totals.failures,
    };
  }

  async sync(): Promise<void> {
    await this.#journal.sync();
    await this.#index.sync();
    await this.#entityStore.sync();
    // Recall's hits, counted in memory since the last heartbeat.
    this.#documents.flushHits();
    checkpointMemoryDb(this.#db);
  }

  async reindex(): Promise<void> {
    await this.#index.reindex();
    await this.#entityStore.reindex();
  }

  /**
   * Closes the journal, both indexes and memory.db — every one of them even when one fails (a read-only or failing
   * disk fails their last sync): a store left open keeps the disk busy, so it could not be unmounted and repaired.
   * The first failure is thrown after all are closed.
   */
  async close(): Promise<void> {
    await this.#running?.catch(() => {});
    this.#limiter.flush();
    const failures: unknown[] = [];
    for (const store of [this.#journal, this.#index, this.#entityStore]) {
      await Promise.resolve().then(() => store.close()).catch((error) => failures.push(error));
    }
    try {
      this.#documents.flushHits();
      // Only now, and only when each closed cleanly: both indexes hold (and have synced) everything memory.db does;
      // otherwise the next start checks them against it.
      if (!failures.length) writeMeta(this.#db, CLOSED_CLEANLY, "1");
    } catch (error) {
      failures.push(error);
    } finally {
      this.#db.close();
    }
    if (failures.length) throw failures[0];
  }
}

/** Opens the journal, both indexes and memory.db: all of them, or none (what opened is closed again). */
async function openStores({ dir, clock, logger, damaged: given, health }: OpenMemoryOptions): Promise<Stores> {
  // A damaged file is set aside (fs/set_aside.ts) and memory starts with what is intact: never a crash loop.
  const damaged = given ?? new DamagedFiles(() => clock.now());
  // What is open so far is closed again if a later part fails to open.
  const opened: Array<{ close(): void | Promise<void> }> = [];
  const openIndex = (name: string, label: string, scoring?: ScoringOptions, filterKeys?: readonly string[]) =>
    VectorStore.open(join(dir, name), {
      ...(scoring ? { scoring } : {}),
      ...(filterKeys ? { filterKeys } : {}),
      compactEvery: 5_000,
      now: () => clock.now(),
      damaged,
      onRecovery: (message) => logger.warning(`${label}: {message}`, { message }),
      ...(health ? { health: { record: health, store: `memory ${label.toLowerCase()}` } } : {}),
    });
  let journal: TextMemory, index: VectorStore, entityStore: VectorStore, db: DatabaseSync;
  try {
    const dbPath = join(dir, "memory.db");
    opened.push(db = damaged.open(dbPath, checkedOpen(openMemoryDb), { ...SQLITE_DAMAGE, kept: MEMORY_DB_KEPT }));
    if (damaged.entries.at(-1)?.file === dbPath) {
      // Both indexes describe rows of the file set aside: they are derived, so they start empty and follow the new one.
      for (const name of ["documents-index", "graph-index"]) {
        await Deno.remove(join(dir, name), { recursive: true }).catch((error) => {
          if (!(error instanceof Deno.errors.NotFound)) throw error;
        });
      }
    }
    opened.push(journal = await TextMemory.open(join(dir, "candidates.jsonl"), logger, damaged));
    opened.push(index = await openIndex("documents-index", "Document index", DOCUMENT_SCORING, DOCUMENT_FILTER_KEYS));
    opened.push(entityStore = await openIndex("graph-index", "Entity index"));
  } catch (error) {
    for (const part of opened) await part.close();
    throw error;
  }
  return { journal, index, entityStore, db };
}

/**
 * The graph over `db`, telling `onChange` what each write touched and logging what it files as an alias and each
 * guest's claim it refuses (those at most as often as `limiter` allows: guests cause them at will).
 */
function loggedGraph(
  db: DatabaseSync,
  logger: Logger,
  limiter: LogLimiter,
  onChange: (ids: ReadonlySet<number>) => void,
): GraphStore {
  return new GraphStore(db, {
    onMerge: ({ alias, entity, type }) =>
      logger.info("Graph: {alias} is another name of {type} {entity}; filed as an alias", { alias, entity, type }),
    onChange,
    onRefuse: ({ draft, held }) => {
      const summary = (count: number, seconds: number) =>
        logger.warning(
          "Graph: guests' claims not recorded in the last {seconds} s and not logged one by one: {count}",
          { seconds, count },
        );
      if (!limiter.allow("memory graph: refused", summary)) return;
      logger.warning(
        "Graph: not recorded: {saidBy} (trust guest) said {subject} {predicate} is {object} ({provenance}), but " +
          "{heldBy} (trust {trust}) said {held}; a guest's claim never replaces a household member's or the owner's fact",
        {
          saidBy: draft.saidBy || "a guest",
          subject: quoted(draft.subject.name),
          predicate: quoted(draft.predicate),
          object: quoted(draft.object),
          provenance: draft.provenance.join(", "),
          heldBy: held.saidBy || "the household",
          trust: held.trust,
          held: quoted(held.object),
        },
      );
    },
  });
}
