/**
 * The documents a recall found, as its items, each with what made it match: its own words, or the turn said just
 * before it (its context field) — shown and cited when that turn is what the query matched.
 *
 * @module
 */

import { similarities } from "../../search/relevance.ts";
import type { DocumentHit } from "../document/document_store.ts";
import { focused } from "./focused.ts";

/** A document as a recall item, with the document's id (to count it as accessed when it is returned). */
export interface DocumentItem {
  kind: "document";
  text: string;
  score: number;
  /** Milliseconds since the epoch. */
  time: number;
  /** Input event ids. */
  provenance: string[];
  document: string;
}

/** The longest part of a context turn a recalled item shows. */
const CONTEXT_SHOWN_CHARS = 120;

/**
 * The documents found, as recall items — each with what made it match. A document is also indexed by the turn said
 * just before it (its context field: "Top drawer." is found by "where is the passport?"); when that turn, not its own
 * words, is what matches the query best, the item shows it and names its event, so what was recalled holds the words
 * that were asked about and who the evidence came from. Without that, the reply outranked the very turn it answered
 * while showing none of its words. When that turn is itself among the documents found, the two are one item (the
 * pair once, at the better score), so a budget of items is not spent twice on the same words; so is a chain of such
 * turns (a question, its answer, the reply to that), whichever of them ranks first.
 *
 * @example
 * ```ts
 * import type { DocumentHit } from "../document/document_store.ts";
 *
 * declare const found: DocumentHit[]; // "Top drawer." (e2), indexed with "Where is the passport?" (e1) before it
 * withWhatMatched(found, "where is the passport");
 * // [{ kind: "document", text: "(before: Anna: Where is the passport?)\nBen: Top drawer.", provenance: ["e1", "e2"],
 * //    document: "d2", … }]
 * ```
 */
export function withWhatMatched(pool: readonly DocumentHit[], query: string): DocumentItem[] {
  const items = pool.map((hit) => ({
    kind: "document" as const,
    text: hit.document.text.split("\n").map((line) => focused(line, query)).join("\n"),
    score: hit.score,
    time: hit.document.created,
    provenance: hit.document.provenance,
    document: hit.document.id,
  }));
  const byEvent = new Map<string, number>();
  items.forEach((item, i) => item.provenance.forEach((id) => byEvent.set(id, i)));
  const merged = new Set<number>();
  pool.forEach((hit, i) => {
    const context = hit.document.context;
    if (!context || merged.has(i)) return;
    const [before, own] = similarities([context.text, hit.document.text], query);
    if (!(before! > own!)) return;
    const item = items[i]!;
    const at = byEvent.get(context.eventId);
    if (at !== undefined && at !== i) {
      const earlier = items[at]!;
      earlier.text = `${earlier.text}\n${item.text}`;
      earlier.provenance = [...new Set([...earlier.provenance, ...item.provenance])];
      earlier.score = Math.max(earlier.score, item.score);
      // A turn merged into an item is found there by the turn that follows it, too: a chain is one item.
      item.provenance.forEach((id) => byEvent.set(id, at));
      merged.add(i);
      return;
    }
    const shownContext = focused(context.text, query, CONTEXT_SHOWN_CHARS);
    item.text = `(before: ${shownContext})\n${item.text}`;
    item.provenance = [...new Set([context.eventId, ...item.provenance])];
  });
  return items.filter((_, i) => !merged.has(i));
}
