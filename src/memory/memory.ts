/**
 * The memory facade (ARCHITECTURE §7; the daemon and the replay benchmark use it, keep it stable):
 * `openMemory({dir, clock, provider?, logger})` → `{observe, runJobs, recall, close}`. This module is that contract; what
 * it opens is a {@link HouseholdMemory} (`household_memory.ts`), and recall's ranking rules are in `recall/`.
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
import type { Provider } from "../provider/provider.ts";
import type { Clock } from "../clock.ts";
import type { DamagedFiles } from "../fs/set_aside.ts";
import type { StoreHealth } from "../fs/store_health.ts";
import type { DocumentDraft, DocumentStore } from "./document/document_store.ts";
import type { GraphStore } from "./graph/graph_store.ts";
import type { MemoryEntry } from "./text/text_memory.ts";
import type { Asker } from "./recall/asker.ts";
import { HouseholdMemory } from "./household_memory.ts";

export { type Asker, onlySaidBy } from "./recall/asker.ts";

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

/** Options of {@link Memory.recall}. */
export interface RecallOptions {
  /** How many items (5). */
  k?: number;
  /** Whose turn it is; without one (inspection, the replay benchmark) everything may be recalled. */
  asker?: Asker;
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
  /**
   * Where a damaged `memory.db`, journal or index file is set aside and recorded (`fs/set_aside.ts`; the daemon's
   * list, for `/api/status`); one of the memory's own (on `clock`) without it.
   */
  damaged?: DamagedFiles;
  /**
   * Where an index write the disk refuses marks "memory document index" or "memory entity index" degraded
   * (`/api/status` `storage.degraded`); the index goes on, searched, and is logged once the disk has room.
   */
  health?: StoreHealth;
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

// Facts about the butler itself are dropped by the distiller's screen (pipeline/screen.ts), with the other facts
// that must never come from chat.
export { aboutSelf } from "./pipeline/screen.ts";

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
export function openMemory(options: OpenMemoryOptions): Promise<Memory> {
  return HouseholdMemory.open(options);
}
