/**
 * Layer 2: documents — exchanges that left the context, kept whole with an extractive summary, their times, hit count
 * and provenance (input event ids), searchable through the TF-IDF store. Rows live in `memory.db` (see
 * `openMemoryDb`), the index in its own {@link VectorStore}. A document found by recall counts a hit and is
 * "accessed", which keeps it warm; the memory job archives the cold ones (not accessed for `memory.cold_after`, few
 * hits: their facts are in the graph), which stay searchable ({@link DocumentStore.archiveCold}).
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import type { Clock } from "../../clock.ts";
import type { Trust } from "../../identity/trust.ts";
import { type Provenance, type Viewer, visibleTo } from "../../identity/visibility.ts";
import { readMeta, writeMeta } from "../database.ts";
import {
  CONTEXT_FIELD,
  DEFAULT_SCORING,
  type DocMeta,
  type Hit,
  type ScoringOptions,
} from "../../search/inverted_index.ts";
import type { VectorStore } from "../../search/store.ts";
import { indexMatchesRows } from "../index_digest.ts";
import { prepared } from "../../sqlite/prepared.ts";
import { PendingHits } from "./pending_hits.ts";
import { SpeakerNames } from "./speaker_names.ts";

/** One document. */
export interface MemoryDocument {
  id: string;
  text: string;
  summary: string;
  /** Milliseconds since the epoch: when what it holds was said. */
  created: number;
  lastAccessed: number;
  hits: number;
  /** Input event ids it came from. */
  provenance: string[];
  /** Who asked in the exchange, as their channel named them; "" for documents kept before this was recorded. */
  sender: string;
  /** Their trust then; `household` for documents kept before it was recorded (a guest never sees those). */
  trust: Trust;
  /**
   * The channel the exchange was on (`qq:private:…`, `http`, `qq:group:…`); `""` for documents kept before it was
   * recorded (schema 10), which are the household's. Who may read it follows `visibleTo`.
   */
  source: string;
  /** What was said just before it (its context field), and by which event; absent when none was kept. */
  context?: { text: string; eventId: string };
}

/** A document found by a search. */
export interface DocumentHit {
  document: MemoryDocument;
  score: number;
  /**
   * Whether the query's words are in its context field (the turn before it), when the index could tell: false
   * saves tokenizing the turn to learn that it matches nothing (`withWhatMatched`).
   */
  contextMatched?: boolean;
}

/**
 * How much a document's context field (the turn before it) counts against its own words: 0.7, chosen on the tune half
 * of the conversation set by `deno task eval:conversation-fields` (reported there on the other half).
 */
export const CONTEXT_WEIGHT = 0.7;

/**
 * Conversation-aware ranking, chosen on the tune half of the conversation set by `deno task eval:conversation-fields`
 * (reported there on the other half): a document's score gains {@link SESSION_WEIGHT} × the best score of another hit
 * of its conversation, and the index's pivot slope is 0.5 (the engine's default 0.75 let short turns that match one
 * rare word win). A person named in the query already prefers that person's turns through the speaker's name, which
 * is part of each line ("Anna: …"); an extra factor for it was swept (1, 1.5, 2) and did not help on tune.
 */
export const SESSION_WEIGHT = 0.2;
/** The document index's scoring (see {@link SESSION_WEIGHT}). */
export const DOCUMENT_SCORING: ScoringOptions = { ...DEFAULT_SCORING, slope: 0.5 };
/**
 * The metadata the document index filters by, indexed as filter terms: a guest's search reads the posting list of
 * its own turns instead of every candidate's metadata from the segment on disk.
 */
export const DOCUMENT_FILTER_KEYS: readonly string[] = ["guest"];
/**
 * Session fusion, in place: each candidate's score gains `weight` × the best score among the other candidates of its
 * conversation (`conversationOf`). The index's `rerank` hook runs it before ordering and supersession.
 *
 * @example
 * ```ts
 * import type { VectorStore } from "../../search/store.ts";
 *
 * declare const store: VectorStore;
 * store.search("when do the bins go out", {
 *   k: 5,
 *   pool: 40,
 *   rerank: (hits) => fuseConversations(hits, SESSION_WEIGHT, (hit) => String(hit.meta.session ?? hit.id)),
 * });
 * ```
 */
