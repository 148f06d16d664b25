// What one run of the memory job costs on a store that already holds much: work that follows the run's new lines,
// not the store. Told without timing: every statement a run executes is asked for its query plan (a whole-table scan
// reads every row the store ever kept), and the index writes and compactions of the run are counted.

import { DatabaseSync, StatementSync } from "node:sqlite";
import assert from "node:assert/strict";
import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { wholeTableScans } from "../../tests/support/query_plan.ts";
import { ContextWindow } from "../context/context_window.ts";
import { VectorStore } from "../search/store.ts";
import { MemoryService } from "./memory_service.ts";

const SOURCE = "qq:group:household";
const ROOMS = ["kitchen", "garage", "study", "attic", "balcony", "bedroom"];

/** Runs `body` with every statement executed and every index write and compaction recorded. */
async function recorded(
  body: () => void | Promise<void>,
): Promise<{ sql: Set<string>; indexed: number; compactions: number }> {
  const seen = { sql: new Set<string>(), indexed: 0, compactions: 0 };
  const statement = StatementSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const methods = ["all", "get", "run", "iterate"] as const;
  const originals = methods.map((name) => statement[name]!);
  methods.forEach((name, i) => {
    statement[name] = function (this: StatementSync, ...args: unknown[]) {
      seen.sql.add(this.sourceSQL);
      return originals[i]!.apply(this, args);
    };
  });
  const { putMany, compact } = VectorStore.prototype;
  VectorStore.prototype.putMany = function (this: VectorStore, docs) {
    seen.indexed += docs.length;
    return putMany.call(this, docs);
  };
  VectorStore.prototype.compact = function (this: VectorStore) {
    seen.compactions++;
    return compact.call(this);
  };
  try {
    await body();
  } finally {
    methods.forEach((name, i) => (statement[name] = originals[i]!));
    Object.assign(VectorStore.prototype, { putMany, compact });
  }
  return seen;
}

Deno.test("a memory job run on a store that holds much reads through indexes only, and re-indexes only what it learnt", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 10, 1, 7) });
  const memory = new MemoryService({ dir, clock, logger: getLogger(["test"]), jobEveryMs: 1_800_000 });
  await memory.start();
  const context = new ContextWindow({ maxEntries: 4, entries: memory.restored, onEvict: (e) => memory.archive(e) });
  memory.keep(context);
  const [job] = memory.jobs();
  const signal = new AbortController().signal;
  let said = 0;
  // The way the daemon sees a turn: into layer 1 (its evictions kept as documents), then journaled.
  const say = async (text: string) => {
    const origin = { eventId: `e${++said}`, time: clock.now(), source: SOURCE, sender: "Wei" };
    context.appendTurn([
      { role: "user", content: `[via ${SOURCE}, from Wei, trust household] ${text}` },
      { role: "assistant", content: "Noted." },
    ], { ...origin, trust: "household" });
    await memory.afterTurn({ ...origin, trust: "household", text, reply: "Noted." });
    clock.advance(60_000);
  };
  try {
    // A store that holds much: 400 things put away, each a document, an entity and a fact (the first run distils them,
    // and compacts both indexes).
    for (let n = 1; n <= 400; n++) await say(`The storage box ${n} is in the ${ROOMS[n % ROOMS.length]}.`);
    await job!.run(signal);
    const before = memory.status() as { entities: number; documents: number; distilled: number };
    assert.ok(before.entities >= 400 && before.documents >= 390, JSON.stringify(before));

    // Half an hour later: three new lines, and a run of the job.
    for (const n of [401, 402, 403]) await say(`The storage box ${n} is in the attic.`);
    clock.advance(1_800_000);
    const run = await recorded(() => job!.run(signal));

    const after = memory.status() as { entities: number; distilled: number };
    assert.equal(after.distilled - before.distilled, 6, "the run distilled the three new exchanges");
    assert.equal(after.entities - before.entities, 3);
    const db = new DatabaseSync(join(dir, "memory.db"), { readOnly: true });
    try {
      const scans = [...run.sql].filter((sql) => !/^\s*PRAGMA/i.test(sql)).flatMap((sql) => wholeTableScans(db, sql));
      assert.deepEqual(scans, [], "no statement of a job run reads a whole table of the store");
    } finally {
      db.close();
    }
    assert.equal(run.indexed, 3, "only the entities the new lines named are indexed again");
    assert.equal(run.compactions, 0, "no compaction for three new entities in 400 (REINDEX_SHARE)");
    // And what the run is for still holds: the new thing is recalled and named in the system message's index.
    assert.match((await memory.recall("where is the storage box 403", 3))[0]!.text, /storage box 403/);
    assert.match(memory.system("owner")!.body, /storage box \d+ \(thing\)/);
  } finally {
    await memory.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
