/**
 * `deno task eval:stemmers` (issue 9, item 8): the engine with its own light stemmer (`src/search/stem.ts`)
 * against the same engine with two maintained stemmers from npm — Porter (`stemmer`, wooorm) and Porter2 / English
 * Snowball (`wink-porter2-stemmer`) — each with the household lexicon compiled by it. Same documents and queries as
 * `eval:retrieval` (CMRC 2018 dev is Chinese: it shows that nothing else moves). The stemmer with the better figures
 * on the English sets ships.
 *
 * Run: deno task eval:stemmers (writes bench/out/retrieval/stemmers.json; --record: bench/retrieval/stemmers.json).
 */

import { stemmer } from "npm:stemmer@2.0.1";
import porter2 from "npm:wink-porter2-stemmer@2.0.1";
import { stem } from "../../src/search/stem.ts";
import { environment, writeResults } from "../support/report.ts";
import { evaluate, loadCmrc, loadConversation, loadHome, type Metrics, metrics } from "./corpora.ts";
import { engineSystem } from "./systems.ts";

const variants = [
  { name: "engine (own stemmer)", stem },
  { name: "engine + Porter (stemmer 2.0.1)", stem: stemmer },
  { name: "engine + Porter2 (wink-porter2-stemmer 2.0.1)", stem: (word: string) => porter2(word) },
];
const corpora = { cmrc2018: await loadCmrc(), home: await loadHome(), conversation: await loadConversation() };
const results: Record<string, Record<string, Metrics>> = {};
for (const [corpus, { docs, queries }] of Object.entries(corpora)) {
  for (const variant of variants) {
    const system = engineSystem(variant);
    system.index(docs);
    (results[variant.name] ??= {})[corpus] = metrics(evaluate(system, queries).map((result) => result.rank));
  }
}
const env = await environment();
await writeResults(new URL("./stemmers.json", import.meta.url), { ...env, results });
console.log(`English stemmers in the engine (${env.commit.slice(0, 10)}, deno ${env.deno}, ${env.cpu})`);
console.table(
  Object.fromEntries(
    Object.entries(results).flatMap(([name, byCorpus]) =>
      Object.entries(byCorpus).map(([corpus, m]) => [`${name} · ${corpus}`, { mrr: m.mrr, r1: m.r1, r10: m.r10 }])
    ),
  ),
);
