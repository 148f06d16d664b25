/**
 * TF-IDF cosine between a small set of texts and one query, for layer 1's pruning: which exchanges of the context are
 * least related to what is being talked about now. IDF comes from the set itself (a context holds a few dozen
 * exchanges), terms from the engine's tokenizer (CJK bigrams, stemmed Latin words, the household lexicon).
 *
 * @module
 */

import { HOUSEHOLD, termFrequencies } from "./tokenizer.ts";

/**
 * The cosine of each text against `query`, in the texts' order (0 when they share no term).
 *
 * @example
 * ```ts
 * similarities(["客厅的灯坏了", "今晚吃饺子"], "客厅灯还亮着吗"); // ≈ [0.35, 0]
 * ```
 */
export function similarities(texts: readonly string[], query: string): number[] {
  const vectors = texts.map((text) => termFrequencies(text, { lexicon: HOUSEHOLD }));
  const queryTerms = termFrequencies(query, { lexicon: HOUSEHOLD });
  const df = new Map<string, number>();
  for (const vector of [...vectors, queryTerms]) {
    for (const term of vector.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  }
  const n = vectors.length + 1;
  const weigh = (vector: Map<string, number>) => {
    const weights = new Map<string, number>();
    let norm = 0;
    for (const [term, tf] of vector) {
      const weight = (1 + Math.log(tf)) * Math.log(1 + n / df.get(term)!);
      weights.set(term, weight);
      norm += weight * weight;
    }
    return { weights, norm: Math.sqrt(norm) || 1 };
  };
  const q = weigh(queryTerms);
  return vectors.map((vector) => {
    const d = weigh(vector);
    let dot = 0;
    for (const [term, weight] of q.weights) dot += weight * (d.weights.get(term) ?? 0);
    return dot / (q.norm * d.norm);
  });
}
