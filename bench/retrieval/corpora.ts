/**
 * The retrieval eval's corpora and measures, shared by `eval:retrieval` and `eval:stemmers`: CMRC 2018 dev
 * (question → paragraph), the frozen bilingual home set and the frozen English conversation set.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { loadConversationSet } from "./conversation_set.ts";
import type { EvalDoc, RetrievalSystem } from "./systems.ts";

/** A query and the ids that answer it. */
export interface EvalQuery {
  text: string;
  gold: string[];
  category?: string;
}
/** Recall at 1, 5, 10 and mean reciprocal rank. */
export interface Metrics {
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

/** CMRC 2018 dev: each paragraph a document, each question a query. */
export async function loadCmrc(): Promise<{ docs: EvalDoc[]; queries: EvalQuery[] }> {
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

/** The frozen bilingual home set. */
export async function loadHome(): Promise<{ docs: EvalDoc[]; queries: EvalQuery[] }> {
  const raw = JSON.parse(await Deno.readTextFile(new URL("./home_set.json", import.meta.url))) as {
    notes: Array<{ id: string; text: string; time: string }>;
    queries: Array<{ text: string; gold: string[]; category: string }>;
  };
  return {
    docs: raw.notes.map((note) => ({ id: note.id, text: note.text, time: Date.parse(note.time) })),
    queries: raw.queries,
  };
}

/** Each query's rank of its first gold document in the top 100 (Infinity when absent). */
export function evaluate(
  system: RetrievalSystem,
  queries: readonly EvalQuery[],
): Array<{ rank: number; query: EvalQuery }> {
  return queries.map((query) => {
    const results = system.search(query.text, 100);
    const rank = results.findIndex((id) => query.gold.includes(id));
    return { rank: rank === -1 ? Infinity : rank + 1, query };
  });
}

/** The measures of a list of ranks. */
export function metrics(ranks: readonly number[]): Metrics {
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
export async function loadConversation(): Promise<{ docs: EvalDoc[]; queries: EvalQuery[] }> {
  const raw = await loadConversationSet();
  return {
    docs: raw.sessions.flatMap((session) =>
      session.turns.map((turn) => ({ id: turn.id, text: `${turn.speaker}: ${turn.text}`, time: Date.parse(turn.time) }))
    ),
    queries: raw.questions,
  };
}
