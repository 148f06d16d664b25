/**
 * `deno task bench:memory-scale` (issue 25): a year of a household. 365 simulated days, ≈ 100k utterances (English
 * and Chinese: the routine phrases, speakers, rooms and planted facts of `make_household_log.ts`, plus things put
 * away — "The photo album 812 is on the top shelf in the study.", "相册813号放在书房的柜子里" — that make ≈ 50k graph
 * entities), facts that change (a thing moves, the router password is changed, a preference or a nickname changes)
 * and names said differently (a capital, a 的, two letters swapped), replayed on a fake clock through the daemon's
 * memory path: `MemoryService` with its context window (30 entries / 48k tokens, the config defaults) whose
 * evictions become layer-2 documents, the after-turn hook journaling each exchange, and the memory job (the
 * rule-based distiller — no LLM — whose graph writes do the synonym merge, then the graph index and the compaction of
 * both indexes) run on the fake clock every `memory.distill_interval` (30 min). The prompt's reference block is not
 * built per replayed turn (it only reads); it is timed at each checkpoint, and the real daemon builds it in every
 * turn of the last part.
 *
 * Job cadence. A run of the job reads the journal from its cursor (from the journal's mark before it) and compacts an
 * index only once its log holds a record for every 16 documents, but replaying all 17,520 runs of the year still
 * takes long. So by default the daemon's 30-minute cadence is replayed in a window at the end of each
 * 10k-document stretch — one catch-up run (it distils the stretch, reported apart), then {@link WINDOW_RUNS} runs 30
 * simulated minutes apart while the household goes on talking — and the job is deferred in between.
 * `--full-cadence` runs every one of the 17,520 (hours).
 *
 * At each 10k documents: the data dir's size on disk (memory.db, the two index folders, the journal), the resident
 * size of each index (its folder copied and opened alone in this process: V8 heap plus typed arrays, after garbage
 * collection — the engine itself does not report one) and of the graph's synonym index (a GraphStore opened alone
 * on a copy of memory.db), this process's heap and RSS, the job's time per run and its parts (journal re-read,
 * index compaction, synonym merge: timed by wrapping `TextMemory.from`, `VectorStore.reindex` and
 * `SynonymIndex.add`/`probe` from here, src/ untouched), recall latency (k = 5, the 50 questions asked twice: p99 of
 * 100 is the second slowest) and the reference block's. Then how each grows per 10k documents (least squares over
 * the checkpoints).
 *
 * Then the daemon's own figures: a real homed (a child process with its computed flags) started on a copy of the
 * year's data dir as the replay's clean stop left it (a restart), on a copy marked as a crash leaves it (memory not
 * closed cleanly: opening then checks both indexes against memory.db), and the floor — the same homed on an empty data
 * dir, in the same run — each case three times, every figure the median of the three. The client is
 * bench/memory/daemon_turns.ts in a fresh Deno of its own (single-threaded; the fake LLM from tests/support in its
 * Worker, answering at once): time from spawn to the first 200 of /healthz, until its log says memory is open, idle RSS
 * (2 s after that, `ps`), and the turn overhead of 1,000 `POST /api/chat` (after 50 warm-up): request time minus the
 * fake LLM server's own time for the turn's requests. Targets: idle RSS ≤ floor + 60 MB, turn overhead p99 ≤ 10 ms.
 *
 * Reads (issue 39): recall p50/p99 on the empty store (before the replay, the same 50 questions) against the year's
 * last checkpoint — target: the year's p99 ≤ the empty store's + 1 ms — and `TextMemory.lookup` of 5 event ids drawn
 * across the year, p50/p99 of 200 — target: p99 ≤ 5 ms. `--reads-only` stops after these (no daemon, nothing recorded).
 *
 * Run: deno task bench:memory-scale (writes bench/out/memory_scale/scale.json and scale.svg; --record:
 * bench/memory/scale.json and docs/memory-scale.svg; --keep-data keeps the year's data dir in /tmp and prints where;
 * --daemon-on=<that dir> measures only the daemon, on copies of it, against the floor).
 *
 * @module
 */

import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { ContextWindow } from "../../src/context/context_window.ts";
import { DAEMON_V8_FLAGS } from "../../src/rights/command_flags.ts";
import { parseConfig } from "../../src/config/load.ts";
import { openMemoryDb, writeMeta } from "../../src/memory/database.ts";
import { GraphStore } from "../../src/memory/graph/graph_store.ts";
import { SynonymIndex } from "../../src/memory/graph/synonyms.ts";
import { MemoryService } from "../../src/memory/memory_service.ts";
import { TextMemory } from "../../src/memory/text/text_memory.ts";
import { VectorStore } from "../../src/search/store.ts";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { childEnv, REPO } from "../../tests/support/homed_process.ts";
import { environment, percentile, RECORD, writeResults } from "../support/report.ts";
import { seededRandom } from "../support/seeded_random.ts";
import { type DaemonFigures, measureDaemonApart } from "./daemon_turns.ts";
import { EN, FILLER_EN, FILLER_ZH, PLANTS, ROOMS, ROOMS_ZH, ZH } from "./make_household_log.ts";

const DAYS = 365;
/** Utterances in the year (one turn each, so about as many documents: the last 30 context entries stay in layer 1). */
const UTTERANCES = 100_500;
const START = Date.UTC(2026, 8, 1); // 2026-09-01, 00:00 UTC, as the 60-day log
const STEP = 10_000;
const CHECKPOINTS = 10;
/** Runs of the job at the daemon's cadence in each stretch's window (6 simulated hours). */
const WINDOW_RUNS = 12;
const FULL_CADENCE = Deno.args.includes("--full-cadence");
/** Keeps the year's data dir (its path is printed), for looking into it afterwards. */
const KEEP_DATA = Deno.args.includes("--keep-data");
/**
 * `--reads-only`: the replay and the reads (recall on the empty store and on the year, the journal's lookup) only, no
 * daemon and nothing recorded — the quick before/after of issue 39.3.
 */