export function fuseConversations(candidates: Hit[], weight: number, conversationOf: (hit: Hit) => string): void {
  // Per conversation its best score and the best of the rest once one of those is taken out (the second best, or the
  // best again when two have it): the best of a candidate's others is one of the two. Not a list of every score per
  // conversation, copied for each candidate.
  const best = new Map<string, { first: number; second: number }>();
  const conversations = candidates.map(conversationOf);
  candidates.forEach((hit, i) => {
    const top = best.get(conversations[i]!), score = hit.score;
    if (!top) best.set(conversations[i]!, { first: score, second: -Infinity });
    else if (score > top.first) {
      top.second = top.first;
      top.first = score;
    } else if (score > top.second) top.second = score;
  });
  candidates.forEach((hit, i) => {
    const top = best.get(conversations[i]!)!;
    hit.score = hit.score + weight * Math.max(0, hit.score === top.first ? top.second : top.first);
  });
}

/** `memory.cold_after`'s default: a document not accessed for 72 hours may go cold. */
export const COLD_AFTER_MS = 72 * 3_600_000;
/** Documents with more hits than this never go cold (they keep being recalled). */
export const COLD_MAX_HITS = 2;

/**
 * How cold a document is: the time since it was last accessed (stored or found by recall) as a share of
 * `coldAfterMs` (`memory.cold_after`), rounded to 3 decimals — 0 just accessed, 1 at the threshold. A document whose
 * coldness has reached 1 and that has at most {@link COLD_MAX_HITS} hits is archived by the next memory job
 * ({@linkcode DocumentStore.archiveCold}); one with more hits never is, however cold.
 *
 * @example
 * ```ts
 * const now = Date.UTC(2026, 10, 4);
 * coldness({ lastAccessed: now - 36 * 3_600_000 }, now); // 0.5 with the default 72 hours
 * coldness({ lastAccessed: now - 144 * 3_600_000 }, now, 72 * 3_600_000); // 2
 * ```
 */
export function coldness(document: { lastAccessed: number }, now: number, coldAfterMs = COLD_AFTER_MS): number {
  const idle = Math.max(0, now - document.lastAccessed);
  return Math.round((idle / Math.max(1, coldAfterMs)) * 1000) / 1000;
}

/** Which metadata the index holds (version 2: time and session); a store with older metadata is re-put once. */
const INDEX_META = "document_index_meta";
const INDEX_META_VERSION = "2";
/** Index hits re-ranked per search: enough for a conversation's other turns to be among them. */
const RERANK_POOL = 40;
/**
 * Rows searches read lately, kept by id (≈ 0.5 kB each): a recall reads 30, the same household's questions meet the
 * same documents, and reading them from SQLite was 0.2–0.3 ms of a year's recall of 1–1.5 (`bench:memory-scale`).
 */
const RECENT_ROWS = 1024;

/** What a document is made from: one exchange, as lines of who said what. */
export interface DocumentDraft {
  lines: Array<{ speaker: string; text: string }>;
  time: number;
  provenance: string[];
  /**
   * What was said just before (the question this answers, say): indexed as the document's context field, so a
   * search that asks for it (`contextWeight`) finds a reply by the question's words.
   */
  context?: { text: string; eventId: string };
  /** The conversation it belongs to (the first event of its run of turns); its own event when not given. */
  session?: string;
  /** Who asked in the exchange (the input event's sender). */
  sender?: string;
  /** The channel the exchange was on; without it the document is the household's. */
  source?: string;
  /**
   * Their trust; without it the document is the household's. Only a `guest` document is found by that guest's
   * recall ({@link DocumentStore.search}'s `saidBy`).
   */
  trust?: Trust;
}

/**
 * An extractive summary: each speaker's first sentence, cut to `width` characters.
 *
 * @example
 * ```ts
 * summarize([{ speaker: "owner", text: "The bins go out on Tuesday. And glass on Fridays." }]);
 * // "owner: The bins go out on Tuesday."
 * ```
 */
