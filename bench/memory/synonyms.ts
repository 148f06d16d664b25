/**
 * Synonym merge: quality on the frozen labelled alias set (bench/memory/alias_set.json) and cost at 10,000 entities.
 *
 * Quality compares three rules on the same pairs, within each pair's type: `exact` (the anchor — what the graph did
 * before: one entity per distinct spelling), `key` (normalised key only) and `key+lsh` (what the graph uses: the key,
 * then a one-character typo in long Latin names through MinHash-LSH; each pair alone in an in-memory memory.db, rolled
 * back after it). Cost, on SQLite files as the daemon has them (the index lives in memory.db, schema 9): filing
 * 10,000 names in one transaction, probing 10,000 others, recording 10,000 facts through the real GraphStore, and
 * opening a GraphStore on them again (nothing to load).
 *
 * Run: deno task eval:synonyms (writes bench/out/memory/results.json; with --record, bench/memory/results.json).
 */

import { join } from "node:path";
import { openMemoryDb, transaction } from "../../src/memory/database.ts";
import { GraphStore } from "../../src/memory/graph/graph_store.ts";
import { normalizeName, SynonymIndex } from "../../src/memory/graph/synonyms.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

interface Pair {
  a: string;
  b: string;
  type: string;
  same: boolean;
}

const set = JSON.parse(await Deno.readTextFile(new URL("./alias_set.json", import.meta.url))) as { pairs: Pair[] };

const pairDb = openMemoryDb(":memory:");
const pairIndex = new SynonymIndex(pairDb);
const rules: Record<string, (pair: Pair) => boolean> = {
  exact: (pair) => pair.a.trim() === pair.b.trim(),
  key: (pair) => normalizeName(pair.a) === normalizeName(pair.b),
  "key+lsh": (pair) => {
    pairDb.exec("BEGIN");
    try {
      pairIndex.add(1, pair.a, pair.type);
      return pairIndex.probe(pair.b, pair.type) === 1;
    } finally {
      pairDb.exec("ROLLBACK");
    }
  },
};

const round = (value: number, digits = 3) => Number(value.toFixed(digits));
const quality: Record<string, Record<string, number>> = {};
const mistakes: Record<string, string[]> = {};
for (const [name, rule] of Object.entries(rules)) {
  let tp = 0, fp = 0, fn = 0, tn = 0;
  mistakes[name] = [];
  for (const pair of set.pairs) {
    const said = rule(pair);
    if (said && pair.same) tp++;
    else if (said) fp++;
    else if (pair.same) fn++;
    else tn++;
    if (said !== pair.same) mistakes[name]!.push(`${pair.same ? "missed" : "wrongly merged"}: ${pair.a} / ${pair.b}`);
  }
  const precision = tp + fp ? tp / (tp + fp) : 1;
  const recall = tp + fn ? tp / (tp + fn) : 1;
  quality[name] = {
    precision: round(precision),
    recall: round(recall),
    f1: round(precision + recall ? (2 * precision * recall) / (precision + recall) : 0),
    false_merges: fp,
    missed: fn,
    pairs: tp + fp + fn + tn,
  };
}

/** Deterministic device-like names: "<room> <thing> <n>" in English, "<room><thing><n>号" in Chinese. */
function syntheticName(i: number): { name: string; type: string } {
  const rooms = ["living room", "bedroom", "kitchen", "study", "balcony", "bathroom", "hallway", "garage"];
  const things = ["lamp", "sensor", "thermostat", "speaker", "curtain", "camera", "plug", "fan"];
  const zhRooms = ["客厅", "卧室", "厨房", "书房", "阳台", "浴室", "走廊", "车库"];
  const zhThings = ["灯", "传感器", "空调", "音箱", "窗帘", "摄像头", "插座", "风扇"];
  const type = ["device", "thing", "place", "person"][i % 4]!;
  const name = i % 2
    ? `${rooms[i % 8]} ${things[(i >> 3) % 8]} ${i}`
    : `${zhRooms[i % 8]}${zhThings[(i >> 3) % 8]}${i}号`;
  return { name, type };
}

pairDb.close();

const N = 10_000;
const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-synonyms-" });
const indexDb = openMemoryDb(join(dir, "index.db"));
const index = new SynonymIndex(indexDb);
let started = performance.now();
transaction(indexDb, () => {
  for (let i = 0; i < N; i++) {
    const { name, type } = syntheticName(i);
    index.add(i, name, type);
  }
});
const addMs = performance.now() - started;
const probeUs: number[] = [];
let hits = 0;
for (let i = 0; i < N; i++) {
  const { name, type } = syntheticName(i + N); // unseen names: the common case, a miss
  const t = performance.now();
  if (index.probe(name, type) !== undefined) hits++;
  probeUs.push((performance.now() - t) * 1000);
}
indexDb.close();

const db = openMemoryDb(join(dir, "memory.db"));
let merges = 0;
const graph = new GraphStore(db, { onMerge: () => merges++ });
started = performance.now();
graph.recordBatch(Array.from({ length: N }, (_, i) => {
  const subject = syntheticName(i);
  return { subject, predicate: "state", object: "on", time: i, provenance: [`e${i}`], single: true };
}));
const recordMs = performance.now() - started;
started = performance.now();
const reopened = new GraphStore(db);
const loadMs = performance.now() - started;
void reopened;
db.close();
await Deno.remove(dir, { recursive: true });

const cost = {
  entities: N,
  index_add_total_ms: round(addMs, 1),
  probe_p50_us: round(percentile(probeUs, 50), 1),
  probe_p99_us: round(percentile(probeUs, 99), 1),
  false_merges_among_unseen: hits,
  graph_record_10k_facts_ms: round(recordMs, 1),
  graph_merges_among_10k_distinct: merges,
  graph_open_index_load_ms: round(loadMs, 1),
};

const env = await environment();
await writeResults(new URL("./results.json", import.meta.url), { ...env, quality, cost, mistakes });
console.log(`synonym merge (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu}); anchor: exact`);
console.table(quality);
console.table(cost);
for (const line of mistakes["key+lsh"]!) console.log(`key+lsh ${line}`);