const READS_ONLY = Deno.args.includes("--reads-only");
/** `--daemon-on=<data dir>`: only the daemon's figures, on a copy of a year kept by `--keep-data` (nothing recorded). */
const DAEMON_ON = Deno.args.find((arg) => arg.startsWith("--daemon-on="))?.slice("--daemon-on=".length);
const K = 5;
const WARM_UP_TURNS = 50;
/** Turns timed: with 1,000 the p99 is the 10th slowest, not the 2nd of 200 (one hiccup of the VM). */
const TURNS = 1_000;
/** Runs of each daemon case: every figure is the median of these (one process's tail differs from the next's). */
const DAEMON_RUNS = 3;
const SOURCE = "qq:group:household";
const HOUR = 3_600_000;

const { memory: MEMORY } = parseConfig({
  text: "",
  location: { path: undefined, origin: "embedded defaults" },
  readEnv: () => undefined,
  cwd: "/tmp",
}).config;
const JOB_EVERY_MS = MEMORY.distill_interval;

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
/** Collects garbage, with event-loop turns between (typed-array backing stores are freed by finalizers). */
async function collect(): Promise<Deno.MemoryUsage> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Deno.memoryUsage();
}
const MB = (bytes: number) => Math.round(bytes / 1e5) / 10;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------------------------------------------------------
// The year.

const random = seededRandom(20270901);
const ITEMS_EN = [
  "storage box",
  "photo album",
  "toolbox",
  "spare charger",
  "camping lantern",
  "winter duvet",
  "extension cable",
  "first aid kit",
  "sewing kit",
  "board game",
  "tennis racket",
  "picnic basket",
  "label maker",
  "spare bulb",
  "passport holder",
  "warranty folder",
  "flower vase",
  "drill set",
  "paint tin",
  "thermos flask",
];
const ITEMS_ZH = [
  "收纳盒",
  "相册",
  "工具箱",
  "充电器",
  "手电筒",
  "被子",
  "插线板",
  "药箱",
  "针线盒",
  "棋盘",
  "雨伞",
  "保温杯",
  "文件袋",
  "花瓶",
  "电钻",
  "油漆桶",
  "茶叶罐",
  "旧手机",
  "钥匙扣",
  "台灯",
];
const PLACES_EN = [...ROOMS, "garage", "balcony", "storage room", "attic"].flatMap((room) =>
  [
    "in the {r}",
    "on the top shelf in the {r}",
    "under the bed in the {r}",
    "in the cupboard in the {r}",
    "next to the door in the {r}",
  ].map((place) => place.replace("{r}", room))
);
const PLACES_ZH = [...ROOMS_ZH, "车库", "阳台", "储藏室", "阁楼"].flatMap((room) =>
  ["{r}", "{r}的柜子里", "{r}的抽屉里", "{r}的架子上", "{r}门后面"].map((place) => place.replace("{r}", room))
);
const LIKES_EN = ["green tea", "dumplings", "jazz", "mystery novels", "spicy noodles", "black coffee", "hiking"];
const LIKES_ZH = ["饺子", "火锅", "红烧肉", "西瓜", "包子", "面条", "绿茶"];
const NICKNAMES = ["Tommy", "Thomas", "Tom-Tom", "Captain"];
const LEAD_EN = ["", "", "Tidying up today. ", "For the record. ", "Spring cleaning. "];
const LEAD_ZH = ["", "", "收拾了一下。", "记一下。"];

/** Thing `i`'s language and name: a pure function of `i` (2 in 5 are named in Chinese). */
const isZh = (i: number) => i % 5 < 2;
const thingName = (i: number) =>
  isZh(i) ? `${ITEMS_ZH[i % ITEMS_ZH.length]}${i + 1}号` : `${ITEMS_EN[i % ITEMS_EN.length]} ${i + 1}`;
/** The same thing said differently: capitalised, with a 的, or two neighbouring letters swapped. */
function variantName(i: number): string {
  if (isZh(i)) return `${ITEMS_ZH[i % ITEMS_ZH.length]}的${i + 1}号`;
  const item = ITEMS_EN[i % ITEMS_EN.length]!;
  if (random.next() < 0.5) return thingName(i).replace(/\b\p{L}/gu, (c) => c.toUpperCase());
  const at = random.int(1, item.indexOf(" ") > 2 ? item.indexOf(" ") - 2 : item.length - 2);
  return `${item.slice(0, at)}${item[at + 1]}${item[at]}${item.slice(at + 2)} ${i + 1}`;
}

interface Utterance {
  id: string;
  time: number;
  speaker: string;
  text: string;
  reply: string;
  zh: boolean;
}

/** The 38 planted facts of the 60-day log, said once in the year; the six that change are said again later. */
const plantDay = PLANTS.map(() => random.int(0, 299));
const plantUpdateDay = PLANTS.map((plant, i) => plant.update ? random.int(plantDay[i]! + 20, DAYS - 1) : -1);
const hasHan = (text: string) => /\p{Script=Han}/u.test(text);

/** Statistics of the year as generated. */
const made = { things: 0, moves: 0, variants: 0, preferences: 0, plants: 0, routine: 0 };

