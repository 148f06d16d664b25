/**
 * Crash safety: a child process applies a fixed sequence of writes to a store and is SIGKILLed at 24 seeded random
 * points (compaction runs every 40 writes, so some kills land in it). After each kill the reopened store must be
 * exactly the state after some prefix of the sequence that includes every acknowledged write — nothing
 * acknowledged lost, nothing half-applied — with a consistent index; the next child resumes from there.
 */

import assert from "node:assert/strict";
import { writerOp, writerText } from "../../tests/support/vector_writer.ts";
import { VectorStore } from "./store.ts";
import { HOUSEHOLD, termFrequencies } from "./tokenizer.ts";
import { runAndKill } from "../../tests/support/kill_writer.ts";

const WRITER = new URL("../../tests/support/vector_writer.ts", import.meta.url).pathname;

function seeded(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

/** Runs the writer from `start` until `killAfter` acks were read, then SIGKILLs it; returns the last acked index. */
Deno.test("every acknowledged write survives SIGKILL at 24 random points", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-crash-" });
  const random = seeded(424242);
  const expected = new Set<number>();
  let applied = 0; // ops applied to `expected`
  const apply = (index: number) => {
    const { op, n } = writerOp(index);
    if (op === "put") expected.add(n);
    else expected.delete(n);
  };
  const recoveries: string[] = [];
  for (let round = 0; round < 24; round++) {
    const lastAcked = await runAndKill(WRITER, dir, applied, 1 + Math.floor(random() * 160));
    while (applied <= lastAcked) apply(applied++);

    const store = await VectorStore.open(dir, { onRecovery: (m) => recoveries.push(m) });
    assert.deepEqual(store.index.verify(), [], `round ${round}: inconsistent index`);
    const actual = new Set(store.index.ids().map((id) => Number(id.slice(1))));
    // Writes after the last ack we read may have reached the disk too: find the prefix that matches exactly.
    const same = () => actual.size === expected.size && [...expected].every((n) => actual.has(n));
    for (let extra = 0; !same() && extra < 100_000; extra++) apply(applied++);
    assert.ok(same(), `round ${round}: the store is not the state after any prefix including every ack (${lastAcked})`);
    for (const n of expected) {
      assert.deepEqual(store.index.get(`d${n}`)!.terms, termFrequencies(writerText(n), { lexicon: HOUSEHOLD }));
    }
    await store.close();
  }
  assert.ok(applied > 400, `only ${applied} writes in 24 rounds`);
  await Deno.remove(dir, { recursive: true });
});
