/**
 * TF-IDF cosine between a small set of texts and one query, for layer 1's pruning and recall's choices (which lines
 * of the recent context, which sentence of a line, whether a document's turn before it is what matched): IDF comes
 * from the set itself (a context holds a few dozen exchanges), terms from the engine's tokenizer (CJK bigrams,
 * stemmed Latin words, the household lexicon).
 *
 * The same texts come back call after call — the recent lines every recall, the query once per document it is
 * compared with — so their terms are kept in a small memo ({@link termsOf}) instead of tokenized again: a text's
 * terms depend on nothing but the text, so the memo is never stale and needs no invalidation.
 *
 * @module
 */

import { HOUSEHOLD, termFrequencies } from "./tokenizer.ts";

/** Texts whose terms are kept (≈ 1.5 kB each): the recent context (30 lines), the query, a few recalls' documents. */
const MEMO_ENTRIES = 512;
/** Longer texts are tokenized every time: they are rare, and would make the memo large. */
const MEMO_CHARS = 1_000;

/** The memo, oldest use first (a `Map` keeps insertion order; a hit moves its entry to the end). */
const memo = new Map<string, ReadonlyMap<string, number>>();

/**
 * The term frequencies of `text` with the household lexicon — the engine's analyzer — from the memo when the text
 * was seen lately. The map is shared: read it, never change it.
 *
 * @example
 * ```ts
 * termsOf("客厅的灯坏了").get("客厅"); // 1
 * termsOf("客厅的灯坏了") === termsOf("客厅的灯坏了"); // true: the second is the memo's
 * ```
 */
export function termsOf(text: string): ReadonlyMap<string, number> {
  const kept = memo.get(text);
  if (kept) {
    memo.delete(text);
    memo.set(text, kept);
    return kept;
  }
  const terms = termFrequencies(text, { lexicon: HOUSEHOLD });
  if (text.length <= MEMO_CHARS) {
    if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
    memo.set(text, terms);
  }
  return terms;
}

/**
 * How many texts the memo holds now (tests: it stays bounded).
 *
 * @example
 * ```ts
 * termsOf("客厅的灯坏了");
 * memoSize(); // ≥ 1, never more than 512
 * ```
 */
export function memoSize(): number {
  return memo.size;
}

/**
 * The cosine of each text against `query`, in the texts' order (0 when they share no term).
 *
 * @example
 * ```ts
 * similarities(["客厅的灯坏了", "今晚吃饺子"], "客厅灯还亮着吗"); // ≈ [0.35, 0]
 * ```
 */
export function similarities(texts: readonly string[], query: string): number[] {
  const vectors = texts.map(termsOf);
  const queryTerms = termsOf(query);
  const df = new Map<string, number>();
  const count = (_: number, term: string) => df.set(term, (df.get(term) ?? 0) + 1);
  for (const vector of vectors) vector.forEach(count);
  queryTerms.forEach(count);
  const n = vectors.length + 1;
  // A term's weight in a vector: computed where it is needed (no map of weights per text); the same value, the same
  // order of sums as ever. The maps are walked with `forEach`: a `for … of` made an entry array per term.
  const weightOf = (term: string, tf: number) => (1 + Math.log(tf)) * Math.log(1 + n / df.get(term)!);
  const normOf = (vector: ReadonlyMap<string, number>) => {
    let norm = 0;
    vector.forEach((tf, term) => {
      const weight = weightOf(term, tf);
      norm += weight * weight;
    });
    return Math.sqrt(norm) || 1;
  };
  const queryTermList: string[] = [], queryWeights: number[] = [];
  queryTerms.forEach((tf, term) => {
    queryTermList.push(term);
    queryWeights.push(weightOf(term, tf));
  });
  const queryNorm = normOf(queryTerms);
  return vectors.map((vector) => {
    let dot = 0;
    for (let i = 0; i < queryTermList.length; i++) {
      const tf = vector.get(queryTermList[i]!);
      dot += queryWeights[i]! * (tf === undefined ? 0 : weightOf(queryTermList[i]!, tf));
    }
    return dot / (queryNorm * normOf(vector));
  });
}