/** The year's utterances in time order, generated as the replay goes (seeded: the same every run). */
function* year(): Generator<Utterance> {
  const placeOf = new Uint8Array(UTTERANCES);
  for (let day = 0; day < DAYS; day++) {
    const count = Math.floor(((day + 1) * UTTERANCES) / DAYS) - Math.floor((day * UTTERANCES) / DAYS);
    // Waking hours, 07:00–23:00.
    const times = Array.from({ length: count }, () => START + day * 86_400_000 + 7 * HOUR + random.int(0, 16 * HOUR))
      .sort((a, b) => a - b);
    const plantsToday = PLANTS.flatMap((plant, i) =>
      plantDay[i] === day
        ? [{ plant, said: plant.said }]
        : plantUpdateDay[i] === day
        ? [{ plant, said: plant.update!.said }]
        : []
    );
    for (let n = 0; n < count; n++) {
      const id = `y${String(day + 1).padStart(3, "0")}-${n + 1}`;
      const planted = n < plantsToday.length ? plantsToday[n] : undefined;
      let speaker: string, text: string, zh: boolean;
      const r = random.next();
      if (planted) {
        made.plants++;
        speaker = planted.plant.speaker;
        text = planted.said;
        zh = hasHan(text);
      } else if (r < 0.48 || made.things === 0) {
        const i = made.things++;
        zh = isZh(i);
        placeOf[i] = random.int(0, (zh ? PLACES_ZH : PLACES_EN).length - 1);
        speaker = random.pick(zh ? ZH : EN);
        text = zh
          ? `${random.pick(LEAD_ZH)}${thingName(i)}放在${PLACES_ZH[placeOf[i]!]}`
          : `${random.pick(LEAD_EN)}The ${thingName(i)} is ${PLACES_EN[placeOf[i]!]}.`;
      } else if (r < 0.54) {
        made.moves++;
        const i = random.int(0, made.things - 1);
        zh = isZh(i);
        placeOf[i] = random.int(0, (zh ? PLACES_ZH : PLACES_EN).length - 1);
        speaker = random.pick(zh ? ZH : EN);
        text = zh
          ? `${thingName(i)}现在放在${PLACES_ZH[placeOf[i]!]}`
          : `The ${thingName(i)} is now ${PLACES_EN[placeOf[i]!]}.`;
      } else if (r < 0.56) {
        made.variants++;
        const i = random.int(0, made.things - 1);
        zh = isZh(i);
        speaker = random.pick(zh ? ZH : EN);
        text = zh
          ? `${variantName(i)}还在${PLACES_ZH[placeOf[i]!]}`
          : `The ${variantName(i)} is still ${PLACES_EN[placeOf[i]!]}.`;
      } else if (r < 0.57) {
        made.preferences++;
        zh = random.next() < 0.35;
        speaker = zh ? random.pick(ZH) : random.pick(EN);
        text = zh
          ? `我最喜欢吃${random.pick(LIKES_ZH)}`
          : speaker === "Tom" && random.next() < 0.5
          ? `Call me ${random.pick(NICKNAMES)}.`
          : `I really like ${random.pick(LIKES_EN)}.`;
      } else {
        made.routine++;
        zh = random.next() < 0.35;
        speaker = random.pick(zh ? ZH : EN);
        text = (zh ? random.pick(FILLER_ZH) : random.pick(FILLER_EN))();
      }
      yield { id, time: times[n]!, speaker, text, reply: zh ? "好的，记下了。" : "Noted.", zh };
    }
  }
}

/** 50 questions: the 38 of the planted facts (their own wording, English and Chinese) and 12 about things put away. */
const QUESTIONS = [
  ...PLANTS.map((plant) => plant.question),
  ...[3, 420, 1_500, 4_000, 7_001, 11_002, 16_000, 21_003, 27_000, 33_004, 39_000, 45_005].map((i) =>
    isZh(i) ? `${thingName(i)}放在哪里？` : `Where is the ${thingName(i)}?`
  ),
];

// ---------------------------------------------------------------------------------------------------------------
// Instruments: time spent in the job's parts, by wrapping the classes' own methods.

const spent = { journalMs: 0, compactionMs: 0, synonymMs: 0, synonymProbes: 0, synonymMerges: 0 };
const resetSpent = () => Object.keys(spent).forEach((key) => (spent[key as keyof typeof spent] = 0));
{
  const from = TextMemory.prototype.from;
  TextMemory.prototype.from = async function (this: TextMemory, start: number) {
    const started = performance.now();
    try {
      return await from.call(this, start);
    } finally {
      spent.journalMs += performance.now() - started;
    }
  };
  const reindex = VectorStore.prototype.reindex;
  VectorStore.prototype.reindex = async function (this: VectorStore) {
    const started = performance.now();
    try {
      return await reindex.call(this);
    } finally {
      spent.compactionMs += performance.now() - started;
    }
  };
  const add = SynonymIndex.prototype.add;
  SynonymIndex.prototype.add = function (this: SynonymIndex, id: number, name: string, type: string) {
    const started = performance.now();
    add.call(this, id, name, type);
    spent.synonymMs += performance.now() - started;
  };
  const probe = SynonymIndex.prototype.probe;
  SynonymIndex.prototype.probe = function (this: SynonymIndex, name: string, type: string) {
    const started = performance.now();
    const id = probe.call(this, name, type);
    spent.synonymMs += performance.now() - started;
    spent.synonymProbes++;
    if (id !== undefined) spent.synonymMerges++;
    return id;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Files.

/** Bytes under `path` (files, recursively). */
async function bytesUnder(path: string): Promise<number> {
  const info = await Deno.stat(path).catch(() => undefined);
  if (!info) return 0;
  if (info.isFile) return info.size;
  let total = 0;
  for await (const entry of Deno.readDir(path)) total += await bytesUnder(join(path, entry.name));
  return total;
}

async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copyDir(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) await Deno.copyFile(join(from, entry.name), join(to, entry.name));
  }
}

/** The size of an index folder's newest snapshot: what every run of the job writes anew. */
async function newestSnapshot(dir: string): Promise<number> {
  let best = -1, size = 0;
  for await (const entry of Deno.readDir(dir)) {
    const generation = /^snap-(\d+)\.bin$/.exec(entry.name)?.[1];
    if (generation !== undefined && Number(generation) > best) {
      best = Number(generation);
      size = (await Deno.stat(join(dir, entry.name))).size;
    }
  }
  return size;
}

/** The resident size of the index in `dir`: its folder copied and opened alone, heap and typed arrays after GC. */
async function residentIndex(dir: string): Promise<number> {
  const copy = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-scale-index-" });
  try {
    await copyDir(dir, copy);
    const before = await collect();
    const store = await VectorStore.open(copy);
    const after = await collect();
    const bytes = after.heapUsed + after.external - before.heapUsed - before.external;
    await store.close();
    return bytes;
  } finally {
    await Deno.remove(copy, { recursive: true });
  }
}

/**
 * The resident size of the graph's synonym index (every entity name and alias, with the LSH buckets of the long Latin
 * ones): `memory.db` copied, a GraphStore opened over it alone (its constructor loads the index), heap after GC; and
 * the time that load takes (the whole index rebuilt: at start, and after each forget).
 */
