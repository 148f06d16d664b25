/**
 * A store's filter terms: for each metadata key searches filter by (`filterKeys`), a document's value of it indexed
 * as one more term, so `filter: { key: value }` reads one posting list instead of every candidate's metadata from
 * disk. They follow from the metadata, so they are added when a document is indexed and never logged; an older
 * snapshot, whose format had none, gets them when it is converted.
 *
 * @module
 */

import type { DocMeta } from "./inverted_index.ts";
import { filterTerm } from "./ranking.ts";
import type { IndexSnapshot } from "./snapshot.ts";

/**
 * A document's terms with its filter terms added (in place; the same map is returned).
 *
 * @example
 * ```ts
 * const terms = withFilterTerms(new Map([["tea", 1]]), { topic: "cooking" }, new Set(["topic"]));
 * terms.size; // 2: "tea" and the filter term of topic = cooking
 * ```
 */
export function withFilterTerms(
  terms: Map<string, number>,
  meta: DocMeta,
  filterKeys: ReadonlySet<string>,
): Map<string, number> {
  for (const key of filterKeys) {
    const value = meta[key];
    if (value !== undefined) terms.set(filterTerm(key, value), 1);
  }
  return terms;
}

/**
 * An older snapshot's documents with their filter terms added (its format had none); the snapshot itself when there
 * are none to add.
 *
 * @example
 * ```ts
 * import type { IndexSnapshot } from "./snapshot.ts";
 *
 * declare const snapshot: IndexSnapshot;
 * const converted = withFilterTermsAll(snapshot, new Set(["topic"]));
 * ```
 */
export function withFilterTermsAll(snapshot: IndexSnapshot, filterKeys: ReadonlySet<string>): IndexSnapshot {
  if (!filterKeys.size) return snapshot;
  const terms = [...snapshot.terms];
  const termIndex = new Map<string, number>();
  const filterTermIds = snapshot.metas.map((meta) =>
    [...withFilterTerms(new Map(), meta, filterKeys).keys()].map((term) => {
      let id = termIndex.get(term);
      if (id === undefined) termIndex.set(term, id = terms.push(term) - 1);
      return id;
    })
  );
  const extra = filterTermIds.reduce((sum, ids) => sum + ids.length, 0);
  if (!extra) return snapshot;
  const lengths = new Int32Array(snapshot.lengths.length);
  const termIds = new Int32Array(snapshot.termIds.length + extra);
  const weights = new Float32Array(snapshot.termIds.length + extra);
  let from = 0, to = 0;
  snapshot.lengths.forEach((length, doc) => {
    termIds.set(snapshot.termIds.subarray(from, from + length), to);
    weights.set(snapshot.weights.subarray(from, from + length), to);
    from += length;
    to += length;
    for (const id of filterTermIds[doc]!) {
      termIds[to] = id;
      weights[to++] = 1; // 1 + ln 1
    }
    lengths[doc] = length + filterTermIds[doc]!.length;
  });
  return { ...snapshot, terms, lengths, termIds, weights };
}
