import assert from "node:assert/strict";
import { StatementSync } from "node:sqlite";
import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { openMemory } from "./memory.ts";

Deno.test("recall reads the rows of only the documents it can show: 30 when the question names a speaker, k when not", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-recall-rows-" });
  const clock = new FakeClock({ start: Date.UTC(2026, 8, 1) });
  const memory = await openMemory({ dir, clock, logger: getLogger(["test"]) });
  for (let i = 0; i < 120; i++) {
    const thing = i < 60 ? "umbrella" : "passport";
    memory.keepDocument({
      lines: [{ speaker: i % 2 ? "Wei" : "Lin", text: `The ${thing} ${i} is in the hall cupboard` }],
      time: clock.now() + i,
      provenance: [`e${i}`],
    });
  }
  const all = StatementSync.prototype.all;
  const rowsRead: number[] = [];
  StatementSync.prototype.all = function (this: StatementSync, ...args: unknown[]) {
    const rows = (all as (...args: unknown[]) => ReturnType<StatementSync["all"]>).apply(this, args);
    if (/FROM documents WHERE id IN/.test(this.sourceSQL)) rowsRead.push(rows.length);
    return rows;
  } as StatementSync["all"];
  try {
    // Two sets of documents: no row the first recall reads is one the second finds among those read lately.
    const plain = await memory.recall("Where is the passport?", { k: 5 });
    assert.deepEqual(rowsRead, [5]);
    const named = await memory.recall("Where did Wei put the umbrella?", { k: 5 });
    assert.deepEqual(rowsRead.slice(1), [30]);
    assert.ok(plain.every((item) => item.text.includes("passport")));
    assert.ok(named.every((item) => item.text.includes("Wei")), "Wei's own lines preferred");
  } finally {
    StatementSync.prototype.all = all;
  }
  await memory.close();
  await Deno.remove(dir, { recursive: true });
});
