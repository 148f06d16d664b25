/**
 * A persistent TF-IDF vector store: a {@link SegmentIndex} — a segment searched on disk, and in memory the documents
 * written since — with a write-ahead log.
 *
 * On disk, in its folder: `snap-<g>.bin` (every document at the last compaction, as one checksummed segment, see
 * `segment.ts`; older stores' snapshots — the binary `HVS2` and the record format — are still read, and written
 * anew as a segment at once) and `wal-<g>.log` (every change since), as checksummed records. A write is
 * acknowledged when its record is wholly written, so a crashed process loses nothing it acknowledged. Compaction
 * merges the segment's live documents with the newer ones into `snap-<g+1>` through a temporary file, fsync and
 * rename, then starts `wal-<g+1>`; the previous generation is kept until the next compaction. Compaction yields to
 * the event loop between slices; writes made meanwhile go to the current log and are carried into `wal-<g+1>` (and
 * into the new index) before the new segment is renamed into place, so a crash at any point loses nothing
 * acknowledged. If the folder or the log is deleted under a running store, {@link VectorStore.sync} notices and
 * writes them anew (the open segment is still readable). On open, a torn last log record (never acknowledged) is cut
 * off; a snapshot or log that is corrupt is set aside as `*.damaged-<ISO time>` (`fs/set_aside.ts`, recorded in the
 * `damaged` option's list) and the store is rebuilt from the previous generation — a bad file is never silently used.
 *
 * Beside it: the folder's files by name (`store_files.ts`), the log's records (`store_records.ts`), the analyzer check
 * (`store_analyzer.ts`), filter terms (`filter_terms.ts`), the older snapshot formats (`older_snapshot.ts`) and the
 * default pause (`yield_every.ts`).
 *
 * @module
 */

import { join } from "node:path";
import { DamagedFiles } from "../fs/set_aside.ts";
import { storageFault } from "../fs/store_health.ts";
import { CONTEXT_FIELD, type DocMeta, type Hit, type SearchOptions } from "./inverted_index.ts";
import { withFilterTerms, withFilterTermsAll } from "./filter_terms.ts";
import { decodeOlderSnapshot } from "./older_snapshot.ts";
import { frameAll, readRecords } from "./record_file.ts";
import { isSegment, Segment } from "./segment.ts";
import { SegmentIndex } from "./segment_index.ts";
import { writeSegment } from "./segment_writer.ts";
import { type IndexSnapshot, SnapshotError } from "./snapshot.ts";
import { checkAnalyzer } from "./store_analyzer.ts";
import { StoreFiles } from "./store_files.ts";
import type { OpenReport, VectorStoreOptions } from "./store_options.ts";
import type { PutRecord, StoreRecord } from "./store_records.ts";
import { ANALYZER, HOUSEHOLD, termFrequencies } from "./tokenizer.ts";
import { yieldEvery } from "./yield_every.ts";

export type { OpenReport, VectorStoreOptions } from "./store_options.ts";

/** How long the default pause lets work run before it yields to the event loop. */
const YIELD_AFTER_MS = 8;

/** {@link VectorStore.reindex} compacts once the log holds a record for every this many documents. */
export const REINDEX_SHARE = 16;

const engineAnalyzer = (text: string) => termFrequencies(text, { lexicon: HOUSEHOLD });

/** The store. */
export class VectorStore {
  readonly dir: string;
  #files: StoreFiles;
  #index: SegmentIndex;
  #options: VectorStoreOptions;
  #filterKeys: ReadonlySet<string>;
  #analyze: (text: string) => Map<string, number>;
  #generation = 0;
  #wal: Deno.FsFile | undefined;
  #walRecords = 0;
  #report: OpenReport = { generation: 0, documents: 0, recovered: [] };
  /** While a compaction runs: the log records written since its snapshot point, for the next generation's log. */
  #carried: StoreRecord[] | undefined;
  #compacting: Promise<void> | undefined;
  /** The analyzer's name, when the store checks it. */
  #analyzer: string | undefined;
  /** Log size at which the next automatic compaction may start (moved on after a failed one). */
  #nextAutoCompact = 0;
  /** Bytes of the current log that hold whole records: a write the disk cut short is cut back to here. */
  #walBytes = 0;
  /**
   * Changes in the index (searched) that the log does not hold yet, the disk being full or read-only: written first
   * by the next write, {@link sync} or compaction that the disk takes (issue 38.2).
   */
  #unlogged: StoreRecord[] = [];
  /** Whether this store is recorded as degraded in `health` now. */
  #degraded = false;

