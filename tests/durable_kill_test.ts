/**
 * Issue 38, "acknowledged means durable", under kill -9: writer children (`support/durable_writer.ts`) create and
 * cancel schedules and correct a memory fact through the real stores and are SIGKILLed at 200+ random points (8 lanes
 * of short-lived children, each killed a random 0–150 ms after it is ready, so kills land in start-up, in commits and
 * between them). After each kill every change the child printed as done must be in the files, and
 * `PRAGMA integrity_check` must say ok on `schedules.db` and `memory.db`; the next child goes on from there.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { getLogger } from "@logtape/logtape";
import { systemClock } from "../src/clock.ts";
import { openMemory } from "../src/memory/memory.ts";
import { CORRECTED } from "./support/durable_writer.ts";
import { spawnWriter } from "./support/kill_writer.ts";

const WRITER = new URL("./support/durable_writer.ts", import.meta.url).pathname;
const LANES = 8;
const KILLS_PER_LANE = 26;

/** What a child printed as done before it was killed. */
interface Acked {
  created: number[];
  cancelled: number[];
  corrected: number[];
}

/** Runs one writer on `dir` from `start`, kills it `delayMs` after it is ready, and returns what it acknowledged. */
async function runAndKill(dir: string, start: number, delayMs: number): Promise<Acked> {
  const child = spawnWriter(WRITER, dir, start);
  const acked: Acked = { created: [], cancelled: [], corrected: [] };
  const stderr = new Response(child.stderr).text();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let buffer = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    for (let newline = buffer.indexOf("\n"); newline !== -1; newline = buffer.indexOf("\n")) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line === "ready") {
        timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* it ended by itself: the status check below says how */ }
        }, delayMs);
      }
      const match = /^(created|cancelled|corrected) (\d+)$/.exec(line);
      if (match) acked[match[1] as keyof Acked].push(Number(match[2]));
    }
  }
  clearTimeout(timer);
  const status = await child.status;
  assert.equal(status.signal, "SIGKILL", `the writer ended by itself (code ${status.code}): ${await stderr}`);
  await stderr;
  return acked;
}

/** `PRAGMA integrity_check` of the database at `path`, which must say ok. */
function assertIntact(path: string): void {
  const db = new DatabaseSync(path);
  try {
    const rows = db.prepare("PRAGMA integrity_check").all() as Array<{ integrity_check: string }>;
    assert.deepEqual(rows.map((row) => row.integrity_check), ["ok"], `${path} after a kill`);
  } finally {
    db.close();
  }
}

/** One lane: a data dir of its own, seeded with the fact to correct, then kills and checks. Returns what it saw. */
async function lane(seed: number): Promise<{ kills: number; acked: number }> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-durable-kill-" });
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const memory = await openMemory({ dir: join(dir, "memory"), clock: systemClock, logger: getLogger(["test"]) });
  memory.graph().record({
    subject: { name: CORRECTED, type: "thing" },
    predicate: "is in",
    object: "the hall drawer",
    time: Date.now(),
    provenance: ["e-seed"],
    single: true,
  });
  await memory.close();
  const created = new Set<number>();
  const cancelled = new Set<number>();
  let lastCorrected = -1;
  let totalCorrected = 0;
  let next = 0;
  try {
    for (let kill = 0; kill < KILLS_PER_LANE; kill++) {
      const acked = await runAndKill(dir, next, Math.floor(random() * 150));
      for (const n of acked.created) created.add(n);
      for (const n of acked.cancelled) cancelled.add(n);
      lastCorrected = Math.max(lastCorrected, ...acked.corrected);
      totalCorrected += acked.corrected.length;

      const schedulesPath = join(dir, "schedules.db");
      const memoryPath = join(dir, "memory", "memory.db");
      assertIntact(schedulesPath);
      assertIntact(memoryPath);
      const schedules = new DatabaseSync(schedulesPath);
      try {
        const rows = schedules.prepare("SELECT id, next_run FROM schedules").all() as Array<
          { id: string; next_run: number | null }
        >;
        const active = new Map(rows.map((row) => [Number(row.id.slice(2)), row.next_run !== null]));
        for (const n of created) assert.ok(active.has(n), `lane ${seed}, kill ${kill}: acknowledged s-${n} is gone`);
        for (const n of cancelled) {
          assert.equal(active.get(n), false, `lane ${seed}, kill ${kill}: acknowledged cancel of s-${n} is undone`);
        }
        next = Math.max(-1, ...active.keys()) + 1;
      } finally {
        schedules.close();
      }
      const graph = new DatabaseSync(memoryPath);
      try {
        const facts = graph.prepare(
          `SELECT t.object, t.valid_to FROM triples t JOIN entities e ON e.id = t.subject WHERE e.name = ?`,
        ).all(CORRECTED) as Array<{ object: string; valid_to: number | null }>;
        const holding = facts.filter((fact) => fact.valid_to === null);
        assert.equal(holding.length, 1, `lane ${seed}, kill ${kill}: one fact holds (${JSON.stringify(facts)})`);
        const holds = /^drawer (\d+)$/.exec(holding[0]!.object);
        if (lastCorrected >= 0) {
          assert.ok(
            holds && Number(holds[1]) >= lastCorrected,
            `lane ${seed}, kill ${kill}: acknowledged correction to "drawer ${lastCorrected}" is undone; ` +
              `the fact holds "${holding[0]!.object}"`,
          );
        }
      } finally {
        graph.close();
      }
    }
    return { kills: KILLS_PER_LANE, acked: created.size + cancelled.size + totalCorrected };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("kill -9 at 200+ random points: every acknowledged schedule, cancel and correction survives, databases intact", async () => {
  const started = performance.now();
  const lanes = await Promise.all(Array.from({ length: LANES }, (_, i) => lane(4242 + i)));
  const kills = lanes.reduce((sum, lane) => sum + lane.kills, 0);
  const acked = lanes.reduce((sum, lane) => sum + lane.acked, 0);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `${kills} kills in ${LANES} lanes, ${seconds} s, ${acked} acknowledged changes checked: none lost, ` +
      `integrity_check ok after every kill`,
  );
  assert.ok(kills >= 200);
});
