/**
 * The memory facade (ARCHITECTURE §7; the daemon and the replay benchmark use it, keep it stable):
 * `openMemory({dir, clock, provider?, logger})` → `{observe, runJobs, recall, close}`.
 *
 * `observe` journals what was said (TextMemory, no LLM call); `runJobs` distils pending candidates into the graph in
 * batches (one LLM call per batch, or the rule-based fallback) and archives cold documents; `recall` returns the best
 * of the recent entries ("context"), layer-2 documents and layer-3 facts, best first, each with its time and the
 * input event ids it came from. Nothing new to distil costs no LLM call. `recall` with an `asker` follows the trust
 * rule (DESIGN.md, "Trust and the threat model"): a guest's recall holds only what that guest said — the documents and
 * recent entries of its own turns — and no graph facts; the owner's and household members' recall holds everything.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { similarities } from "../search/relevance.ts";
import type { Provider } from "../provider/provider.ts";
import type { Clock } from "../clock.ts";
import { permits, type Trust } from "../identity/trust.ts";
import { type Provenance, readersIncluded, visibleTo } from "../identity/visibility.ts";
import { checkpointMemoryDb, openMemoryDb, readMeta, writeMeta } from "./database.ts";
import {
  COLD_AFTER_MS,
  COLD_MAX_HITS,
  DOCUMENT_FILTER_KEYS,
  DOCUMENT_SCORING,
  type DocumentDraft,
  type DocumentHit,
  DocumentStore,
} from "./document/document_store.ts";
import { saidBefore, sessionOf } from "./recall/conversation.ts";
import { namedPeriod } from "./recall/named_period.ts";
import { hasTimeWords, isWhenQuestion } from "./recall/time_words.ts";
import { EntityIndex } from "./graph/entity_index.ts";
import { factVisibleTo, GraphStore, type HeardIn, OWNER_ONLY } from "./graph/graph_store.ts";
import { Distiller } from "./pipeline/distiller.ts";
import { quoted } from "./pipeline/screen.ts";
import { LogLimiter } from "../log/rate_limit.ts";
import { type MemoryEntry, TextMemory } from "./text/text_memory.ts";
import type { ScoringOptions } from "../search/inverted_index.ts";
import { VectorStore } from "../search/store.ts";

/** One recalled item. */
export interface RecallItem {
  kind: "context" | "document" | "fact";
  text: string;
  score: number;
  /** Milliseconds since the epoch. */
  time: number;
  /** Input event ids. */
  provenance: string[];
}

/** Who a recall is for: the sender of the turn, as their channel named them, and their trust. */
export interface Asker {
  sender: string;
  trust: Trust;
}

/** Options of {@link Memory.recall}. */
export interface RecallOptions {
  /** How many items (5). */
  k?: number;
  /** Whose turn it is; without one (inspection, the replay benchmark) everything may be recalled. */
  asker?: Asker;
}

/**
 * The sender whose own words are all that a recall for `asker` may hold — a guest's (or anyone's whose trust is not
 * `owner` or `household`) — or `undefined` when it may hold everything.
 *
 * @example
 * ```ts
 * onlySaidBy({ sender: "visitor", trust: "guest" }); // "visitor"
 * onlySaidBy({ sender: "alice", trust: "household" }); // undefined
 * onlySaidBy(undefined); // undefined
 * ```
 */
export function onlySaidBy(asker: Asker | undefined): string | undefined {
  return !asker || permits("household", asker.trust) ? undefined : asker.sender;
}

/** Options of {@link openMemory}. */
export interface OpenMemoryOptions {
  /** The memory folder (`data_dir/memory`). */
  dir: string;
  clock: Clock;
  /** Without one, the distiller's rule-based fallback runs. */
  provider?: Provider | undefined;
  logger: Logger;
  /** The persona, first in the distiller's system message. */
  persona?: string;
  /** `memory.cold_after` (72 h). */
  coldAfterMs?: number;
  /** Candidates per distiller call (40). */
  batchSize?: number;
  /** Recent entries `recall` considers as "context" (30). */
  recentLimit?: number;
  /** The butler's own names (from the persona): facts about them are never recorded. */
  selfNames?: readonly string[];
}

/** What one `runJobs` did. */
export interface JobReport {
  distilled: number;
  facts: number;
  tokens: number;
  archived: number;
  /** Set when a batch failed and waits for the next run. */
  error?: string;
}