export function summarize(lines: ReadonlyArray<{ speaker: string; text: string }>, width = 160): string {
  const firstSentence = (text: string) => {
    const flat = text.replace(/\s+/g, " ").trim();
    const match = /^.+?(?:[。！？!?]|\.(?=\s|$))/u.exec(flat);
    return (match?.[0] ?? flat).slice(0, width);
  };
  return lines.filter((line) => line.text.trim() !== "").map((line) => `${line.speaker}: ${firstSentence(line.text)}`)
    .join(" / ").slice(0, width * 2);
}

/** The store. */
export class DocumentStore {
  #db: DatabaseSync;
  #index: VectorStore;
  #clock: Clock;
  #counter = 0;
  /**
   * The rows of documents searches found lately, oldest first (see {@link RECENT_ROWS}); callers get copies. Every
   * write of a row is this store's: {@linkcode DocumentStore.touch} counts on them as on the table, and
   * {@linkcode DocumentStore.forget} drops them all.
   */
  #recentRows = new Map<string, MemoryDocument>();
  /** Hits counted since they were last written ({@linkcode DocumentStore.flushHits}, on the memory's heartbeat). */
  #pendingHits: PendingHits;
  /** The speakers of the documents' lines, for {@linkcode DocumentStore.namesASpeaker}. */
  #speakers: SpeakerNames;

  private constructor(db: DatabaseSync, index: VectorStore, clock: Clock) {
    this.#db = db;
    this.#index = index;
    this.#clock = clock;
    this.#speakers = new SpeakerNames(db);
    this.#pendingHits = new PendingHits(db);
  }

  /**
   * Whether `query` says the name of a speaker of some document's lines, as `namedSpeakers` tells one: when it does
   * not, no document found for it can be preferred for its speaker, and recall reads only the rows it shows.
   *
   * @example
   * ```ts
   * declare const documents: DocumentStore; // holding "Wei: The bins go out on Tuesday"
   * documents.namesASpeaker("When did Wei take the bins out?"); // true
   * documents.namesASpeaker("When do the bins go out?"); // false
   * ```
   */
  namesASpeaker(query: string): boolean {
    return this.#speakers.saidIn(query);
  }

  /**
   * A store over an opened `memory.db` (see `openMemoryDb`) and an opened index.
   *
   * @example
   * ```ts
   * import { join } from "node:path";
   * import { systemClock } from "../../clock.ts";
   * import { openMemoryDb } from "../database.ts";
   * import { VectorStore } from "../../search/store.ts";
   *
   * const dir = "/var/lib/homed/memory";
   * const index = await VectorStore.open(join(dir, "documents-index"), { scoring: DOCUMENT_SCORING });
   * const documents = DocumentStore.over(openMemoryDb(join(dir, "memory.db")), index, systemClock);
   * ```
   */
  static over(db: DatabaseSync, index: VectorStore, clock: Clock): DocumentStore {
    return new DocumentStore(db, index, clock);
  }

