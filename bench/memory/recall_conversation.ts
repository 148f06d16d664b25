/**
 * Recall through the memory facade on the English conversation set (issue 9): every turn is observed and kept as a
 * layer-2 document (as each message eventually leaves layer 1), on a simulated clock at the turn's time; then each
 * question goes to `recall(question, { k: 10 })` and is a hit when an item's provenance holds a gold turn id (MRR: the
 * rank of the first such item). The
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

/** 1-based rank of the first hit, or Infinity. */
const rankOf = (found: number) => found + 1 || Infinity;
const ranks: Record<string, { facade: number[]; fts5: number[] }> = {};
for (const question of set.questions) {
  const items = await memory.recall(question.text, { k: 10 });
  const facade = rankOf(items.findIndex((item) => item.provenance.some((id) => question.gold.includes(id))));
  const anchor = rankOf(fts.search(question.text, 10).findIndex((id) => question.gold.includes(id)));
  for (const key of ["all", `${question.split}`, `${question.split}/${question.category}`]) {
    (ranks[key] ??= { facade: [], fts5: [] }).facade.push(facade);
    ranks[key]!.fts5.push(anchor);
  }
}
fts.close?.();
await memory.close();
await Deno.remove(dir, { recursive: true });

const round = (x: number) => Math.round(x * 1000) / 1000;
const r10 = (list: number[]) => round(list.filter((rank) => rank <= 10).length / list.length);
const mrr = (list: number[]) => round(list.reduce((sum, rank) => sum + 1 / rank, 0) / list.length);
const table = Object.fromEntries(
  Object.entries(ranks).sort(([a], [b]) => a.localeCompare(b)).map(([key, { facade, fts5 }]) => [key, {
    facade_r10: r10(facade),
    fts5_r10: r10(fts5),
    margin: round(r10(facade) - r10(fts5)),
    facade_mrr: mrr(facade),
    fts5_mrr: mrr(fts5),
    n: facade.length,
  }]),
);
const env = await environment();
await writeResults(new URL("./recall_conversation.json", import.meta.url), { ...env, at_10: table });
console.log(`memory facade recall@10 vs FTS5 (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(table);