/** The memory. */
export interface Memory {
  /** Journals one utterance as a memory candidate. */
  observe(entry: MemoryEntry): Promise<void>;
  /** Keeps an exchange that left layer 1 as a document. */
  keepDocument(draft: DocumentDraft): void;
  /** Distils pending candidates, archives cold documents. */
  runJobs(signal?: AbortSignal): Promise<JobReport>;
  /** Best first; with `asker`, only what that asker may recall (see {@link onlySaidBy}). */
  recall(query: string, options?: RecallOptions): Promise<RecallItem[]>;
  /** Documents for inspection (not counted as an access). */
  documents(): DocumentStore;
  /** The graph, for the prompt index and inspection. */
  graph(): GraphStore;
  /**
   * Forgets everything that came from the input events `eventIds`: journal lines, documents (rows and index), facts.
   * Returns what was removed.
   */
  forget(eventIds: readonly string[]): Promise<{ candidates: number; documents: number; facts: number }>;
  /** Every journaled candidate, oldest first (inspection, replay). */
  candidates(): Promise<MemoryEntry[]>;
  /**
   * The journaled message of each of the input events `eventIds` that the journal holds — what the person said in
   * it (the butler's reply only when the event has no words of theirs) — for showing where a fact came from.
   */
  messages(eventIds: readonly string[]): Promise<Map<string, MemoryEntry>>;
  /** Counters. */
  status(): Record<string, unknown>;
  /** Flushes the journal and both indexes to the disk and folds memory.db's write-ahead log into the file. */
  sync(): Promise<void>;
  /** Compacts the document and entity indexes (slices; yields to the event loop). */
  reindex(): Promise<void>;
  close(): Promise<void>;
}

const CURSOR = "distilled_upto";

// Facts about the butler itself are dropped by the distiller's screen (pipeline/screen.ts), with the other facts
// that must never come from chat.
export { aboutSelf } from "./pipeline/screen.ts";

/** How much more a document or utterance that names a time counts for a when-question. */
const WHEN_BOOST = 2;
/**
 * A query that names a month or a day ("in October", "10月14日", "yesterday") prefers what was said then. Not fitted:
 * no question of the sets names a date, so this is a rule (1.5, as the speaker preference), tested, not tuned.
 */
const DATE_BOOST = 1.5;

/** The input events among `entries` whose turn was `sender`'s as a guest (both halves of an exchange share one). */
function saidByGuest(entries: readonly MemoryEntry[], sender: string): Set<string> {
  return new Set(
    entries.filter((entry) => entry.role === "user" && entry.trust === "guest" && entry.sender === sender)
      .map((entry) => entry.eventId),
  );
}

/**
 * Where the turn of each journal line was said: its user line's channel, sender and trust (the butler's reply of an
 * exchange is read by whoever may read what it answered); a reply whose question is not among `entries` counts as
 * said on its channel by nobody in particular.
 */
function origins(entries: readonly MemoryEntry[]): (entry: MemoryEntry) => Provenance {
  const asked = new Map(entries.filter((entry) => entry.role === "user").map((entry) => [entry.eventId, entry]));
  return (entry) => {
    const user = asked.get(entry.eventId) ?? (entry.role === "user" ? entry : undefined);
    return user
      ? { source: user.source, sender: user.sender, trust: user.trust }
      : { source: entry.source, sender: "", trust: entry.trust };
  };
}

/**
 * The messages among `batch` a distilled fact cites, as who may read them (the fact's `heard`); a fact citing none of
 * them is the owner's alone until someone says it where others may read it.
 */
function heardIn(batch: readonly MemoryEntry[], provenance: readonly string[]): HeardIn[] {
  const origin = origins(batch);
  const byEvent = new Map(batch.map((entry) => [entry.eventId, entry]));
  const heard = provenance.flatMap((event) => {
    const entry = byEvent.get(event);
    return entry ? [{ event, ...origin(entry) }] : [];
  });
  return heard.length ? heard : [OWNER_ONLY];
}

/** Utterances kept in memory to find what was said just before a document's (a layer-1 exchange lives ≤ 30 of them). */
const SAID_LIMIT = 256;
/**
 * Opens the memory in `dir`.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { systemClock } from "../clock.ts";
 * import { log } from "../log/logging.ts";
 *
 * const dataDir = "/var/lib/homed"; // daemon.data_dir
 * const memory = await openMemory({ dir: join(dataDir, "memory"), clock: systemClock, logger: log("memory") });
 * const text = "The spare key is under the blue flowerpot.";
 * await memory.observe({ eventId: "e1", time: Date.now(), role: "user", source: "http", sender: "owner", text });
 * await memory.runJobs();
 * await memory.recall("where is the spare key", { k: 5 });
 * await memory.recall("where is the spare key", { k: 5, asker: { sender: "visitor", trust: "guest" } }); // []
 * ```
 */