  /**
   * Indexes the documents the index does not hold — a kill between the row's commit and the index write, or an
   * index set aside as corrupt or emptied for a new analyzer — and returns how many it wrote.
   *
   * @example
   * ```ts
   * declare const documents: DocumentStore;
   * documents.reconcile(); // 0 after a clean stop
   * ```
   */
  reconcile(options: { closedCleanly?: boolean } = {}): number {
    // Documents indexed before their conversation was index metadata are indexed again, once.
    const all = readMeta(this.#db, INDEX_META) !== INDEX_META_VERSION;
    // After a clean close (both synced, nothing recovered at open) equal counts say the index holds every row: the
    // ids are not read one by one (a year's 100k cost ≈ 20 MB of resident memory that stayed).
    if (!all && options.closedCleanly && this.#index.size === this.size) return 0;
    // Otherwise (a crash, say) a digest of the ids first: they are read one by one only when it differs.
    if (!all && indexMatchesRows(this.#db, "id", "documents", this.#index)) return 0;
    // Ids first: on a clean start nothing is missing, and reading every text would cost more than the check.
    // Streamed rather than one array of rows.
    const lost: string[] = [];
    for (const row of prepared(this.#db, "SELECT id FROM documents").iterate() as Iterable<{ id: string }>) {
      if (all || !this.#index.has(row.id)) lost.push(row.id);
    }
    // Written after the index writes: a kill in between re-puts them all again next time, which is harmless.
    const done = () => all && writeMeta(this.#db, INDEX_META, INDEX_META_VERSION);
    if (!lost.length) {
      done();
      return 0;
    }
    const rows = prepared(
      this.#db,
      `SELECT id, text, created, context, session, sender, trust, source FROM documents
       WHERE id IN (SELECT value FROM json_each(?)) ORDER BY created`,
    ).all(JSON.stringify(lost)) as Array<Record<string, string | number>>;
    this.#index.putMany(
      rows.map((row) => ({
        id: String(row.id),
        text: String(row.text),
        meta: metaOf(row),
        context: String(row.context),
      })),
    );
    done();
    return rows.length;
  }

  /** Number of documents. */
  get size(): number {
    return (prepared(this.#db, "SELECT COUNT(*) AS n FROM documents").get() as { n: number }).n;
  }

  /**
   * Stores one document and indexes it; returns it.
   *
   * @example
   * ```ts
   * declare const documents: DocumentStore;
   * documents.add({ lines: [{ speaker: "owner", text: "Bins on Tuesday" }], time: Date.now(), provenance: ["e1"] });
   * ```
   */
  add(draft: DocumentDraft): MemoryDocument {
    const now = this.#clock.now();
    const document: MemoryDocument = {
      id: `d${now.toString(36)}-${(this.#counter++).toString(36)}`,
      text: draft.lines.map((line) => `${line.speaker}: ${line.text}`).join("\n"),
      summary: summarize(draft.lines),
      created: draft.time,
      lastAccessed: now,
      hits: 0,
      provenance: [...new Set(draft.provenance)],
      sender: draft.sender ?? "",
      trust: trustOf(draft.trust),
      source: draft.source ?? "",
    };
    // Before the row: a store holding the document always names its speakers.
    this.#speakers.add(document.text);
    const context = draft.context?.text ?? "";
    const session = draft.session ?? document.provenance[0] ?? document.id;
    prepared(
      this.#db,
      `INSERT INTO documents (id, text, summary, created, last_accessed, hits, provenance, context, context_event,
         session, sender, trust, source)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      document.id,
      document.text,
      document.summary,
      document.created,
      document.lastAccessed,
      0,
      JSON.stringify(document.provenance),
      context,
      draft.context?.eventId ?? "",
      session,
      document.sender,
      document.trust,
      document.source,
    );
    this.#index.put(document.id, document.text, metaOf({ ...document, session }), context);
    return document;
  }

  /**
   * Marks documents not accessed since `before` with at most `maxHits` hits as archived (cold: their facts are in the
   * graph); archived documents stay searchable. Returns how many.
   */
  archiveCold(before: number, maxHits: number): number {
    this.flushHits();
    return Number(
      prepared(this.#db, "UPDATE documents SET archived = 1 WHERE archived = 0 AND last_accessed < ? AND hits <= ?")
        .run(before, maxHits).changes,
    );
  }

  /** Archived documents. */
  get archived(): number {
    return (prepared(this.#db, "SELECT COUNT(*) AS n FROM documents WHERE archived = 1").get() as { n: number }).n;
  }

  /**
   * Deletes the documents that came from any of `eventIds`, rows and index entries, and drops a forgotten utterance
   * from the context field of the documents that had it as context; returns how many documents were deleted.
   */
  forget(eventIds: ReadonlySet<string>): number {
    this.#recentRows.clear();
    const rows = prepared(
      this.#db,
      "SELECT id, text, created, provenance, context_event, session, sender, trust, source FROM documents",
    ).all() as Array<Record<string, string | number>>;
    let count = 0;
    for (const row of rows) {
      const provenance = JSON.parse(String(row.provenance)) as string[];
      if (!provenance.some((id) => eventIds.has(id))) {
        if (eventIds.has(String(row.context_event))) {
          prepared(this.#db, "UPDATE documents SET context = '', context_event = '' WHERE id = ?").run(String(row.id));
          this.#index.put(String(row.id), String(row.text), metaOf(row));
        }
        continue;
      }
      prepared(this.#db, "DELETE FROM documents WHERE id = ?").run(String(row.id));
      this.#index.delete(String(row.id));
      count++;
    }
    return count;
  }

  /** Every document kept (archived ones too), oldest first: for an export. */
  list(): MemoryDocument[] {
    return (prepared(this.#db, "SELECT * FROM documents ORDER BY created, id").all() as Array<Record<string, unknown>>)
      .map((row) => this.#pendingHits.addTo(fromRow(row)));
  }

  /** The documents of `ids` that exist, by id: copies of those read lately, the others in one statement. */
  #rows(ids: readonly string[]): Map<string, MemoryDocument> {
    const found = new Map<string, MemoryDocument>();
    const recent = this.#recentRows, missing: string[] = [];
    for (const id of ids) {
      const kept = recent.get(id);
      if (kept === undefined) {
        missing.push(id);
        continue;
      }
      // Moved to the newest end.
      recent.delete(id);
      recent.set(id, kept);
      found.set(id, copyOf(kept));
    }
    if (!missing.length) return found;
    const rows = prepared(this.#db, "SELECT * FROM documents WHERE id IN (SELECT value FROM json_each(?))")
      .all(JSON.stringify(missing)) as Array<Record<string, unknown>>;
    for (const row of rows) {
      const document = this.#pendingHits.addTo(fromRow(row));
      if (recent.size >= RECENT_ROWS) recent.delete(recent.keys().next().value!);
      recent.set(document.id, document);
      found.set(document.id, copyOf(document));
    }
    return found;
  }

  /** One document by id. */
  get(id: string): MemoryDocument | undefined {
    const row = prepared(this.#db, "SELECT * FROM documents WHERE id = ?").get(id) as
      | Record<string, unknown>
      | undefined;
    return row ? this.#pendingHits.addTo(fromRow(row)) : undefined;
  }

  /**
   * The best documents for a query; each one found counts a hit and is marked accessed (unless `touch` is false, as
   * for the unasked reference block). With `saidBy` (a guest's sender), only the documents of that guest's own turns
   * are searched — the index filters them, so the `k` found are the best of those; with a {@link Viewer}, only the
   * documents that reader may read (`visibleTo`: a household member's own, shared chats' and the household's).
   *
   * @example
   * ```ts
   * declare const documents: DocumentStore;
   * documents.search("where is my umbrella", 3, false, "visitor"); // only what "visitor" said as a guest
   * ```
   */
  search(query: string, k: number, touch = true, saidBy?: string | Viewer): DocumentHit[] {
    const filter = typeof saidBy === "string"
      ? { [GUEST_META]: saidBy }
      : saidBy === undefined || saidBy.trust === "owner"
      ? undefined
      : saidBy.trust === "guest"
      // A guest reads only their own: the posting list of their own turns.
      ? { [GUEST_META]: saidBy.sender }
      : (meta: DocMeta) => visibleTo(saidBy, provenanceOf(meta));
    // Before the index orders and supersedes: a newer note on the same fact still moves above an older one.
    const rerank = (candidates: Hit[]) =>
      fuseConversations(candidates, SESSION_WEIGHT, (hit) => String(hit.meta.session ?? hit.id));
    // Two literals rather than one with a spread in it: such an object's hidden class lived only during a search,
    // and a full garbage collection between searches dropped it and deoptimized the ranking that reads it.
    const options = filter === undefined
      ? { k, pool: RERANK_POOL, contextWeight: CONTEXT_WEIGHT, withMatched: true, rerank }
      : { k, pool: RERANK_POOL, contextWeight: CONTEXT_WEIGHT, withMatched: true, filter, rerank };
    const ranked = this.#index.search(query, options);
    // The rows of all the hits in one statement: a year's 30 lookups by id, one by one, were a tenth of a recall.
    const rows = this.#rows(ranked.map((hit) => hit.id));
    const hits = ranked.flatMap((hit): DocumentHit[] => {
      const document = rows.get(hit.id);
      if (!document) return [];
      return hit.matched
        ? [{ document, score: hit.score, contextMatched: hit.matched.some((term) => term.startsWith(CONTEXT_FIELD)) }]
        : [{ document, score: hit.score }];
    });
    if (touch) this.touch(hits.map((hit) => hit.document));
    return hits;
  }

  /**
   * Counts a hit on each document and marks it accessed now (it was shown), which keeps it from going cold. Counted in
   * memory (every read of a row adds it) and written by {@linkcode DocumentStore.flushHits}.
   *
   * @example
   * ```ts
   * declare const documents: DocumentStore;
   * documents.touch(documents.search("bins", 10, false).slice(0, 3).map((hit) => hit.document));
   * ```
   */
  touch(shown: readonly MemoryDocument[]): void {
    const now = this.#clock.now();
    const pending = this.#pendingHits, recent = this.#recentRows;
    // A document shown twice counts twice, as it always has.
    for (const document of shown) {
      pending.count(document.id, now);
      document.hits++;
      document.lastAccessed = now;
      const kept = recent.get(document.id);
      if (kept) {
        kept.hits++;
        kept.lastAccessed = now;
      }
    }
  }

  /**
   * Writes the hits counted since the last call, in one statement; returns how many documents they were on. When the
   * disk refuses, they stay counted for the next call (and the error is thrown).
   *
   * @example
   * ```ts
   * declare const documents: DocumentStore;
   * documents.flushHits(); // on the memory's heartbeat, before archiving, at close
   * ```
   */
  flushHits(): number {
    return this.#pendingHits.flush();
  }
}

/**
 * The index metadata naming the guest whose turn a document holds; household and owner documents (and those kept
 * before the sender was recorded) have none, so a guest's filtered search never meets them.
 */
const GUEST_META = DOCUMENT_FILTER_KEYS[0]!;

/** A stored trust value as a trust level: anything but `owner` or `guest` is the household's. */
function trustOf(value: unknown): Trust {
  return value === "guest" || value === "owner" ? value : "household";
}

/**
 * A document's metadata in the index: its time and conversation, the guest who asked, if one did, and where it was
 * said — its channel, who asked and their trust (`src`, `by`, `trust`) — when that was recorded. Entries indexed
 * before schema 10 have no `src`: their rows have no source either, and both are the household's.
 */
function metaOf(
  row: { created?: unknown; session?: unknown; sender?: unknown; trust?: unknown; source?: unknown },
): DocMeta {
  const meta: DocMeta = { time: Number(row.created) };
  if (row.session) meta.session = String(row.session);
  if (trustOf(row.trust) === "guest" && row.sender) meta[GUEST_META] = String(row.sender);
  if (row.source) {
    meta.src = String(row.source);
    meta.by = String(row.sender ?? "");
    meta.trust = trustOf(row.trust);
  }
  return meta;
}

/** Where an indexed document was said, from its metadata (see {@link metaOf}). */
function provenanceOf(meta: DocMeta): Provenance {
  if (meta.src === undefined) {
    const guest = meta[GUEST_META];
    return guest === undefined
      ? { source: "", sender: "", trust: "household" }
      : { source: "", sender: String(guest), trust: "guest" };
  }
  return { source: String(meta.src), sender: String(meta.by ?? ""), trust: trustOf(meta.trust) };
}

/** A copy a caller may change (its provenance and context too) without changing the row kept. */
function copyOf(document: MemoryDocument): MemoryDocument {
  const copy: MemoryDocument = {
    id: document.id,
    text: document.text,
    summary: document.summary,
    created: document.created,
    lastAccessed: document.lastAccessed,
    hits: document.hits,
    provenance: [...document.provenance],
    sender: document.sender,
    trust: document.trust,
    source: document.source,
  };
  if (document.context) copy.context = { text: document.context.text, eventId: document.context.eventId };
  return copy;
}

function fromRow(row: Record<string, unknown>): MemoryDocument {
  return {
    id: String(row.id),
    text: String(row.text),
    summary: String(row.summary),
    created: Number(row.created),
    lastAccessed: Number(row.last_accessed),
    hits: Number(row.hits),
    provenance: JSON.parse(String(row.provenance)) as string[],
    sender: String(row.sender ?? ""),
    trust: trustOf(row.trust),
    source: String(row.source ?? ""),
    ...(row.context && row.context_event
      ? { context: { text: String(row.context), eventId: String(row.context_event) } }
      : {}),
  };
}
