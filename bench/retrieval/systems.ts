/**
 * The three retrieval systems compared on the same documents and queries:
 * - `engine`: homed's TF-IDF engine (src/search/), with the household lexicon and supersession by time;
 * - `fts5`: SQLite FTS5 through node:sqlite — a `porter unicode61` column for Latin text plus a column of the same
 *   CJK bigrams the engine uses (FTS5's tokenizer cannot split Chinese), an OR query of the query's terms, ranked by
 *   `bm25()`;
 * - `bigram_baseline`: the seed's plain engine, fixed as character bigrams of the lower-cased raw text, weight
 *   (1 + ln tf) · (ln((N+1)/(df+1)) + 1), cosine, no stopwords.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { InvertedIndex } from "../../src/search/inverted_index.ts";
import { HOUSEHOLD_IDIOMS, HOUSEHOLD_LEXICON } from "../../src/search/lexicon.ts";
import { compileLexicon, HOUSEHOLD, termFrequencies, tokenize } from "../../src/search/tokenizer.ts";

/** A document of an eval corpus. */
export interface EvalDoc {
  id: string;
  text: string;
  /** ms since epoch, when known. */
  time?: number;
}

/** One system under test. */
export interface RetrievalSystem {
  name: string;
  index(docs: readonly EvalDoc[]): void;
  search(query: string, k: number): string[];
  close?(): void;
}

/**
 * homed's engine; with `stem`, the same engine with another English stemmer (its lexicon compiled with it), for
 * `eval:stemmers`.
 */
export function engineSystem(
  variant?: { name: string; stem: (word: string) => string },
): RetrievalSystem & { inner: InvertedIndex } {
  const inner = new InvertedIndex();
  const lexicon = variant ? compileLexicon(HOUSEHOLD_LEXICON, HOUSEHOLD_IDIOMS, variant.stem) : HOUSEHOLD;
  const analyze = (text: string) => termFrequencies(text, { lexicon, stem: variant?.stem });
  return {
    name: variant?.name ?? "engine",
    inner,
    index(docs) {
      for (const doc of docs) inner.put(doc.id, analyze(doc.text), doc.time === undefined ? {} : { time: doc.time });
    },
    search: (query, k) => inner.search(analyze(query), { k }).map((hit) => hit.id),
  };
}

const CJK = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]/u;

/** The CJK bigrams (and lone characters) the engine's tokenizer makes, without concepts. */
export function cjkTerms(text: string): string[] {
  return tokenize(text).filter((term) => CJK.test(term));
}

/** The Latin part of a text, for FTS5's porter column. */
export function latinText(text: string): string {
  return text.replace(/[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]+/gu, " ");
}

/**
 * The FTS5 MATCH expression for a query: an OR of its Latin words (porter column) and CJK bigrams (bigram column);
 * `undefined` when it has no terms.
 */
export function ftsMatchQuery(text: string): string | undefined {
  const latin = (latinText(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => `latin:"${w}"`);
  const cjk = [...new Set(cjkTerms(text))].map((t) => `cjk:"${t}"`);
  const terms = [...new Set([...latin, ...cjk])];
  return terms.length ? terms.join(" OR ") : undefined;
}

/** SQLite FTS5 with bm25. `path` ":memory:" or a file. */
export function fts5System(path = ":memory:"): RetrievalSystem & { db: DatabaseSync } {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  db.exec(
    "CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(doc_id UNINDEXED, latin, cjk, tokenize = 'porter unicode61')",
  );
  const insert = db.prepare("INSERT INTO docs (doc_id, latin, cjk) VALUES (?, ?, ?)");
  const query = db.prepare("SELECT doc_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?");
  return {
    name: "fts5",
    db,
    index(docs) {
      db.exec("BEGIN");
      for (const doc of docs) insert.run(doc.id, latinText(doc.text), cjkTerms(doc.text).join(" "));
      db.exec("COMMIT");
    },
    search(text, k) {
      const match = ftsMatchQuery(text);
      if (!match) return [];
      return (query.all(match, k) as Array<{ doc_id: string }>).map((row) => row.doc_id);
    },
    close: () => db.close(),
  };
}

function charBigrams(text: string): Map<string, number> {
  const chars = [...text.toLowerCase()];
  const counts = new Map<string, number>();
  for (let i = 0; i + 1 < chars.length; i++) {
    const bigram = chars[i]! + chars[i + 1]!;
    counts.set(bigram, (counts.get(bigram) ?? 0) + 1);
  }
  return counts;
}

/** The seed's plain engine, as the issue fixes it. */
export function bigramBaselineSystem(): RetrievalSystem {
  const docs: Array<{ id: string; terms: Map<string, number>; norm: number }> = [];
  const df = new Map<string, number>();
  const postings = new Map<string, number[]>();
  const idf = (term: string) => Math.log((docs.length + 1) / ((df.get(term) ?? 0) + 1)) + 1;
  return {
    name: "bigram_baseline",
    index(input) {
      for (const doc of input) {
        const terms = charBigrams(doc.text);
        for (const term of terms.keys()) {
          df.set(term, (df.get(term) ?? 0) + 1);
          const list = postings.get(term) ?? [];
          list.push(docs.length);
          postings.set(term, list);
        }
        docs.push({ id: doc.id, terms, norm: 0 });
      }
      for (const doc of docs) {
        let squares = 0;
        for (const [term, tf] of doc.terms) squares += ((1 + Math.log(tf)) * idf(term)) ** 2;
        doc.norm = Math.sqrt(squares) || 1;
      }
    },
    search(query, k) {
      const q = charBigrams(query);
      let qNorm = 0;
      const scores = new Map<number, number>();
      for (const [term, tf] of q) {
        const weight = (1 + Math.log(tf)) * idf(term);
        qNorm += weight * weight;
        for (const index of postings.get(term) ?? []) {
          const doc = docs[index]!;
          const dWeight = (1 + Math.log(doc.terms.get(term)!)) * idf(term);
          scores.set(index, (scores.get(index) ?? 0) + weight * dWeight);
        }
      }
      qNorm = Math.sqrt(qNorm) || 1;
      return [...scores].map(([index, dot]) => [index, dot / (qNorm * docs[index]!.norm)] as const)
        .sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k).map(([index]) => docs[index]!.id);
    },
  };
}
