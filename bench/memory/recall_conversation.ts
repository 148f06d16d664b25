/**
 * Recall through the memory facade on the English conversation set (issue 9): every turn is observed and kept as a
 * layer-2 document (as each message eventually leaves layer 1), on a simulated clock at the turn's time; then each
 * question goes to `recall(question, { k: 10 })` and is a hit when an item's provenance holds a gold turn id. The
 * anchor in the same run is SQLite FTS5 over the same turns (bench/retrieval/systems.ts) — the target is
 * facade recall@10 ≥ FTS5 recall@10 + 0.10. Reported on all questions and on the `test` half (the context weight was
 * chosen on `tune`).
 *
 * Run: deno task eval:memory-recall (writes bench/out/memory/recall_conversation.json; --record: committed).
 */

import { getLogger } from "@logtape/logtape";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { openMemory } from "../../src/memory/memory.ts";
import { loadConversationSet } from "../retrieval/conversation_set.ts";
import { fts5System } from "../retrieval/systems.ts";
import { environment, writeResults } from "../support/report.ts";

const set = await loadConversationSet();
const turns = set.sessions.flatMap((session) => session.turns);

const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-recall-conversation-" });
const clock = new FakeClock({ start: Date.parse(turns[0]!.time) });
const memory = await openMemory({ dir, clock, logger: getLogger(["bench"]) });
for (const turn of turns) {
  clock.advance(Math.max(0, Date.parse(turn.time) - clock.now()));
  await memory.observe({
    eventId: turn.id,
    time: clock.now(),
    role: "user",
    source: "qq:group:household",
    sender: turn.speaker,
    text: turn.text,
  });
  memory.keepDocument({
    lines: [{ speaker: turn.speaker, text: turn.text }],
    time: clock.now(),
    provenance: [turn.id],
  });
}

const fts = fts5System();
fts.index(turns.map((turn) => ({ id: turn.id, text: `${turn.speaker}: ${turn.text}`, time: Date.parse(turn.time) })));

const hits: Record<string, { facade: number[]; fts5: number[] }> = {};
for (const question of set.questions) {
  const items = await memory.recall(question.text, { k: 10 });
  const facade = items.some((item) => item.provenance.some((id) => question.gold.includes(id))) ? 1 : 0;
  const anchor = fts.search(question.text, 10).some((id) => question.gold.includes(id)) ? 1 : 0;
  for (const key of ["all", `${question.split}`, `${question.split}/${question.category}`]) {
    (hits[key] ??= { facade: [], fts5: [] }).facade.push(facade);
    hits[key]!.fts5.push(anchor);
  }
}
fts.close?.();
await memory.close();
await Deno.remove(dir, { recursive: true });

const mean = (list: number[]) => Math.round((list.reduce((a, b) => a + b, 0) / list.length) * 1000) / 1000;
const table = Object.fromEntries(
  Object.entries(hits).sort(([a], [b]) => a.localeCompare(b)).map(([key, { facade, fts5 }]) => [key, {
    facade_r10: mean(facade),
    fts5_r10: mean(fts5),
    margin: Math.round((mean(facade) - mean(fts5)) * 1000) / 1000,
    n: facade.length,
  }]),
);
const env = await environment();
await writeResults(new URL("./recall_conversation.json", import.meta.url), { ...env, recall_at_10: table });
console.log(`memory facade recall@10 vs FTS5 (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(table);
