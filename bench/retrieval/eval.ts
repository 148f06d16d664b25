/**
 * Retrieval quality: engine vs fts5 vs bigram_baseline, same documents and queries, on
 * (a) CMRC 2018 dev (question → paragraph), (b) the frozen bilingual home set (bench/retrieval/home_set.json) and
 * (c) the frozen English multi-session conversation set (bench/retrieval/conversation_set.json, turn → question).
 *
 * Run: deno task eval:retrieval (writes under bench/out/; with --record, the committed files). Writes results.json
 * (`{"<corpus>": {"<system>": {"r1", "r5", "r10", "mrr"}}}`) and bench/retrieval/run.json (commit, Deno, CPU,
 * per-category figures of the home set).
 */

import { fileURLToPath } from "node:url";
import { environment, writeResults } from "../support/report.ts";
import { loadConversationSet } from "./conversation_set.ts";
import { bigramBaselineSystem, engineSystem, type EvalDoc, fts5System, type RetrievalSystem } from "./systems.ts";

interface EvalQuery {
  text: string;
  gold: string[];
  category?: string;
}
interface Metrics {
  r1: number;
  r5: number;
  r10: number;
  mrr: number;
}

const CMRC = new URL("../../../shared/data/cmrc2018/cmrc2018_dev.json", import.meta.url);

/** Says where the CMRC 2018 dev set comes from when it is not where the eval looks, instead of a stack trace. */
async function readCmrc(): Promise<string> {
  try {
    return await Deno.readTextFile(CMRC);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound) && !(error instanceof Deno.errors.NotCapable)) throw error;
    const path = fileURLToPath(CMRC);
    console.error(
      [
        `eval:retrieval: the CMRC 2018 dev set is not at ${path}.`,
        "It is the public Chinese machine-reading set (CC BY-SA 4.0): download cmrc2018_dev.json from the CMRC 2018",
        "release (github.com/ymcui/cmrc2018, folder squad-style-data) and put it at that path — the project's shared/",
        "folder beside this checkout normally holds it (shared/data/cmrc2018/, with its README and licence).",
        "The home set (bench/retrieval/home_set.json) ships with the repository; it needs nothing else.",
      ].join("\n"),
    );
    Deno.exit(2);
  }
}

async function loadCmrc(): Promise<{ docs: EvalDoc[]; queries: EvalQuery[] }> {
  const raw = JSON.parse(await readCmrc()) as {
    data: Array<{ paragraphs: Array<{ id: string; context: string; qas: Array<{ question: string }> }> }>;
  };
  const docs: EvalDoc[] = [];
  const queries: EvalQuery[] = [];
  for (const article of raw.data) {
    for (const paragraph of article.paragraphs) {
      docs.push({ id: paragraph.id, text: paragraph.context });
      for (const qa of paragraph.qas) queries.push({ text: qa.question, gold: [paragraph.id] });
    }
  }
  return { docs, queries };
}

async function loadHome(): Promise<{ docs: EvalDoc[]; queries: EvalQuery[] }> {
  const raw = JSON.parse(await Deno.readTextFile(new URL("./home_set.json", import.meta.url))) as {
    notes: Array<{ id: string; text: string; time: string }>;
    queries: Array<{ text: string; gold: string[]; category: string }>;
  };
  return {
    docs: raw.notes.map((note) => ({ id: note.id, text: note.text, time: Date.parse(note.time) })),
    queries: raw.queries,
  };
}

function evaluate(system: RetrievalSystem, queries: readonly EvalQuery[]): Array<{ rank: number; query: EvalQuery }> {
  return queries.map((query) => {
    const results = system.search(query.text, 100);
    const rank = results.findIndex((id) => query.gold.includes(id));
    return { rank: rank === -1 ? Infinity : rank + 1, query };
  });
}

function metrics(ranks: readonly number[]): Metrics {
  const share = (limit: number) => ranks.filter((rank) => rank <= limit).length / ranks.length;
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  return {
    r1: round(share(1)),
    r5: round(share(5)),
    r10: round(share(10)),
    mrr: round(ranks.reduce((sum, rank) => sum + (rank === Infinity ? 0 : 1 / rank), 0) / ranks.length),
  };
}

/** The English multi-session conversation set: every turn is a document ("Speaker: text"); gold is turn ids. */
async function loadConversation(): Promise<{ docs: EvalDoc[]; queries: EvalQuery[] }> {
  const raw = await loadConversationSet();
  return {
    docs: raw.sessions.flatMap((session) =>
      session.turns.map((turn) => ({ id: turn.id, text: `${turn.speaker}: ${turn.text}`, time: Date.parse(turn.time) }))
    ),
    queries: raw.questions,
  };
}

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
