/**
 * What a {@link VectorStore} is opened with and what opening it found. Its own file so the store's helpers (the
 * analyzer check, the filter terms) can take the options without importing the store.
 *
 * @module
 */

import type { DamagedFiles } from "../fs/set_aside.ts";
import type { StoreHealth } from "../fs/store_health.ts";
import type { ScoringOptions } from "./inverted_index.ts";

/** Options of {@link VectorStore.open}. */
export interface VectorStoreOptions {
  /** Text → term frequencies; the engine's tokenizer with the household lexicon by default. */
  analyze?: (text: string) => Map<string, number>;
  /**
   * Names what `analyze` does (default: `ANALYZER` of `tokenizer.ts`, with the default `analyze`). Stored terms come
   * from the analyzer of their day: when the name differs from the one on disk the store opens empty (the old files
   * are removed and the open report says so) and its owner indexes its documents again from their source.
   */
  analyzer?: string;
  scoring?: ScoringOptions;
  /**
   * Metadata keys searches filter by with `filter: { key: value }`: each document's values of them are indexed as
   * filter terms, so such a filter reads one posting list rather than every candidate's metadata from disk. Fixed
   * for a store: changing them for existing files needs a new `analyzer` name (the store is then indexed again).
   */
  filterKeys?: readonly string[];
  /** fsync after every write (survives power loss, slower); otherwise only at {@link VectorStore.sync}. */
  fsyncEachWrite?: boolean;
  /** Compact automatically when the log has this many records. */
  compactEvery?: number;
  now?: () => number;
  /**
   * Where a damaged segment or log is set aside and recorded (the daemon's, for `/api/status`); a store of its own
   * (on `now`) without one.
   */
  damaged?: DamagedFiles;
  /**
   * Where a write the disk refuses (full, read-only, failing) marks this store degraded, under the name `store`
   * (e.g. "knowledge index"), until a write succeeds again (issue 38.2). The store goes on meanwhile: the index takes
   * the change, searches see it, and the log takes it with the next write the disk takes.
   */
  health?: { record: Pick<StoreHealth, "failed" | "succeeded">; store: string };
  /** Told about recovery actions (torn tail cut, corrupt file set aside, files written anew, a failed compaction). */
  onRecovery?: (message: string) => void;
  /**
   * Between slices of a compaction or of opening a segment (default: one turn of the event loop — a zero-delay timer —
   * once 8 ms have passed since the last).
   */
  pause?: () => Promise<void>;
}

/** What opening found. */
export interface OpenReport {
  generation: number;
  documents: number;
  /** One line per recovery action; empty on a clean open. */
  recovered: string[];
}
