/**
 * Retrieval quality: engine vs fts5 vs bigram_baseline, same documents and queries, on
 * (a) CMRC 2018 dev (question → paragraph), (b) the frozen bilingual home set (bench/retrieval/home_set.json) and
 * (c) the frozen English multi-session conversation set (bench/retrieval/conversation_set.json, turn → question).
 *
 * Run: deno task eval:retrieval (writes under bench/out/; with --record, the committed files). Writes results.json
 * (`{"<corpus>": {"<system>": {"r1", "r5", "r10", "mrr"}}}`) and bench/retrieval/run.json (commit, Deno, CPU,
 * per-category figures of the home set).
 */

import { environment, writeResults } from "../support/report.ts";
import { evaluate, loadCmrc, loadConversation, loadHome, type Metrics, metrics } from "./corpora.ts";
import { bigramBaselineSystem, engineSystem, fts5System } from "./systems.ts";

const corpora = { cmrc2018: await loadCmrc(), home: await loadHome(), conversation: await loadConversation() };
const results: Record<string, Record<string, Metrics>> = {};
/** Per corpus with categories, per category, per system. */
const categories: Record<string, Record<string, Record<string, Metrics & { n: number }>>> = {};
for (const [name, corpus] of Object.entries(corpora)) {
  results[name] = {};
  for (const system of [engineSystem(), fts5System(), bigramBaselineSystem()]) {
    system.index(corpus.docs);
    const ranked = evaluate(system, corpus.queries);
    system.close?.();
    results[name]![system.name] = metrics(ranked.map((r) => r.rank));
    for (const category of new Set(corpus.queries.flatMap((q) => q.category ? [q.category] : []))) {
      const subset = ranked.filter((r) => r.query.category === category).map((r) => r.rank);
      categories[name] ??= {};
      categories[name]![category] ??= {};
      categories[name]![category]![system.name] = { ...metrics(subset), n: subset.length };
    }
  }
}

const env = await environment();
await writeResults(new URL("./results.json", import.meta.url), results);
await writeResults(new URL("./run.json", import.meta.url), {
  commit: env.commit,
  deno: env.deno,
  cpu: env.cpu,
  corpora: Object.fromEntries(
    Object.entries(corpora).map(([name, c]) => [name, { documents: c.docs.length, queries: c.queries.length }]),
  ),
  home_by_category: categories.home,
  conversation_by_category: categories.conversation,
});
console.log(`retrieval eval (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
for (const [name, bySystem] of Object.entries(results)) {
  console.log(
    `\n${name} (${corpora[name as keyof typeof corpora].docs.length} docs, ${
      corpora[name as keyof typeof corpora].queries.length
    } queries)`,
  );
  console.table(bySystem);
}
for (const [corpus, byCategory] of Object.entries(categories)) {
  for (const [category, bySystem] of Object.entries(byCategory)) {
    console.log(`\n${corpus} / ${category} (${Object.values(bySystem)[0]!.n} queries)`);
    console.table(Object.fromEntries(Object.entries(bySystem).map(([s, { n: _n, ...m }]) => [s, m])));
  }
}