  private constructor(dir: string, options: VectorStoreOptions) {
    this.dir = dir;
    this.#files = new StoreFiles(dir);
    this.#options = options;
    this.#analyze = options.analyze ?? engineAnalyzer;
    this.#filterKeys = new Set(options.filterKeys ?? []);
    this.#index = new SegmentIndex(options.scoring);
  }

  /** The index: what tests and benchmarks inspect (`verify`, `ids`, `get`). */
  get index(): SegmentIndex {
    return this.#index;
  }

  /**
   * Opens (or creates) the store in `dir`, recovering from a crash if needed.
   *
   * @example
   * ```ts
   * import { join } from "node:path";
   *
   * const dataDir = "/var/lib/homed"; // daemon.data_dir
   * const store = await VectorStore.open(join(dataDir, "vector", "knowledge"));
   * store.put("cooking#1", "番茄炒蛋：先炒蛋", { topic: "cooking" });
   * store.search("怎么做番茄炒蛋", { k: 3 }); // [{ id: "cooking#1", score: 0.92, meta: { topic: "cooking" } }]
   * ```
   */
  static async open(dir: string, options: VectorStoreOptions = {}): Promise<VectorStore> {
    await Deno.mkdir(dir, { recursive: true });
    const store = new VectorStore(dir, options);
    await store.#load();
    return store;
  }

  /** What the last open found. */
  get report(): OpenReport {
    return this.#report;
  }

  get size(): number {
    return this.#index.size;
  }

  /** The generation in use (snapshot and log numbers on disk). */
  get generation(): number {
    return this.#generation;
  }

