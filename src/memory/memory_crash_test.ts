/**
 * Crash safety of the memory: a child process observes a fixed sequence of utterances and runs the memory jobs, and is
 * SIGKILLed at 12 seeded random points (some land inside a job). After each kill the reopened memory must hold every
 * acknowledged utterance, in order, and the graph must match the distiller's cursor exactly: every fact from the
 * distilled prefix present, none from beyond it — a batch is recorded whole or not at all. The next child resumes.
 */

import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { memoryWriterText } from "../../tests/support/memory_writer.ts";
import { systemClock } from "../clock.ts";
import { openMemory } from "./memory.ts";
import { runAndKill } from "../../tests/support/kill_writer.ts";

const WRITER = new URL("../../tests/support/memory_writer.ts", import.meta.url).pathname;

Deno.test("kill -9 during observing and memory jobs loses nothing acknowledged and never half-records a batch", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-memory-crash-" });
  let seed = 777;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  let next = 0;
  for (let round = 0; round < 12; round++) {
    const lastAcked = await runAndKill(WRITER, dir, next, 10 + Math.floor(random() * 60));
    const memory = await openMemory({ dir, clock: systemClock, logger: getLogger(["test"]) });
    try {
      const status = memory.status() as { candidates: number; distilled: number };
      const all = await memory.candidates();
      assert.ok(all.length >= lastAcked + 1, `round ${round}: ${all.length} entries, acked up to ${lastAcked}`);
      assert.deepEqual(all.map((entry) => entry.eventId), all.map((_, n) => `e${n}`), "in order, no gap, no duplicate");
      assert.equal(status.candidates, all.length);
      assert.ok(status.distilled <= all.length);
      for (let n = 0; n < all.length; n += 3) {
        const facts = memory.graph().facts(`thing${n}`);
        if (n < status.distilled) {
          assert.deepEqual(
            facts.map((f) => [f.object, f.provenance]),
            [[`in room${n % 5}`, [`e${n}`]]],
            `round ${round}: fact of e${n}`,
          );
        } else {
          assert.deepEqual(
            facts,
            [],
            `round ${round}: e${n} is beyond the cursor (${status.distilled}) but has a fact`,
          );
        }
      }
      assert.equal(all[0]!.text, memoryWriterText(0));
      next = all.length;
    } finally {
      await memory.close();
    }
  }
  assert.ok(next > 100, `the writers got through ${next} utterances`);
  await Deno.remove(dir, { recursive: true });
});
