/**
 * What "acknowledged means durable" (issue 38) costs: schedule create and memory correction, each with SQLite's
 * `synchronous = NORMAL` (homed before issue 38: the commit is not fsync'd) and with the durable path homed takes now
 * (FULL: the WAL fsync'd before the call returns), in the same run, on files on the repository's disk (not /tmp, which
 * may be a RAM disk elsewhere).
 *
 * 1. Schedule create: `ScheduleStore.insert` on a store opened `derived` (NORMAL) vs `acknowledged` (FULL, homed's).
 * 2. Memory correction: the same rows (the old fact closed, a new one holding) written by `GraphStore.record` (a
 *    distiller write, NORMAL) vs the console's correction, `correctFact` (through `durably`, FULL).
 *
 * Anchor in the same run: one 4 KiB write + fdatasync of a plain file (what one sync costs on this disk).
 *
 * Run: deno task bench:durable (writes bench/out/durable/results.json; --record: bench/durable/results.json).
 */

import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import { openMemory } from "../../src/memory/memory.ts";
import { correctFact } from "../../src/memory/memory_inspection.ts";
import { ScheduleStore } from "../../src/timer/schedule_store.ts";
import type { Durability } from "../../src/sqlite/durability.ts";
import { reminder } from "../../tests/support/durable_writer.ts";
import { environment, percentile, writeResults } from "../support/report.ts";

const RUNS = 400;
const WARMUP = 20;
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** p50 and p99 of `times` in ms. */
function summary(times: number[]): { p50_ms: number; p99_ms: number; n: number } {
  return { p50_ms: round(percentile(times, 50)), p99_ms: round(percentile(times, 99)), n: times.length };
}

/** Times `RUNS` calls of `step` (after `WARMUP` untimed ones). */
async function timed(step: (n: number) => unknown): Promise<number[]> {
  const times: number[] = [];
  for (let n = 0; n < WARMUP + RUNS; n++) {
    const started = performance.now();
    await step(n);
    if (n >= WARMUP) times.push(performance.now() - started);
  }
  return times;
}

async function scheduleCreate(dir: string, durability: Durability): Promise<number[]> {
  const store = ScheduleStore.open(join(dir, `schedules-${durability}.db`), durability);
  try {
    return await timed((n) => store.insert(reminder(n, Date.now())));
  } finally {
    store.close();
  }
}

async function memoryCorrection(dir: string, path: "normal" | "durable"): Promise<number[]> {
  const memory = await openMemory({
    dir: join(dir, `memory-${path}`),
    clock: systemClock,
    logger: getLogger(["bench"]),
  });
  const draft = (object: string) => ({
    subject: { name: "spare key", type: "thing" },
    predicate: "is in",
    object,
    time: Date.now(),
    provenance: ["e-bench"],
    single: true,
  });
  memory.graph().record(draft("the hall drawer"));
  try {
    return await timed(async (n) => {
      if (path === "normal") return memory.graph().record(draft(`drawer ${n}`));
      const holding = memory.graph().facts("spare key").find((fact) => fact.validTo === null)!;
      return await correctFact(memory, holding.id, `drawer ${n}`, "owner", Date.now());
    });
  } finally {
    await memory.close();
  }
}

async function anchor(dir: string): Promise<number[]> {
  const file = await Deno.open(join(dir, "anchor.bin"), { write: true, create: true });
  const page = new Uint8Array(4096).fill(7);
  try {
    return await timed(async () => {
      await file.write(page);
      await file.syncData();
    });
  } finally {
    file.close();
  }
}

const env = await environment();
const dir = await Deno.makeTempDir({ dir: new URL("../out/", import.meta.url).pathname, prefix: "durable-" });
try {
  const results = {
    commit: env.commit,
    deno: env.deno,
    cpu: env.cpu,
    runs: RUNS,
    schedule_create_normal: summary(await scheduleCreate(dir, "derived")),
    schedule_create_durable: summary(await scheduleCreate(dir, "acknowledged")),
    memory_correction_normal: summary(await memoryCorrection(dir, "normal")),
    memory_correction_durable: summary(await memoryCorrection(dir, "durable")),
    anchor_write_fdatasync_4k: summary(await anchor(dir)),
  };
  await writeResults(new URL("./results.json", import.meta.url), results);
  console.log(`homed durable acknowledgements (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
  console.table({
    "schedule create, NORMAL (before)": results.schedule_create_normal,
    "schedule create, FULL (homed now)": results.schedule_create_durable,
    "memory correction, NORMAL (record)": results.memory_correction_normal,
    "memory correction, durable (correctFact)": results.memory_correction_durable,
    "anchor: 4 KiB write + fdatasync": results.anchor_write_fdatasync_4k,
  });
} finally {
  await Deno.remove(dir, { recursive: true });
}