  #recovered(message: string): void {
    this.#report.recovered.push(message);
    this.#options.onRecovery?.(message);
  }

  /** Moves a damaged file aside as `<file>.damaged-<ISO time>` (`fs/set_aside.ts`), recorded where homed shows it. */
  #setAside(path: string, why: string): void {
    const damaged = this.#options.damaged ?? new DamagedFiles(this.#options.now ?? Date.now);
    const kept = path.endsWith(".log") ? { en: "the log's records before the damage", zh: "日志里损坏之前的记录" } : {
      en: "the previous generation and the logs after it; what is missing is indexed again from its source",
      zh: "上一版索引和它之后的日志；缺的部分会从原文重新建索引",
    };
    const { moved_to } = damaged.setAside(path, why, { kept });
    this.#recovered(`${path} is ${why}; set aside as ${moved_to}`);
  }

  #apply(record: StoreRecord, index = this.#index): void {
    if (record.op === "put") {
      // The filter terms are not logged: they follow from the metadata.
      index.put(record.id, withFilterTerms(new Map(record.t), record.m ?? {}, this.#filterKeys), record.m ?? {});
    } else if (record.op === "del") index.delete(record.id);
  }

  /**
   * Loads a generation's snapshot; false when it is missing or not whole. A segment is opened where it lies; an older
   * snapshot (the binary `HVS2`, or the record format before it) is converted in place first — written as a segment
   * beside it and renamed over it, the same documents in the same generation — so it never has to be held in memory
   * as a whole again.
   */
  async #loadSnapshot(generation: number): Promise<boolean> {
    if (generation === 0) return true;
    const path = this.#files.path("snap", generation);
    if (!(await isSegment(path))) {
      const older = await this.#readOlderSnapshot(path);
      if (!older) return false;
      const temporary = `${path}.tmp`;
      await writeSegment(temporary, { delta: withFilterTermsAll(older, this.#filterKeys) }, this.#pause);
      Deno.renameSync(temporary, path);
    }
    try {
      this.#index = new SegmentIndex(this.#index.scoring, await Segment.open(path, this.#pause));
      return true;
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error;
      this.#setAside(path, error.message);
      return false;
    }
  }

  /** An older snapshot's documents, or undefined (set aside) when it is corrupt or not whole, or missing. */
  async #readOlderSnapshot(path: string): Promise<IndexSnapshot | undefined> {
    const bytes = await this.#files.read(path);
    if (!bytes) return undefined;
    const older = decodeOlderSnapshot(bytes, this.#index.scoring);
    if ("snapshot" in older) return older.snapshot;
    this.#setAside(path, older.corrupt);
    return undefined;
  }

  get #pause(): () => Promise<void> {
    return this.#options.pause ?? this.#yieldEvery;
  }

  /** The default pause: see `yield_every.ts`. */
  #yieldEvery = yieldEvery(YIELD_AFTER_MS);

  /** Replays a log; a torn tail is cut off, corruption before the end stops the replay and sets the log aside. */
  async #replay(generation: number): Promise<void> {
    const path = this.#files.path("wal", generation);
    const bytes = await this.#files.read(path);
    if (!bytes) return;
    const { records, problem, validBytes } = readRecords(bytes);
    for (const record of records) this.#apply(record as StoreRecord);
    this.#walRecords = records.length;
    if (!problem) return;
    if (problem.kind === "torn") {
      await Deno.truncate(path, validBytes);
      this.#recovered(`${path}: cut a torn last record at byte ${problem.offset} (never acknowledged)`);
    } else {
      const good = bytes.subarray(0, validBytes);
      this.#setAside(path, `corrupt at byte ${problem.offset} (${problem.detail})`);
      await Deno.writeFile(path, good);
    }
  }

  async #load(): Promise<void> {
    for await (const entry of Deno.readDir(this.dir)) {
      // A compaction that crashed before its rename left only a temporary file: the old generation is still whole.
      if (entry.name.endsWith(".tmp")) await Deno.remove(join(this.dir, entry.name));
    }
    await this.#checkAnalyzer();
    const generations = await this.#files.generations();
    let chosen = generations[0] ?? 0;
    for (const generation of generations.length ? generations : [0]) {
      chosen = generation;
      if (await this.#loadSnapshot(generation)) break;
      // The snapshot of this generation is bad: rebuild from the one before, replaying this generation's log on top.
      const older = generations.find((g) => g < generation);
      if (older === undefined) {
        this.#recovered(`no older generation to rebuild from; starting from the log of generation ${generation} alone`);
        break;
      }
      this.#resetIndex();
      if (await this.#loadSnapshot(older)) {
        await this.#replay(older);
        break;
      }
    }
    await this.#replay(chosen);
    this.#generation = chosen;
    this.#wal = await Deno.open(this.#files.path("wal", chosen), { create: true, append: true });
    this.#walBytes = (await this.#wal.stat()).size;
    this.#report = { generation: chosen, documents: this.#index.size, recovered: this.#report.recovered };
    const problems = this.#index.verify();
    if (problems.length) throw new Error(`Vector store ${this.dir} is inconsistent after loading: ${problems[0]}`);
    // A long log (writes faster than compaction ran, or a kill before it finished) is all in memory now: compact it
    // into the segment in the background, as the write that crossed `compactEvery` would have.
    this.#maybeCompact();
  }

  /** Empties the folder when its terms came from another analyzer, then records the current one. */
  async #checkAnalyzer(): Promise<void> {
    const current = this.#options.analyzer ?? (this.#options.analyze ? undefined : ANALYZER);
    this.#analyzer = current;
    if (current === undefined) return;
    await checkAnalyzer(this.#files, current, (message) => this.#recovered(message));
  }

  #resetIndex(): void {
    this.#index.close();
    this.#index = new SegmentIndex(this.#index.scoring);
  }

  /**
   * Logs `records` (after any the disk refused before). When the disk refuses them (full, read-only, failing), what
   * was written is cut back off, they are kept to be logged later, the store is marked degraded, and the caller goes
   * on — the index still takes them, so searches see them; any other error is thrown.
   */
  #append(records: StoreRecord[]): void {
    const wal = this.#wal;
    if (!wal) throw new RangeError(`Vector store ${this.dir} is closed`);
    const pending = this.#unlogged.length ? [...this.#unlogged, ...records] : records;
    const bytes = frameAll(pending);
    try {
      let written = 0;
      while (written < bytes.length) written += wal.writeSync(bytes.subarray(written));
      if (this.#options.fsyncEachWrite) wal.syncDataSync();
    } catch (error) {
      if (!storageFault(error)) throw error;
      try {
        wal.truncateSync(this.#walBytes); // never a torn record in the middle of the log
      } catch { /* the next open cuts a torn tail */ }
      this.#unlogged = [...pending];
      this.#carried?.push(...records);
      this.#faulted(error, `${this.#unlogged.length} changes are searched but not logged yet`);
      return;
    }
    this.#walBytes += bytes.length;
    this.#walRecords += pending.length;
    this.#carried?.push(...records);
    this.#unlogged = [];
    this.#wrote();
  }

  /** Records a storage fault of this store (once per episode) in `health` and with `onRecovery`. */
  #faulted(error: unknown, what: string): void {
    // Recorded each time (a background re-check may have cleared it meanwhile); told once per episode.
    this.#options.health?.record.failed(this.#options.health.store, this.dir, error);
    if (this.#degraded) return;
    this.#degraded = true;
    this.#options.onRecovery?.(
      `${this.dir} cannot be written (${(error as Error).message}): ${what}; they are written once the disk ` +
        "has room again (free space on it, or remount it rw)",
    );
  }

  /** A write succeeded: the store is no longer degraded once nothing is left unlogged. */
  #wrote(): void {
    if (!this.#degraded || this.#unlogged.length) return;
    this.#degraded = false;
    this.#options.health?.record.succeeded(this.#options.health.store);
    this.#options.onRecovery?.(`${this.dir} is written again: every change is in its log`);
  }

  /** Changes searched but not yet in the log (the disk refused them); 0 when the store is not degraded. */
  get unlogged(): number {
    return this.#unlogged.length;
  }

  /**
   * Adds or replaces a document from its text. When this returns, the write is on disk (in the log).
   *
   * @example
   * ```ts
   * declare const store: VectorStore;
   * store.put("n1", "客厅的灯每天 22:00 关闭", { time: Date.now() });
   * ```
   */
  put(id: string, text: string, meta: DocMeta = {}, context?: string): void {
    this.putMany([{ id, text, meta, ...(context ? { context } : {}) }]);
  }

  /**
   * Adds or replaces several documents with one log write. A document's `context` (the turn before it, say) becomes
   * a second field: its terms, namespaced, in the same vector — found by a search with a `contextWeight`.
   */
  putMany(docs: ReadonlyArray<{ id: string; text: string; meta?: DocMeta; context?: string }>): void {
    const records: PutRecord[] = docs.map((doc) => {
      const terms = this.#analyze(doc.text);
      if (doc.context) {
        for (const [term, tf] of this.#analyze(doc.context)) terms.set(`${CONTEXT_FIELD}${term}`, tf);
      }
      return { op: "put", id: doc.id, t: [...terms], m: doc.meta ?? {} };
    });
    this.#append(records);
    for (const record of records) this.#apply(record);
    this.#maybeCompact();
  }

  /** Removes a document; false when it was not there. */
  delete(id: string): boolean {
    if (!this.#index.has(id)) return false;
    this.#append([{ op: "del", id }]);
    this.#index.delete(id);
    this.#maybeCompact();
    return true;
  }

  has(id: string): boolean {
    return this.#index.has(id);
  }

  /** The live documents' count and id digest ({@link SegmentIndex.idDigest}). */
  idDigest(): { count: number; hashSum: number } {
    return this.#index.idDigest();
  }

  /**
   * Top-k documents for a text query.
   *
   * @example
   * ```ts
   * declare const store: VectorStore;
   * store.search("living room lamp", { k: 5, filter: { topic: "smart_home" } });
   * ```
   */
  search(query: string, options: SearchOptions & { contextWeight?: number } = {}): Hit[] {
    const contextWeight = options.contextWeight ?? 0;
    const terms = this.#analyze(query);
    // A query term weighs (1 + ln tf)·idf: tf = e^(w−1) makes the context field's copy weigh w·idf.
    if (contextWeight > 0) {
      for (const term of [...terms.keys()]) terms.set(`${CONTEXT_FIELD}${term}`, Math.exp(contextWeight - 1));
    }
    // The options as given (ranking ignores `contextWeight`), not a copy: see `rank`.
    return this.#index.search(terms, options, this.#filterKeys);
  }

  #maybeCompact(): void {
    const every = this.#options.compactEvery;
    if (!every || this.#compacting || this.#walRecords < Math.max(every, this.#nextAutoCompact)) return;
    this.compact().catch((error) => {
      this.#nextAutoCompact = this.#walRecords + every;
      this.#options.onRecovery?.(`compaction of ${this.dir} failed (${(error as Error).message}); will try again`);
    });
  }

  /**
   * The memory job's reindex: rebuilds the index and writes a new snapshot once the log holds at least one record for
   * every {@link REINDEX_SHARE} documents (at least one). Less is left for a later run: rewriting a year's snapshot
   * (24 MB at 100k documents) every 30 minutes for a handful of new lines cost more than it mended.
   */
  async reindex(): Promise<void> {
    // A compaction already running is waited for first: what was written meanwhile may call for another.
    await this.#compacting?.catch(() => {});
    if (this.#walRecords === 0 || this.#walRecords * REINDEX_SHARE < this.size) return;
    await this.compact();
  }

  /**
   * Compaction: the index rebuilt and a snapshot of the live documents written, in slices that yield to the event
   * loop, then a fresh log; the previous generation stays as a fallback. A call during a running compaction waits
   * for that one.
   */
  compact(): Promise<void> {
    this.#compacting ??= this.#compact().catch((error) => {
      // The disk refused the new segment: the old generation is whole and still used; a later compaction tries again.
      if (storageFault(error)) this.#faulted(error, "its compaction cannot write a new segment");
      throw error;
    }).finally(() => (this.#compacting = undefined));
    return this.#compacting;
  }

  async #compact(): Promise<void> {
    if (!this.#wal) throw new RangeError(`Vector store ${this.dir} is closed`);
    const pause = this.#pause;
    // Snapshot point: what the index holds now goes into the segment; later writes are carried to the new log.
    const input = this.#index.cut();
    this.#carried = [];
    const next = this.#generation + 1;
    const temporary = `${this.#files.path("snap", next)}.tmp`;
    let segment: Segment | undefined;
    try {
      await Deno.mkdir(this.dir, { recursive: true });
      await writeSegment(temporary, input, pause);
      segment = await Segment.open(temporary, pause);
      if (!this.#wal) throw new RangeError(`Vector store ${this.dir} was closed during compaction`);
      // From here on everything is synchronous, so no write can slip between the steps. The next log gets the
      // carried writes first (they are also in the current log); only then does the segment take over.
      const nextWalPath = this.#files.path("wal", next);
      const wal = Deno.openSync(nextWalPath, { create: true, write: true, truncate: true });
      const carried = frameAll(this.#carried);
      try {
        let written = 0;
        while (written < carried.length) written += wal.writeSync(carried.subarray(written));
        wal.syncDataSync();
        Deno.renameSync(temporary, this.#files.path("snap", next));
      } catch (error) {
        wal.close();
        throw error;
      }
      const index = new SegmentIndex(this.#index.scoring, segment);
      for (const record of this.#carried) this.#apply(record, index);
      segment = undefined;
      this.#index.close();
      this.#index = index;
      this.#wal.close();
      this.#wal = wal;
      const previous = this.#generation;
      this.#generation = next;
      this.#walRecords = this.#carried.length;
      this.#walBytes = carried.length;
      // Whatever the log did not take is in the segment (before the cut) or was carried into the new log (after).
      this.#unlogged = [];
      this.#wrote();
      // Keep generation `previous` as the fallback; drop the one before it.
      for (const path of [this.#files.path("snap", previous - 1), this.#files.path("wal", previous - 1)]) {
        try {
          Deno.removeSync(path);
        } catch { /* already gone */ }
      }
      // A folder written anew (deleted under us) needs its analyzer file, or it would read as the first analyzer's.
      if (this.#analyzer !== undefined && !(await Deno.stat(this.#files.analyzerFile).then(() => true, () => false))) {
        await this.#files.writeAnalyzer(this.#analyzer);
      }
    } catch (error) {
      segment?.close();
      await Deno.remove(temporary).catch(() => {});
      throw error;
    } finally {
      this.#carried = undefined;
    }
  }

  /**
   * Flushes the log to the disk (fsync). If the log file or the folder was deleted while the store ran, the files
   * are written anew from memory (a compaction) and the recovery is reported.
   */
  async sync(): Promise<void> {
    const wal = this.#wal;
    if (!wal) return;
    // Changes the disk refused before: logged now if it takes them (else kept, the store still degraded).
    if (this.#unlogged.length) this.#append([]);
    // Not syncDataSync: an fsync of a log that turns keep writing to took milliseconds on a VM's disk, and a
    // synchronous one held every turn waiting meanwhile. A compaction that swaps the log meanwhile has synced its own.
    try {
      await wal.syncData();
    } catch (error) {
      if (this.#wal === wal) throw error;
    }
    try {
      await Deno.stat(this.#files.path("wal", this.#generation));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      this.#recovered(
        `${this.#files.path("wal", this.#generation)} disappeared while homed ran; writing the store anew`,
      );
      await this.compact();
    }
  }

  /**
   * Waits for a running compaction, syncs and closes; the store refuses writes afterwards. A failed sync (a
   * read-only or failing disk) is thrown, but only after the log is closed: left open, it would keep the disk busy,
   * so the owner could not unmount it to repair it.
   */
  async close(): Promise<void> {
    await this.#compacting?.catch(() => {});
    const wal = this.#wal;
    if (!wal) return;
    this.#wal = undefined;
    try {
      wal.syncDataSync();
    } finally {
      wal.close();
      this.#index.close();
    }
  }
}
