/**
 * A child process for the kill -9 test of issue 38 (`tests/durable_kill_test.ts`): through the real stores — the
 * timer's `ScheduleStore` (`schedules.db`) and the memory's graph (`memory.db`, the console's correction) — it creates
 * schedule `s-<n>`, cancels every other one it made, and corrects the fact "spare key is in" to `drawer <n>`, printing
 * each change (`created <n>`, `cancelled <n>`, `corrected <n>`) only once the store call returned, as homed's reply
 * would; until it is killed. It starts with `ready`.
 *
 * Usage: deno run --allow-read=DIR --allow-write=DIR tests/support/durable_writer.ts DIR START
 */

import { join } from "node:path";
import { getLogger } from "@logtape/logtape";
import { systemClock } from "../../src/clock.ts";
import { openMemory } from "../../src/memory/memory.ts";
import { correctFact } from "../../src/memory/memory_inspection.ts";
import { type Schedule, ScheduleStore } from "../../src/timer/schedule_store.ts";

/** The subject whose fact the writer corrects. */
export const CORRECTED = "spare key";

/**
 * The one-shot reminder `s-<n>` the writer creates (also what `bench/durable` times): made by the owner over HTTP at
 * `now`, due a day later.
 *
 * @example
 * ```ts
 * import { ScheduleStore } from "../../src/timer/schedule_store.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const store = ScheduleStore.open(`${dir}/schedules.db`);
 * store.insert(reminder(0, Date.now()));
 * store.close();
 * ```
 */
export function reminder(n: number, now: number): Schedule {
  return {
    id: `s-${n}`,
    text: `reminder ${n}`,
    kind: "at",
    cron: null,
    timezone: "Asia/Shanghai",
    channel: "http",
    creator: "owner",
    trust: "owner",
    source: "http",
    created: now,
    nextRun: now + 86_400_000,
    lastRun: null,
    runs: 0,
  };
}

if (import.meta.main) {
  const [dir, start] = [Deno.args[0]!, Number(Deno.args[1])];
  const schedules = ScheduleStore.open(join(dir, "schedules.db"));
  const memory = await openMemory({ dir: join(dir, "memory"), clock: systemClock, logger: getLogger(["writer"]) });
  const out = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
  out("ready");
  for (let n = start;; n++) {
    schedules.insert(reminder(n, systemClock.now()));
    out(`created ${n}`);
    if (n % 2 === 1 && schedules.cancel(`s-${n - 1}`)) out(`cancelled ${n - 1}`);
    const holding = memory.graph().facts(CORRECTED).find((fact) => fact.validTo === null);
    if (!holding) throw new Error(`no holding fact about "${CORRECTED}" in ${dir}: the test seeds one`);
    await correctFact(memory, holding.id, `drawer ${n}`, "owner", systemClock.now());
    out(`corrected ${n}`);
  }
}