export async function openMemory(options: OpenMemoryOptions): Promise<Memory> {
  const { dir, clock, logger } = options;
  await Deno.mkdir(dir, { recursive: true });
  // What is open so far is closed again if a later part fails to open.
  const opened: Array<{ close(): void | Promise<void> }> = [];
  const openIndex = (name: string, label: string, scoring?: ScoringOptions, filterKeys?: readonly string[]) =>
    VectorStore.open(join(dir, name), {
      ...(scoring ? { scoring } : {}),
      ...(filterKeys ? { filterKeys } : {}),
      compactEvery: 5_000,
      now: () => clock.now(),
      onRecovery: (message) => logger.warning(`${label}: {message}`, { message }),
    });
  let journal: TextMemory, index: VectorStore, entityStore: VectorStore, db: DatabaseSync;
  try {
    opened.push(journal = await TextMemory.open(join(dir, "candidates.jsonl"), logger));
    opened.push(index = await openIndex("documents-index", "Document index", DOCUMENT_SCORING, DOCUMENT_FILTER_KEYS));
    opened.push(entityStore = await openIndex("graph-index", "Entity index"));
    db = openMemoryDb(join(dir, "memory.db"));
  } catch (error) {
    for (const part of opened) await part.close();
    throw error;
  }
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
  const graph = new GraphStore(db, {
    onMerge: ({ alias, entity, type }) =>
      logger.info("Graph: {alias} is another name of {type} {entity}; filed as an alias", { alias, entity, type }),
    onChange: (ids) => entities.refresh(ids),
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
  const recentLimit = options.recentLimit ?? 30;
  const said = await journal.last(SAID_LIMIT);
  const recent: MemoryEntry[] = said.slice(-recentLimit);
  const totals = { tokens: 0, runs: 0, failures: 0 };
  let running: Promise<JobReport> | undefined;

  const runJobs = async (signal?: AbortSignal): Promise<JobReport> => {
    const report: JobReport = { distilled: 0, facts: 0, tokens: 0, archived: 0 };
    let cursor = Number(readMeta(db, CURSOR) ?? 0);
    // Only what the distiller has not seen is kept in memory; the rest is read past.
    const pending = await journal.from(cursor);
    const first = cursor;
    const batchSize = options.batchSize ?? 40;
    while (cursor - first < pending.length) {
      const batch = pending.slice(cursor - first, cursor - first + batchSize);
      try {
        // Screened (instructions, the butler itself, identity and trust, duplicates) and attributed (who said each
        // fact, with which trust) by the distiller; the graph refuses a guest's claim against the household's.
        const result = await distiller.distill(batch, signal);
        report.tokens += result.tokens;
        const next = cursor + batch.length;
        const time = batch.at(-1)!.time;
        // Each fact remembers the chats it was learnt in: who may read it follows them (issue 34.4).
        const outcomes = graph.recordBatch(
          result.facts.map((fact) => ({ ...fact, time, heard: heardIn(batch, fact.provenance) })),
          () => writeMeta(db, CURSOR, String(next)),
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
    report.archived = documents.archiveCold(clock.now() - (options.coldAfterMs ?? COLD_AFTER_MS), COLD_MAX_HITS);
    totals.tokens += report.tokens;
    totals.runs++;
    if (report.error) totals.failures++;
    if (report.distilled || report.archived) {
      logger.info(
        "Memory job: {distilled} candidates → {facts} facts, {archived} documents archived, {tokens} tokens",
        {
          ...report,
        },
      );
    }
    return report;
  };

  return {
    async observe(entry) {
      await journal.append(entry);
      recent.push(entry);
      if (recent.length > recentLimit) recent.shift();
      said.push(entry);
      if (said.length > SAID_LIMIT) said.shift();
    },
    keepDocument(draft) {
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
      documents.add({ ...draft, ...(context ? { context } : {}), ...(session ? { session } : {}) });
    },
    runJobs(signal) {
      // One run at a time; a second caller waits for the first.
      running ??= runJobs(signal).finally(() => (running = undefined));
      return running;
    },
    recall(query, { k = 5, asker } = {}) {
      const asksWhen = isWhenQuestion(query);
      const period = namedPeriod(query, clock.now());
      const guest = onlySaidBy(asker);
      // The time and speaker preferences below re-rank: they need a wider pool of documents than the k they keep.
      // Whether the query names a speaker is known from the documents found, so the wider pool is searched first.
      // The asker reads only what is theirs to read (identity/visibility.ts): documents, recent lines and facts.
      const found = documents.search(query, Math.max(3 * k, 30), false, asker);
      const origin = origins(recent);
      const heard = asker ? recent.filter((entry) => visibleTo(asker, origin(entry))) : recent;
      const line = (entry: MemoryEntry) => `${entry.role === "user" ? entry.sender : "butler"}: ${entry.text}`;
      const named = namedSpeakers(query, [...found.map((hit) => hit.document.text), ...heard.map(line)]);
      const pool = asksWhen || period || named.size ? found : found.slice(0, k);
      const shown = new Map(pool.map((hit) => [hit.document.id, hit.document]));
      const items: Array<RecallItem & { document?: string }> = withWhatMatched(pool, query);
      // A fact merges what everyone said about an entity: a guest's recall holds none; a household member's, those
      // learnt where they may read (or the household's).
      const facts = guest !== undefined
        ? []
        : asker
        ? entities.search(query, 3 * k).filter(({ fact }) => factVisibleTo(asker, fact)).slice(0, k)
        : entities.search(query, k);
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
            text: line(entry),
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
      const best = rounded.sort((a, b) => b.score - a.score || b.time - a.time).slice(0, k);
      // Only what is returned counts as accessed.
      documents.touch(best.flatMap((item) => item.document ? [shown.get(item.document)!] : []));
      return Promise.resolve(best.map(({ document: _id, ...item }) => item));
    },
    async forget(eventIds) {
      const ids = new Set(eventIds);
      await running?.catch(() => {});
      const removed = await journal.forget(ids);
      // The distiller's cursor counts journal lines: lines removed before it move it back.
      const cursor = Number(readMeta(db, CURSOR) ?? 0);
      const before = removed.filter((index) => index < cursor).length;
      if (before) writeMeta(db, CURSOR, String(cursor - before));
      for (const list of [recent, said]) {
        for (let i = list.length - 1; i >= 0; i--) if (ids.has(list[i]!.eventId)) list.splice(i, 1);
      }
      const result = { candidates: removed.length, documents: documents.forget(ids), facts: graph.forget(ids) };
      logger.info("Forgot {candidates} candidates, {documents} documents, {facts} facts of {events} events", {
        ...result,
        events: ids.size,
      });
      return result;
    },
    candidates: () => journal.entries(),
    async messages(eventIds) {
      const found = await journal.lookup(new Set(eventIds));
      return new Map([...found].map(([id, entries]) => [id, entries.find((e) => e.role === "user") ?? entries[0]!]));
    },
    documents: () => documents,
    graph: () => graph,
    status: () => ({
      candidates: journal.count,
      distilled: Number(readMeta(db, CURSOR) ?? 0),
      documents: documents.size,
      archived_documents: documents.archived,
      ...graph.counts(),
      distiller: options.provider ? "llm" : "rules",
      distiller_tokens: totals.tokens,
      distiller_runs: totals.runs,
      distiller_failures: totals.failures,
    }),
    sync: async () => {
      await journal.sync();
      await index.sync();
      await entityStore.sync();
      checkpointMemoryDb(db);
    },
    reindex: async () => {
      await index.reindex();
      await entityStore.reindex();
    },
    async close() {
      await running?.catch(() => {});
      limiter.flush();
      await journal.close();
      await index.close();
      await entityStore.close();
      // Only now: both indexes hold (and have synced) everything memory.db does.
      writeMeta(db, CLOSED_CLEANLY, "1");
      db.close();
    },
  };
}

/** The memory.db meta key that says memory was closed cleanly (the indexes then need no check of every id). */
const CLOSED_CLEANLY = "closed_cleanly";

/** The longest part of a context turn a recalled item shows. */
const CONTEXT_SHOWN_CHARS = 120;

/**
 * The documents found, as recall items — each with what made it match. A document is also indexed by the turn said
 * just before it (its context field: "Top drawer." is found by "where is the passport?"); when that turn, not its own
 * words, is what matches the query best, the item shows it and names its event, so what was recalled holds the words
 * that were asked about and who the evidence came from. Without that, the reply outranked the very turn it answered
 * while showing none of its words. When that turn is itself among the documents found, the two are one item (the
 * pair once, at the better score), so a budget of items is not spent twice on the same words; so is a chain of such
 * turns (a question, its answer, the reply to that), whichever of them ranks first.
 */
function withWhatMatched(pool: readonly DocumentHit[], query: string): Array<RecallItem & { document: string }> {
  const items = pool.map((hit) => ({
    kind: "document" as const,
    text: hit.document.text.split("\n").map((line) => focused(line, query)).join("\n"),
    score: hit.score,
    time: hit.document.created,
    provenance: hit.document.provenance,
    document: hit.document.id,
  }));
  const byEvent = new Map<string, number>();
  items.forEach((item, i) => item.provenance.forEach((id) => byEvent.set(id, i)));
  const merged = new Set<number>();
  pool.forEach((hit, i) => {
    const context = hit.document.context;
    if (!context || merged.has(i)) return;
    const [before, own] = similarities([context.text, hit.document.text], query);
    if (!(before! > own!)) return;
    const item = items[i]!;
    const at = byEvent.get(context.eventId);
    if (at !== undefined && at !== i) {
      const earlier = items[at]!;
      earlier.text = `${earlier.text}\n${item.text}`;
      earlier.provenance = [...new Set([...earlier.provenance, ...item.provenance])];
      earlier.score = Math.max(earlier.score, item.score);
      // A turn merged into an item is found there by the turn that follows it, too: a chain is one item.
      item.provenance.forEach((id) => byEvent.set(id, at));
      merged.add(i);
      return;
    }
    const shownContext = focused(context.text, query, CONTEXT_SHOWN_CHARS);
    item.text = `(before: ${shownContext})\n${item.text}`;
    item.provenance = [...new Set([context.eventId, ...item.provenance])];
  });
  return items.filter((_, i) => !merged.has(i));
}

/** The longest a line of a recalled document shows: its sentences that match the query best, in their order. */
const LINE_SHOWN_CHARS = 120;

/**
 * A line cut to its sentences that share a word with the query, the best first while they fit in `max` characters,
 * shown in their own order ("…" where sentences were left out). A line none of whose sentences matches shows its
 * first sentences that fit; a line that fits and whose every sentence matches stays as it is. A speaker's "Name: "
 * stays in front. Recall's items are read within a budget: a long turn's one relevant sentence should not cost the
 * room of three other items, nor should the pleasantries around a short turn's.
 *
 * @example
 * ```ts
 * focused("Anna: We went camping. The tent leaked all night! Next time we take the blue one.", "which tent leaked", 40);
 * // "Anna: … The tent leaked all night! …"
 * focused("Ben: Hi Anna! The passport is in the top drawer.", "where is the passport");
 * // "Ben: … The passport is in the top drawer."
 * ```
 */
export function focused(line: string, query: string, max = LINE_SHOWN_CHARS): string {
  const speaker = /^[^:\n]{1,40}: /.exec(line)?.[0] ?? "";
  const body = line.slice(speaker.length);
  const sentences = body.match(/[^.!?。！？]+[.!?。！？]*\s*/gu) ?? [body];
  if (sentences.length < 2 && line.length <= max) return line;
  const scores = similarities(sentences, query);
  const matches = scores.map((score) => score > 0);
  const anyMatches = matches.some(Boolean);
  const order = sentences.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
  const kept = new Set<number>();
  let used = speaker.length;
  for (const i of order) {
    const length = sentences[i]!.trim().length + 2;
    if (kept.size && (used + length > max || (anyMatches && !matches[i]))) continue;
    kept.add(i);
    used += length;
  }
  if (kept.size === sentences.length && line.length <= max) return line;
  let text = "";
  sentences.forEach((sentence, i) => {
    if (kept.has(i)) text += `${text === "" && i > 0 ? "… " : ""}${sentence.trim()} `;
    else if (text !== "" && !text.endsWith("… ")) text += "… ";
  });
  const shown = text.trim();
  return `${speaker}${shown.length > max ? `${shown.slice(0, max - 1)}…` : shown}`;
}

/**
 * A question that names a person prefers what that person said ("When did Caroline go to the support group?": her
 * own turns tell it). Their name is a word of every line they said, too common in a long conversation to weigh much
 * by its own; 1.5 was chosen on LoCoMo's tune half (1.3, 1.5, 1.8: recall@1 0.476, 0.482, 0.483; recall@10 within the
 * text budget 0.780, 0.780, 0.782), reported on its test half by `eval:memory-locomo`.
 */
const SPEAKER_BOOST = 1.5;

/** The speakers of the texts' lines ("Name: …") whose names the query says as a word. */
function namedSpeakers(query: string, texts: readonly string[]): Set<string> {
  const words = new Set(query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word.length > 1));
  const named = new Set<string>();
  for (const text of texts) {
    for (const line of text.split("\n")) {
      const speaker = /^([^:\n]{1,40}): /.exec(line)?.[1]?.toLowerCase();
      if (speaker && words.has(speaker)) named.add(speaker);
    }
  }
  return named;
}

function spokenBy(text: string, named: ReadonlySet<string>): boolean {
  return text.split("\n").some((line) => named.has(/^([^:\n]{1,40}): /.exec(line)?.[1]?.toLowerCase() ?? ""));
}
