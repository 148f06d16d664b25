/**
 * Layer 2: documents — exchanges that left the context, kept whole with an extractive summary, their times, hit count
 * and provenance (input event ids), searchable through the TF-IDF store. Rows live in `memory.db` (see
 * `openMemoryDb`), the index in its own {@link VectorStore}. A document found by recall counts a hit and is
 * "accessed", which keeps it warm (the cold rule that sends documents to the graph comes with layer 3).
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import type { Clock } from "../../clock.ts";
import type { VectorStore } from "../vector/store.ts";

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
}

/** A document found by a search. */
export interface DocumentHit {
  document: MemoryDocument;
  score: number;
}

/**
 * How much a document's context field (the turn before it) counts against its own words: 0.7, chosen on the tune half
 * of the conversation set by `deno task eval:conversation-fields` (reported there on the other half).
 */
export const CONTEXT_WEIGHT = 0.7;

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
}

/**
 * An extractive summary: each speaker's first sentence, cut to `width` characters.
 *
 * @example
 * ```ts
 * summarize([{ speaker: "owner", text: "The bins go out on Tuesday. And glass on Fridays." }]); // "owner: The bins go out on Tuesday."
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

  private constructor(db: DatabaseSync, index: VectorStore, clock: Clock) {
    this.#db = db;
    this.#index = index;
    this.#clock = clock;
  }

  /**
   * A store over an opened `memory.db` (see `openMemoryDb`) and an opened index.
   *
   * @example
   * ```ts
   * const documents = DocumentStore.over(openMemoryDb(path), await VectorStore.open(indexDir), clock);
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
   * const documents = DocumentStore.over(db, index, clock);
   * documents.reconcile(); // 0 after a clean stop
   * ```
   */
  reconcile(): number {
    // Ids first: on a clean start nothing is missing, and reading every text would cost more than the check.
    const ids = (this.#db.prepare("SELECT id FROM documents").all() as Array<{ id: string }>).map((row) => row.id);
    const lost = ids.filter((id) => !this.#index.has(id));
    if (!lost.length) return 0;
    const rows = this.#db.prepare(
      "SELECT id, text, created, context FROM documents WHERE id IN (SELECT value FROM json_each(?)) ORDER BY created",
    ).all(JSON.stringify(lost)) as Array<{ id: string; text: string; created: number; context: string }>;
    this.#index.putMany(
      rows.map((row) => ({ id: row.id, text: row.text, meta: { time: row.created }, context: row.context })),
    );
    return rows.length;
  }

  /** Number of documents. */
  get size(): number {
    return (this.#db.prepare("SELECT COUNT(*) AS n FROM documents").get() as { n: number }).n;
  }

  /**
   * Stores one document and indexes it; returns it.
   *
   * @example
   * ```ts
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
    };
    const context = draft.context?.text ?? "";
    this.#db.prepare(
      `INSERT INTO documents (id, text, summary, created, last_accessed, hits, provenance, context, context_event)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    );
    this.#index.put(document.id, document.text, { time: document.created }, context);
    return document;
  }

  /**
   * Marks documents not accessed since `before` with at most `maxHits` hits as archived (cold: their facts are in the
   * graph); archived documents stay searchable. Returns how many.
   */
  archiveCold(before: number, maxHits: number): number {
    return Number(
      this.#db.prepare("UPDATE documents SET archived = 1 WHERE archived = 0 AND last_accessed < ? AND hits <= ?")
        .run(before, maxHits).changes,
    );
  }

  /** Archived documents. */
  get archived(): number {
    return (this.#db.prepare("SELECT COUNT(*) AS n FROM documents WHERE archived = 1").get() as { n: number }).n;
  }

  /**
   * Deletes the documents that came from any of `eventIds`, rows and index entries, and drops a forgotten utterance
   * from the context field of the documents that had it as context; returns how many documents were deleted.
   */
  forget(eventIds: ReadonlySet<string>): number {
    const rows = this.#db.prepare("SELECT id, text, created, provenance, context_event FROM documents").all() as Array<
      Record<string, unknown>
    >;
    let count = 0;
    for (const row of rows) {
      const provenance = JSON.parse(String(row.provenance)) as string[];
      if (!provenance.some((id) => eventIds.has(id))) {
        if (eventIds.has(String(row.context_event))) {
          this.#db.prepare("UPDATE documents SET context = '', context_event = '' WHERE id = ?").run(String(row.id));
          this.#index.put(String(row.id), String(row.text), { time: Number(row.created) });
        }
        continue;
      }
      this.#db.prepare("DELETE FROM documents WHERE id = ?").run(String(row.id));
      this.#index.delete(String(row.id));
      count++;
    }
    return count;
  }

  /** One document by id. */
  get(id: string): MemoryDocument | undefined {
    const row = this.#db.prepare("SELECT * FROM documents WHERE id = ?").get(id) as Record<string, unknown> | undefined;
    return row ? fromRow(row) : undefined;
  }

  /**
   * The best documents for a query; each one found counts a hit and is marked accessed (unless `touch` is false, as
   * for the unasked reference block).
   */
  search(query: string, k: number, touch = true): DocumentHit[] {
    const hits = this.#index.search(query, { k, contextWeight: CONTEXT_WEIGHT }).flatMap((hit) => {
      const document = this.get(hit.id);
      return document ? [{ document, score: hit.score }] : [];
    });
    if (touch && hits.length) {
      const now = this.#clock.now();
      const bump = this.#db.prepare("UPDATE documents SET hits = hits + 1, last_accessed = ? WHERE id = ?");
      for (const hit of hits) {
        bump.run(now, hit.document.id);
        hit.document.hits++;
        hit.document.lastAccessed = now;
      }
    }
    return hits;
  }
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
  };
}