async function residentSynonyms(memoryDb: string): Promise<{ bytes: number; rebuildMs: number }> {
  const copy = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-scale-graph-" });
  try {
    for (const suffix of ["", "-wal"]) {
      await Deno.copyFile(`${memoryDb}${suffix}`, join(copy, `memory.db${suffix}`)).catch(() => {});
    }
    const db = openMemoryDb(join(copy, "memory.db"));
    const before = await collect();
    const started = performance.now();
    let graph: GraphStore | undefined = new GraphStore(db);
    const rebuildMs = performance.now() - started;
    const after = await collect();
    graph.counts();
    graph = undefined;
    db.close();
    return { bytes: after.heapUsed + after.external - before.heapUsed - before.external, rebuildMs };
  } finally {
    await Deno.remove(copy, { recursive: true });
  }
}

if (DAEMON_ON) {
  const figures = {
    "floor: homed, empty data dir": await daemonRuns(undefined),
    [`homed on ${DAEMON_ON}`]: await daemonRuns(DAEMON_ON),
  };
  console.table(figures);
  Deno.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// The replay.

interface Checkpoint {
  documents: number;
  entities: number;
  facts: number;
  utterances: number;
  simulated_day: number;
  disk_mb: number;
  memory_db_mb: number;
  documents_index_mb: number;
  graph_index_mb: number;
  journal_mb: number;
  snapshots_written_per_run_mb: number;
  resident_documents_index_mb: number;
  resident_graph_index_mb: number;
  resident_synonym_index_mb: number;
  synonym_index_rebuild_ms: number;
  heap_mb: number;
  external_mb: number;
  rss_mb: number;
  job_runs: number;
  job_p50_ms: number;
  job_max_ms: number;
  journal_reread_p50_ms: number;
  compaction_p50_ms: number;
  synonym_p50_ms: number;
  synonym_max_ms: number;
  synonym_probes_per_run: number;
  catch_up: { ms: number; journal_ms: number; compaction_ms: number; synonym_ms: number; synonym_merges: number };
  recall_p50_ms: number;
  recall_p99_ms: number;
  reference_p50_ms: number;
  reference_p99_ms: number;
  replay_s: number;
}

const replayStarted = performance.now();
const dataDir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-scale-year-" });
const memoryDir = join(dataDir, "memory");
const clock = new FakeClock({ start: START });
const memory = new MemoryService({
  dir: memoryDir,
  clock,
  logger: getLogger(["bench", "memory-scale"]),
  jobEveryMs: JOB_EVERY_MS,
  coldAfterMs: MEMORY.cold_after,
});
await memory.start();
let documentsKept = 0;
const context = new ContextWindow({
  maxEntries: MEMORY.context_size,
  maxTokens: MEMORY.context_tokens,
  entries: memory.restored,
  onEvict: (entries) => {
    documentsKept += new Set(entries.map((entry) => entry.eventId)).size;
    memory.archive(entries);
  },
});
memory.keep(context);
const [job] = memory.jobs();
// Recall on the empty store: the floor a year's recall is held to (issue 39: p99 ≤ this + 1 ms).
const recallEmpty = await latencies((question) => memory.recall(question, K));
/** Every utterance's event id, for the lookups timed on the year. */
const eventIds: string[] = [];
const signal = new AbortController().signal;

interface Run {
  ms: number;
  journalMs: number;
  compactionMs: number;
  synonymMs: number;
  synonymProbes: number;
  synonymMerges: number;
}
async function run(): Promise<Run> {
  resetSpent();
  const started = performance.now();
  await job!.run(signal);
  const ms = performance.now() - started;
  await memory.heartbeat();
  return { ms, ...spent };
}

async function latencies(call: (question: string) => Promise<unknown>): Promise<number[]> {
  for (const question of QUESTIONS.slice(0, 5)) await call(question); // warm-up
  const samples: number[] = [];
  for (let round = 0; round < 2; round++) {
    for (const question of QUESTIONS) {
      const started = performance.now();
      await call(question);
      samples.push(performance.now() - started);
    }
  }
  return samples;
}

const checkpoints: Checkpoint[] = [];
let utterances = 0;
async function checkpoint(runs: Run[], catchUp: Run | undefined): Promise<void> {
  await memory.heartbeat();
  const status = memory.status() as Record<string, number>;
  const usage = await collect();
  const recall = await latencies((question) => memory.recall(question, K));
  const reference = await latencies((question) =>
    memory.reference({ text: question, source: SOURCE, sender: "Wei", trust: "owner", time: clock.now() }, [])
  );
  const [db, wal, shm] = await Promise.all(
    ["memory.db", "memory.db-wal", "memory.db-shm"].map((name) => bytesUnder(join(memoryDir, name))),
  );
  const at = (key: keyof Run) => runs.map((r) => r[key]);
  const synonyms = await residentSynonyms(join(memoryDir, "memory.db"));
  const row: Checkpoint = {
    documents: status.documents ?? 0,
    entities: status.entities ?? 0,
    facts: status.facts ?? 0,
    utterances,
    simulated_day: Math.floor((clock.now() - START) / 86_400_000) + 1,
    disk_mb: MB(await bytesUnder(memoryDir)),
    memory_db_mb: MB(db! + wal! + shm!),
    documents_index_mb: MB(await bytesUnder(join(memoryDir, "documents-index"))),
    graph_index_mb: MB(await bytesUnder(join(memoryDir, "graph-index"))),
    journal_mb: MB(await bytesUnder(join(memoryDir, "candidates.jsonl"))),
    snapshots_written_per_run_mb: MB(
      (await newestSnapshot(join(memoryDir, "documents-index"))) +
        (await newestSnapshot(join(memoryDir, "graph-index"))),
    ),
    resident_documents_index_mb: MB(await residentIndex(join(memoryDir, "documents-index"))),
    resident_graph_index_mb: MB(await residentIndex(join(memoryDir, "graph-index"))),
    resident_synonym_index_mb: MB(synonyms.bytes),
    synonym_index_rebuild_ms: round(synonyms.rebuildMs, 1),
    heap_mb: MB(usage.heapUsed),
    external_mb: MB(usage.external),
    rss_mb: MB(usage.rss),
    job_runs: runs.length,
    job_p50_ms: round(percentile(at("ms"), 50), 1),
    job_max_ms: round(Math.max(...at("ms")), 1),
    journal_reread_p50_ms: round(percentile(at("journalMs"), 50), 1),
    compaction_p50_ms: round(percentile(at("compactionMs"), 50), 1),
    synonym_p50_ms: round(percentile(at("synonymMs"), 50), 3),
    synonym_max_ms: round(Math.max(...at("synonymMs")), 3),
    synonym_probes_per_run: round(at("synonymProbes").reduce((sum, x) => sum + x, 0) / runs.length, 1),
    catch_up: catchUp
      ? {
        ms: round(catchUp.ms, 1),
        journal_ms: round(catchUp.journalMs, 1),
        compaction_ms: round(catchUp.compactionMs, 1),
        synonym_ms: round(catchUp.synonymMs, 1),
        synonym_merges: catchUp.synonymMerges,
      }
      : { ms: 0, journal_ms: 0, compaction_ms: 0, synonym_ms: 0, synonym_merges: 0 },
    recall_p50_ms: round(percentile(recall, 50)),
    recall_p99_ms: round(percentile(recall, 99)),
    reference_p50_ms: round(percentile(reference, 50)),
    reference_p99_ms: round(percentile(reference, 99)),
    replay_s: Math.round((performance.now() - replayStarted) / 1000),
  };
  checkpoints.push(row);
  console.log(
    `${row.documents} documents (day ${row.simulated_day}): disk ${row.disk_mb} MB, heap ${row.heap_mb} MB, ` +
      `rss ${row.rss_mb} MB, job p50 ${row.job_p50_ms} ms, recall p99 ${row.recall_p99_ms} ms (${row.replay_s} s)`,
  );
}

/** Job runs of the current stretch; `catchUp` is its first, deferred run; `left` runs remain in its window. */
let stretch: { runs: Run[]; catchUp: Run | undefined; left: number } | undefined = FULL_CADENCE
  ? { runs: [], catchUp: undefined, left: Infinity }
  : undefined;
let nextThreshold = STEP;
let nextTick = START + JOB_EVERY_MS;
let allRuns = 0;

/** The job's ticks up to `time`, run when the cadence is replayed (in a window, or always with --full-cadence). */
async function ticksUntil(time: number): Promise<void> {
  while (nextTick <= time) {
    if (!stretch) {
      // Deferred: skip to the first tick after `time`.
      nextTick += Math.ceil((time - nextTick + 1) / JOB_EVERY_MS) * JOB_EVERY_MS;
      break;
    }
    clock.advance(nextTick - clock.now());
    nextTick += JOB_EVERY_MS;
    stretch.runs.push(await run());
    allRuns++;
    if (FULL_CADENCE) {
      if (documentsKept >= nextThreshold && checkpoints.length < CHECKPOINTS) {
        await checkpoint(stretch.runs, undefined);
        nextThreshold += STEP;
        stretch.runs = [];
      }
    } else if (--stretch.left === 0) {
      await checkpoint(stretch.runs, stretch.catchUp);
      nextThreshold += STEP;
      stretch = undefined;
    }
  }
}

let heartbeatEvery = 0;
for (const utterance of year()) {
  await ticksUntil(utterance.time);
  clock.advance(Math.max(0, utterance.time - clock.now()));
  const origin = { eventId: utterance.id, time: clock.now(), source: SOURCE, sender: utterance.speaker };
  eventIds.push(utterance.id);
  context.appendTurn([
    { role: "user", content: `[via ${SOURCE}, from ${utterance.speaker}, trust household] ${utterance.text}` },
    { role: "assistant", content: utterance.reply },
  ], { ...origin, trust: "household" });
  await memory.afterTurn({ ...origin, trust: "household", text: utterance.text, reply: utterance.reply });
  utterances++;
  // The daemon's heartbeat (journal and index fsync, layer 1 saved) every 15 s; here every 200 turns.
  if (++heartbeatEvery % 200 === 0) await memory.heartbeat();
  if (!FULL_CADENCE && !stretch && documentsKept >= nextThreshold && checkpoints.length < CHECKPOINTS) {
    const catchUp = await run();
    allRuns++;
    stretch = { runs: [], catchUp, left: WINDOW_RUNS };
  }
}
// A window still open when the year ends runs to its end (with --full-cadence: one more tick for the last checkpoint).
if (FULL_CADENCE) {
  if (documentsKept >= nextThreshold && checkpoints.length < CHECKPOINTS) await ticksUntil(nextTick);
} else {
  while (stretch) await ticksUntil(nextTick);
}
const finalStatus = memory.status() as Record<string, number>;
await memory.stop();
const replaySeconds = Math.round((performance.now() - replayStarted) / 1000);
console.log(
  `replayed ${utterances} utterances in ${replaySeconds} s: ${finalStatus.documents} documents, ` +
    `${finalStatus.entities} entities, ${finalStatus.facts} facts, ${allRuns} job runs`,
);

/**
 * `TextMemory.lookup` on the year's journal, as recall's sources and the console's provenance ask it: 200 lookups of
 * 5 event ids drawn across the year (seeded), after 10 warm-up lookups; the journal opened alone, as memory left it.
 */
async function lookups(): Promise<number[]> {
  const journal = await TextMemory.open(join(memoryDir, "candidates.jsonl"), getLogger(["bench", "memory-scale"]));
  const draw = seededRandom(20270393);
  const ask = () => new Set(Array.from({ length: K }, () => draw.pick(eventIds)));
  try {
    for (let i = 0; i < 10; i++) await journal.lookup(ask());
    const samples: number[] = [];
    for (let i = 0; i < 200; i++) {
      const asked = ask();
      const started = performance.now();
      const found = await journal.lookup(asked);
      samples.push(performance.now() - started);
      if (found.size !== asked.size) throw new Error(`lookup found ${found.size} of ${asked.size} event ids`);
    }
    return samples;
  } finally {
    await journal.close();
  }
}
const lookupYear = await lookups();
const reads = {
  recall_empty_p50_ms: round(percentile(recallEmpty, 50)),
  recall_empty_p99_ms: round(percentile(recallEmpty, 99)),
  recall_year_p50_ms: checkpoints.at(-1)!.recall_p50_ms,
  recall_year_p99_ms: checkpoints.at(-1)!.recall_p99_ms,
  lookup_year_p50_ms: round(percentile(lookupYear, 50)),
  lookup_year_p99_ms: round(percentile(lookupYear, 99)),
};
const readTargets = {
  recall_p99:
    `${reads.recall_year_p99_ms} ms on the year ≤ ${reads.recall_empty_p99_ms} ms on the empty store + 1 ms: ${
      reads.recall_year_p99_ms <= reads.recall_empty_p99_ms + 1 ? "met" : "NOT met"
    }`,
  lookup_p99: `${reads.lookup_year_p99_ms} ms on the year ≤ 5 ms: ${reads.lookup_year_p99_ms <= 5 ? "met" : "NOT met"}`,
};
console.table(reads);
console.log(`targets: recall p99 ${readTargets.recall_p99}; lookup p99 ${readTargets.lookup_p99}`);
if (READS_ONLY) {
  if (KEEP_DATA) console.log(`kept the year's data dir: ${dataDir}`);
  else await Deno.remove(dataDir, { recursive: true });
  Deno.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// The daemon's own figures.

/** A case's figures: the median of {@link DAEMON_RUNS} runs, each figure on its own, and each run's p99. */
type DaemonCase = DaemonFigures & { turn_overhead_p99_runs_ms: number[] };

/**
 * The daemon's figures on fresh copies of `source` (each run on its own, as a run adds to what it opens; an empty
 * data dir without one); with `crashed`, each copy is marked as a crash leaves it.
 */
async function daemonRuns(source: string | undefined, options: { crashed?: boolean } = {}): Promise<DaemonCase> {
  const runs: DaemonFigures[] = [];
  for (let run = 0; run < DAEMON_RUNS; run++) {
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-scale-daemon-" });
    try {
      if (source) await copyDir(source, dir);
      if (options.crashed) {
        const db = openMemoryDb(join(dir, "memory", "memory.db"));
        writeMeta(db, "closed_cleanly", "0");
        db.close();
      }
      runs.push(await measureDaemonApart({ data: dir, questions: QUESTIONS, warmUp: WARM_UP_TURNS, turns: TURNS }));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
  const figures = Object.fromEntries(
    Object.keys(runs[0]!).map((key) => [key, percentile(runs.map((r) => r[key as keyof DaemonFigures]), 50)]),
  ) as unknown as DaemonFigures;
  return { ...figures, turn_overhead_p99_runs_ms: runs.map((r) => r.turn_overhead_p99_ms) };
}

/** Memory use of a fresh process (the daemon's V8 flags) that only opens the year's memory, as the daemon does. */
interface Alone {
  open_ms: number;
  heap_after_open_mb: number;
  external_after_open_mb: number;
  rss_after_open_mb: number;
  heap_after_gc_mb: number;
  external_after_gc_mb: number;
  rss_after_gc_mb: number;
}

/**
 * Opens the year's memory in a fresh Deno, alone: `service` — MemoryService started and its stores loaded, as at the
 * daemon's start; `journal` — only what the facade's open does with the journal (TextMemory.open, from its marks on,
 * then its last 256 entries); `nothing` — the same Deno with the same imports, opening nothing (the baseline). Each on
 * a copy of the folder (a process that exits without closing memory leaves it marked as not closed cleanly). Figures
 * right after, and after GC and 2 s.
 */
async function alone(original: string, what: "nothing" | "service" | "journal"): Promise<Alone> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-scale-alone-" });
  await copyDir(original, dir);
  try {
    return await aloneIn(dir, what);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function aloneIn(dir: string, what: "nothing" | "service" | "journal"): Promise<Alone> {
  const src = (path: string) => JSON.stringify(new URL(`../../src/${path}`, import.meta.url).href);
  const code = `
    import { getLogger } from "@logtape/logtape";
    import { systemClock } from ${src("clock.ts")};
    import { MemoryService } from ${src("memory/memory_service.ts")};
    import { TextMemory } from ${src("memory/text/text_memory.ts")};
    const dir = ${JSON.stringify(dir)};
    const logger = getLogger(["bench"]);
    const started = performance.now();
    let kept;
    if (${JSON.stringify(what)} === "service") {
      kept = new MemoryService({ dir, clock: systemClock, logger });
      await kept.start();
      await kept.recall("spare key", 1);
    } else if (${JSON.stringify(what)} === "journal") {
      const journal = await TextMemory.open(dir + "/candidates.jsonl", logger);
      kept = [journal, await journal.last(256)];
    }
    const ms = performance.now() - started;
    const opened = Deno.memoryUsage();
    for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((resolve) => setTimeout(resolve, 20)); }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = Deno.memoryUsage();
    globalThis.keep = kept;
    console.log(JSON.stringify({ ms, opened, after }));
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `${DAEMON_V8_FLAGS},--expose-gc`, "--no-prompt", code],
    cwd: REPO,
    env: childEnv(),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`opening memory alone failed: ${new TextDecoder().decode(out.stderr)}`);
  const { ms, opened, after } = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!) as {
    ms: number;
    opened: Deno.MemoryUsage;
    after: Deno.MemoryUsage;
  };
  return {
    open_ms: Math.round(ms),
    heap_after_open_mb: MB(opened.heapUsed),
    external_after_open_mb: MB(opened.external),
    rss_after_open_mb: MB(opened.rss),
    heap_after_gc_mb: MB(after.heapUsed),
    external_after_gc_mb: MB(after.external),
    rss_after_gc_mb: MB(after.rss),
  };
}

// The daemon on an empty data dir (the floor), on the year as the replay's clean stop left it (a restart), and as a
// crash leaves it — memory not closed cleanly, so opening checks the indexes against memory.db by their id digests.
const floor = await daemonRuns(undefined);
const withYear = await daemonRuns(dataDir);
const afterCrash = await daemonRuns(dataDir, { crashed: true });

const baselineAlone = await alone(memoryDir, "nothing");
const memoryAlone = await alone(memoryDir, "service");
const journalAlone = await alone(memoryDir, "journal");
if (KEEP_DATA) console.log(`kept the year's data dir: ${dataDir}`);
else await Deno.remove(dataDir, { recursive: true });

// ---------------------------------------------------------------------------------------------------------------
// Growth, report, plot.

/** Least-squares slope of `y` against documents, per 10k documents. */
function per10k(key: (row: Checkpoint) => number): number {
  const xs = checkpoints.map((row) => row.documents / STEP), ys = checkpoints.map(key);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length, my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const sxx = xs.reduce((sum, x) => sum + (x - mx) ** 2, 0);
  return sxx ? xs.reduce((sum, x, i) => sum + (x - mx) * (ys[i]! - my), 0) / sxx : Number.NaN;
}

const GROWTH: Record<string, [string, (row: Checkpoint) => number]> = {
  "disk (data dir)": ["MB", (row) => row.disk_mb],
  "memory.db": ["MB", (row) => row.memory_db_mb],
  "index folders (both)": ["MB", (row) => row.documents_index_mb + row.graph_index_mb],
  "journal (candidates.jsonl)": ["MB", (row) => row.journal_mb],
  "snapshots rewritten per job run": ["MB", (row) => row.snapshots_written_per_run_mb],
  "resident indexes (both)": ["MB", (row) => row.resident_documents_index_mb + row.resident_graph_index_mb],
  "  documents index": ["MB", (row) => row.resident_documents_index_mb],
  "  entity index": ["MB", (row) => row.resident_graph_index_mb],
  "resident synonym index": ["MB", (row) => row.resident_synonym_index_mb],
  "synonym index rebuild (start, forget)": ["ms", (row) => row.synonym_index_rebuild_ms],
  "bench heap": ["MB", (row) => row.heap_mb],
  "bench external (typed arrays)": ["MB", (row) => row.external_mb],
  "bench RSS": ["MB", (row) => row.rss_mb],
  "job run p50": ["ms", (row) => row.job_p50_ms],
  "  of which journal re-read": ["ms", (row) => row.journal_reread_p50_ms],
  "  of which index compaction": ["ms", (row) => row.compaction_p50_ms],
  "synonym merge per run p50": ["ms", (row) => row.synonym_p50_ms],
  "recall p50 (k=5)": ["ms", (row) => row.recall_p50_ms],
  "recall p99 (k=5)": ["ms", (row) => row.recall_p99_ms],
  "reference block p99": ["ms", (row) => row.reference_p99_ms],
  entities: ["", (row) => row.entities],
};
const growth = Object.fromEntries(
  Object.entries(GROWTH).map(([name, [unit, key]]) => [name, {
    unit,
    first: round(key(checkpoints[0]!), 3),
    last: round(key(checkpoints.at(-1)!), 3),
    per_10k_documents: round(per10k(key), 3),
  }]),
);

const last = checkpoints.at(-1)!;
const overFloor = round(withYear.idle_rss_mb - floor.idle_rss_mb, 1);
const overFloorAfterCrash = round(afterCrash.idle_rss_mb - floor.idle_rss_mb, 1);
const met = (ok: boolean) => ok ? "met" : "NOT met";
const targets = {
  idle_rss: `${withYear.idle_rss_mb} MB ≤ floor ${floor.idle_rss_mb} + 60 MB: ${met(overFloor <= 60)}`,
  idle_rss_after_crash: `${afterCrash.idle_rss_mb} MB ≤ floor ${floor.idle_rss_mb} + 60 MB: ${
    met(overFloorAfterCrash <= 60)
  }`,
  turn_overhead_p99: `${withYear.turn_overhead_p99_ms} ms ≤ 10 ms: ${met(withYear.turn_overhead_p99_ms <= 10)}`,
  turn_overhead_p99_after_crash: `${afterCrash.turn_overhead_p99_ms} ms ≤ 10 ms: ${
    met(afterCrash.turn_overhead_p99_ms <= 10)
  }`,
};

/** Disk MB and heap MB (left axis) and recall p99 ms (right axis) against documents (k), as hand-written SVG. */
function plot(rows: readonly Checkpoint[]): string {
  const W = 720, H = 420, left = 64, right = 64, top = 48, bottom = 56;
  const xMax = Math.max(10, Math.ceil(Math.round(Math.max(...rows.map((r) => r.documents / 1000))) / 10) * 10);
  const nice = (max: number) => {
    const step = 10 ** Math.floor(Math.log10(max || 1));
    return Math.ceil(max / step) * step;
  };
  const mbMax = nice(Math.max(...rows.flatMap((r) => [r.disk_mb, r.heap_mb])));
  const msMax = nice(Math.max(...rows.map((r) => r.recall_p99_ms)));
  const x = (k: number) => round(left + (k / xMax) * (W - left - right), 1);
  const yMb = (mb: number) => round(H - bottom - (mb / mbMax) * (H - top - bottom), 1);
  const yMs = (ms: number) => round(H - bottom - (ms / msMax) * (H - top - bottom), 1);
  const series = [
    { name: "disk MB (data dir)", color: "#1f77b4", y: (r: Checkpoint) => yMb(r.disk_mb), dash: "" },
    { name: "heap MB (bench process)", color: "#2ca02c", y: (r: Checkpoint) => yMb(r.heap_mb), dash: "" },
    { name: "recall p99 ms (right axis)", color: "#d62728", y: (r: Checkpoint) => yMs(r.recall_p99_ms), dash: "6 4" },
  ];
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
    `font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">homed memory over a simulated year</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const mb = (mbMax * i) / 5, ms = (msMax * i) / 5, y = yMb(mb);
    out.push(`<line x1="${left}" y1="${y}" x2="${W - right}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${left - 6}" y="${y + 4}" text-anchor="end">${round(mb, 1)}</text>`);
    out.push(`<text x="${W - right + 6}" y="${y + 4}">${round(ms, 2)}</text>`);
  }
  for (let k = 0; k <= xMax; k += 10) {
    out.push(`<line x1="${x(k)}" y1="${H - bottom}" x2="${x(k)}" y2="${H - bottom + 4}" stroke="#000"/>`);
    out.push(`<text x="${x(k)}" y="${H - bottom + 18}" text-anchor="middle">${k}</text>`);
  }
  out.push(
    `<line x1="${left}" y1="${H - bottom}" x2="${W - right}" y2="${H - bottom}" stroke="#000"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${H - bottom}" stroke="#000"/>`,
    `<line x1="${W - right}" y1="${top}" x2="${W - right}" y2="${H - bottom}" stroke="#000"/>`,
    `<text x="${(left + W - right) / 2}" y="${H - 14}" text-anchor="middle">documents (k)</text>`,
    `<text transform="translate(16 ${(top + H - bottom) / 2}) rotate(-90)" text-anchor="middle">MB</text>`,
    `<text transform="translate(${W - 14} ${(top + H - bottom) / 2}) rotate(90)" text-anchor="middle">ms</text>`,
  );
  series.forEach((line, i) => {
    const points = rows.map((r) => `${x(r.documents / 1000)},${line.y(r)}`).join(" ");
    const dash = line.dash ? ` stroke-dasharray="${line.dash}"` : "";
    out.push(`<polyline fill="none" stroke="${line.color}" stroke-width="2"${dash} points="${points}"/>`);
    for (const r of rows) {
      const cx = x(r.documents / 1000), cy = line.y(r);
      out.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${line.color}"/>`);
    }
    const ly = top + 4 + i * 16, lx = left + 12;
    out.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${line.color}" stroke-width="2"${dash}/>`,
      `<text x="${lx + 30}" y="${ly + 4}">${line.name}</text>`,
    );
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

const env = await environment();
const results = {
  ...env,
  days: DAYS,
  utterances,
  generated: made,
  questions: QUESTIONS.length,
  k: K,
  job_every_ms: JOB_EVERY_MS,
  cadence: FULL_CADENCE
    ? "every tick of memory.distill_interval, all year"
    : `memory.distill_interval replayed in a window of ${WINDOW_RUNS} runs at the end of each 10k-document stretch ` +
      "(after one catch-up run); deferred in between",
  job_runs: allRuns,
  job_runs_in_a_daemon_year: Math.round((DAYS * 86_400_000) / JOB_EVERY_MS),
  daemon_job_cpu_s_per_day_at_last_checkpoint: round((last.job_p50_ms * 86_400_000) / JOB_EVERY_MS / 1000, 1),
  replay_s: replaySeconds,
  final: {
    documents: finalStatus.documents,
    archived_documents: finalStatus.archived_documents,
    entities: finalStatus.entities,
    facts: finalStatus.facts,
    candidates: finalStatus.candidates,
  },
  checkpoints,
  growth_per_10k_documents: growth,
  daemon: {
    floor_empty_data_dir: floor,
    with_the_year: withYear,
    with_the_year_after_a_crash: afterCrash,
    idle_rss_over_floor_mb: overFloor,
    idle_rss_over_floor_after_a_crash_mb: overFloorAfterCrash,
  },
  memory_opened_alone: { nothing: baselineAlone, memory_service: memoryAlone, journal_only: journalAlone },
  reads,
  targets: { ...targets, ...readTargets },
};
const written = await writeResults(
  RECORD ? new URL("./scale.json", import.meta.url) : new URL("./memory_scale/scale.json", import.meta.url),
  results,
);
const svgPath = RECORD
  ? new URL("../../docs/memory-scale.svg", import.meta.url).pathname
  : join(written, "..", "scale.svg");
await Deno.writeTextFile(svgPath, plot(checkpoints));
// The committed plot is kept as `deno fmt` writes it (CI checks the formatting of docs/ too).
if (RECORD) await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", svgPath] }).output();
console.log(`wrote ${svgPath}`);

console.log(
  `\nmemory over a simulated year (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu}); ` +
    `${utterances} utterances, ${results.cadence}`,
);
console.table(Object.fromEntries(checkpoints.map((row, i) => [`${((i + 1) * STEP) / 1000}k`, {
  docs: row.documents,
  entities: row.entities,
  "disk MB": row.disk_mb,
  "db MB": row.memory_db_mb,
  "idx MB": round(row.documents_index_mb + row.graph_index_mb, 1),
  "resident idx MB": round(row.resident_documents_index_mb + row.resident_graph_index_mb, 1),
  "heap MB": row.heap_mb,
  "RSS MB": row.rss_mb,
  "job p50/max ms": `${row.job_p50_ms} / ${row.job_max_ms}`,
  "synonym p50/max ms": `${row.synonym_p50_ms} / ${row.synonym_max_ms}`,
  "recall p50/p99 ms": `${row.recall_p50_ms} / ${row.recall_p99_ms}`,
}])));
console.table(Object.fromEntries(
  Object.entries(growth).map(([name, g]) => [name, {
    unit: g.unit,
    "at first": g.first,
    "at last": g.last,
    "per 10k docs": g.per_10k_documents,
  }]),
));
console.table({
  "floor: homed, empty data dir": floor,
  [`homed on the year (${finalStatus.documents} documents)`]: withYear,
  "the same, after a crash (memory not closed cleanly)": afterCrash,
});
console.log(
  `targets: idle RSS ${targets.idle_rss} (+${overFloor} MB), after a crash ${targets.idle_rss_after_crash} ` +
    `(+${overFloorAfterCrash} MB); turn overhead p99 ${targets.turn_overhead_p99}, after a crash ` +
    targets.turn_overhead_p99_after_crash,
);
console.log("where the daemon's RSS goes: the year's memory opened alone in a fresh Deno (the daemon's V8 flags)");
console.table({
  "baseline: the same imports, nothing opened": baselineAlone,
  "MemoryService started, stores loaded": memoryAlone,
  "the journal's read at open, alone": journalAlone,
});
