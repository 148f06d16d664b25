/**
 * Retrieval speed: indexing throughput, query latency (p50/p95, k = 10, the eval queries, measured after reopening
 * from disk) and index size on disk and in heap, for `engine` and `fts5`, at 1k, 10k and 100k documents.
 *
 * Run: deno task bench:retrieval. Writes bench/retrieval/speed.json.
 */

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { InvertedIndex } from "../../src/search/inverted_index.ts";
import { VectorStore } from "../../src/search/store.ts";
import { HOUSEHOLD, termFrequencies } from "../../src/search/tokenizer.ts";
import { environment, percentile, writeResults } from "../support/report.ts";
import { syntheticNotes } from "./synthetic.ts";
import { fts5System, ftsMatchQuery } from "./systems.ts";

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
/**
 * JS heap plus external memory (typed-array backing stores live outside the V8 heap), after collecting garbage —
 * with event-loop turns in between, since backing stores are released by finalizers.
 */
const heapUsed = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const usage = Deno.memoryUsage();
  return usage.heapUsed + usage.external;
};
const home = JSON.parse(await Deno.readTextFile(new URL("./home_set.json", import.meta.url))) as {
  queries: Array<{ text: string }>;
};
const queries = home.queries.map((q) => q.text);
const SIZES = (Deno.args.find((arg) => !arg.startsWith("--")) ?? "1000,10000,100000").split(",").map(Number);
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for await (const entry of Deno.readDir(dir)) if (entry.isFile) total += (await Deno.stat(join(dir, entry.name))).size;
  return total;
}

function latencies(search: (query: string) => unknown): number[] {
  for (const query of queries) search(query); // warm-up
  const samples: number[] = [];
  for (let round = 0; round < 4; round++) {
    for (const query of queries) {
      const start = performance.now();
      search(query);
      samples.push(performance.now() - start);
    }
  }
  return samples;
}

interface Measured {
  indexMs: number;
  openMs: number;
  latency: number[];
  diskBytes: number;
  heapBytes: number;
}
const row = (size: number, median: number, m: Measured) => ({
  docs_per_s: Math.round(size / (m.indexMs / 1000)),
  open_ms: round(m.openMs, 1),
  p50_ms: round(percentile(m.latency, 50)),
  p95_ms: round(percentile(m.latency, 95)),
  disk_mb: round(m.diskBytes / 1048576, 2),
  heap_mb: round(m.heapBytes / 1048576, 2),
  median_chars: median,
});

/**
 * Runs `work` while a zero-delay timer chain watches the event loop; the longest gap between two ticks is the longest
 * the main thread was blocked (target: about 20 ms for compaction of any size).
 */
async function stallDuring(work: () => Promise<void>): Promise<{ totalMs: number; maxStallMs: number }> {
  let done = false;
  let maxStallMs = 0;
  const watcher = (async () => {
    let last = performance.now();
    while (!done) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      const now = performance.now();
      maxStallMs = Math.max(maxStallMs, now - last);
      last = now;
    }
  })();
  const started = performance.now();
  await work();
  const totalMs = performance.now() - started;
  done = true;
  await watcher;
  return { totalMs, maxStallMs };
}

const rows: Record<string, Record<string, number | string>> = {};
for (const size of SIZES) {
  const docs = syntheticNotes(size);
  const median = [...docs.map((d) => [...d.text].length)].sort((a, b) => a - b)[Math.floor(size / 2)]!;

  // engine
  const engineDir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-speed-engine-" });
  let writer: VectorStore | undefined = await VectorStore.open(engineDir);
  let start = performance.now();
  for (let i = 0; i < docs.length; i += 1000) {
    writer.putMany(docs.slice(i, i + 1000).map((d) => ({ id: d.id, text: d.text, meta: { time: d.time } })));
  }
  const engineIndexMs = performance.now() - start;
  const compaction = await stallDuring(() => writer!.reindex());
  await writer.close();
  writer = undefined;
  const before = await heapUsed();
  start = performance.now();
  const store = await VectorStore.open(engineDir);
  const engineOpenMs = performance.now() - start;
  const engineHeap = (await heapUsed()) - before;
  const engineLatency = latencies((query) => store.search(query, { k: 10 }));
  const engineDisk = await dirBytes(engineDir);
  // Anchor: a one-shot synchronous rebuild of the same documents held wholly in memory (as the store did before
  // compaction was sliced and the index moved to a segment on disk) — one block of this length.
  const inMemory = new InvertedIndex();
  for (const d of docs) inMemory.put(d.id, termFrequencies(d.text, { lexicon: HOUSEHOLD }), { time: d.time });
  start = performance.now();
  inMemory.compact();
  const syncRebuildMs = performance.now() - start;
  await store.close();
  await Deno.remove(engineDir, { recursive: true });
  rows[`engine ${size}`] = {
    ...row(size, median, {
      indexMs: engineIndexMs,
      openMs: engineOpenMs,
      latency: engineLatency,
      diskBytes: engineDisk,
      heapBytes: engineHeap,
    }),
    compact_ms: round(compaction.totalMs, 1),
    compact_max_stall_ms: round(compaction.maxStallMs, 1),
    anchor_sync_rebuild_ms: round(syncRebuildMs, 1),
  };

  // fts5
  const ftsDir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-speed-fts5-" });
  const path = join(ftsDir, "fts.db");
  const fts = fts5System(path);
  start = performance.now();
  for (let i = 0; i < docs.length; i += 1000) fts.index(docs.slice(i, i + 1000));
  const ftsIndexMs = performance.now() - start;
  fts.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  fts.close!();
  const ftsBefore = await heapUsed();
  start = performance.now();
  const reopened = new DatabaseSync(path);
  const statement = reopened.prepare("SELECT doc_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10");
  const ftsOpenMs = performance.now() - start;
  const ftsHeap = (await heapUsed()) - ftsBefore;
  const ftsLatency = latencies((query) => {
    const match = ftsMatchQuery(query);
    return match ? statement.all(match) : [];
  });
  reopened.close();
  const ftsDisk = await dirBytes(ftsDir);
  await Deno.remove(ftsDir, { recursive: true });
  rows[`fts5 ${size}`] = row(size, median, {
    indexMs: ftsIndexMs,
    openMs: ftsOpenMs,
    latency: ftsLatency,
    diskBytes: ftsDisk,
    heapBytes: ftsHeap,
  });
}

const env = await environment();
await writeResults(new URL("./speed.json", import.meta.url), {
  commit: env.commit,
  deno: env.deno,
  cpu: env.cpu,
  queries: queries.length,
  k: 10,
  note:
    "heap_mb: JS heap + external (typed arrays) held after reopening; fts5 keeps its index in SQLite's page cache, outside it. engine disk_mb includes the previous generation kept as a crash fallback",
  rows,
});
console.log(
  `retrieval speed (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu}); ${queries.length} queries × 4, k = 10`,
);
console.table(rows);
