/**
 * The documents a recall found, as its items, each with what made it match: its own words, or the turn said just
 * before it (its context field) — shown and cited when that turn is what the query matched; and the best of them
 * with the other turns found of their conversation, one item each (`byConversation`).
 *
 * @module
 */

import { similarities } from "../../search/relevance.ts";
import type { DocumentHit } from "../document/document_store.ts";
import { focused, LINE_SHOWN_CHARS } from "./focused.ts";
import { CONTEXT_GAP_MS } from "./conversation.ts";

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
  /** The chat it was said in (`DocumentHit`'s source): what {@link byConversation} groups by. */
  source: string;
  /** Every document the item shows, when it shows more than its own (see {@link byConversation}). */
  documents?: string[];
}

/** The longest part of a context turn a recalled item shows: as much as of a line of its own. */
const CONTEXT_SHOWN_CHARS = LINE_SHOWN_CHARS;

/**
 * The longest a conversation's item grows by gathering its other turns ({@link byConversation}): 300 was chosen on
 * LoCoMo's tune half by `eval:memory-locomo` (250, 300, 400 with lines of 80 characters: strict recall@10 within the
 * budget 0.832, 0.830, 0.826; 300 and 600 with lines of 120: 0.820 both): longer items put one conversation's weaker
 * turns before others' better ones.
 */
export const ITEM_CHARS = 300;

/**
 * The documents found, as recall items — each with what made it match. A document is also indexed by the turn said
 * just before it (its context field: "Top drawer." is found by "where is the passport?"); when that turn, not its own
 * words, is what matches the query best, the item shows it and names its event, so what was recalled holds the words
 * that were asked about and who the evidence came from. Without that, the reply outranked the very turn it answered
 * while showing none of its words. When that turn is itself among the documents found, the two are one item (the
 * pair once, at the better score), so a budget of items is not spent twice on the same words; so is a chain of such
 * turns (a question, its answer, the reply to that), whichever of them ranks first. Each line shows its words that
 * answer (`focused`), chosen by the query without the `names` of the speakers it says (lower case, as `namedSpeakers`
 * gives them): a greeting that names the person asked about shares a word with the question but answers nothing.
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
export function withWhatMatched(
  pool: readonly DocumentHit[],
  query: string,
  names: ReadonlySet<string> = new Set(),
): DocumentItem[] {
  // What a line shows is chosen by the words asked about, not by the speakers' names: "Thanks, Caroline!" shares a
  // word with "What did Caroline paint?" but does not answer it.
  const asked = withoutNames(query, names);
  const items = pool.map((hit) => ({
    kind: "document" as const,
    text: hit.document.text.split("\n").map((line) => focused(line, asked)).join("\n"),
    score: hit.score,
    time: hit.document.created,
    provenance: hit.document.provenance,
    document: hit.document.id,
    source: hit.document.source,
  }));
  const byEvent = new Map<string, number>();
  items.forEach((item, i) => item.provenance.forEach((id) => byEvent.set(id, i)));
  const merged = new Set<number>();
  pool.forEach((hit, i) => {
    const context = hit.document.context;
    // A turn before that holds none of the query's words (the index says so) cannot match it better: not tokenized.
    if (!context || merged.has(i) || hit.contextMatched === false) return;
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
    const shownContext = focused(context.text, asked, CONTEXT_SHOWN_CHARS);
    item.text = `(before: ${shownContext})\n${item.text}`;
    item.provenance = [...new Set([context.eventId, ...item.provenance])];
  });
  return items.filter((_, i) => !merged.has(i));
}

/** What {@link byConversation} reads of an item. */
interface Foldable {
  kind: string;
  text: string;
  time: number;
  provenance: string[];
  document?: string;
  source?: string;
  documents?: string[];
}

/**
 * The `k` best items, each document item among them holding as well the lower-ranked ones of the same conversation
 * (the same chat, said within {@link CONTEXT_GAP_MS} of it) while its text stays within {@link ITEM_CHARS}: their
 * lines follow its own, best first, each turn's event in the provenance in the order shown; the items after them move
 * up. Recall is read within a budget of characters, not of items: a conversation's matching turns are one item rather
 * than several, and the room goes to the next best turns. Only items that were among the `k` best are gathered —
 * a weak turn is never pulled up past better ones (gathering from the whole pool put them first: on LoCoMo's tune
 * half, with lines of 80 characters, strict recall@10 within the budget 0.825 from the whole pool, 0.830 from the first
 * 20, 0.833 from the first 10, 0.829 from the first 5). An item gathers
 * only items found for the same asker, so it shows no line they could not read.
 *
 * @example
 * ```ts
 * const item = (document: string, time: number, text: string) =>
 *   ({ kind: "document", text, time, provenance: [document], document, source: "qq:group:1" });
 * byConversation([item("e1", 0, "Anna: The key is under the pot."), item("e2", 60_000, "Ben: The red pot?")], 5);
 * // [{ kind: "document", text: "Anna: The key is under the pot.\nBen: The red pot?", provenance: ["e1", "e2"],
 * //    documents: ["e1", "e2"], … }]
 * ```
 */
export function byConversation<T extends Foldable>(items: readonly T[], k: number): T[] {
  const kept: T[] = [];
  for (const [rank, item] of items.entries()) {
    const into = item.kind === "document" && rank < k
      ? kept.find((other) =>
        other.kind === "document" && other.source === item.source &&
        Math.abs(other.time - item.time) <= CONTEXT_GAP_MS && other.text.length + 1 + item.text.length <= ITEM_CHARS
      )
      : undefined;
    const fresh = into ? item.provenance.filter((id) => !into.provenance.includes(id)) : [];
    // A turn the item shows already is not shown twice; an item that shares only some of its turns stays apart (its
    // lines would not follow its provenance).
    if (into && !fresh.length) continue;
    if (!into || fresh.length < item.provenance.length) {
      kept.push({ ...item });
      continue;
    }
    into.text = `${into.text}\n${item.text}`;
    into.provenance = [...into.provenance, ...fresh];
    into.documents = [...(into.documents ?? (into.document ? [into.document] : [])), item.document!];
  }
  return kept.slice(0, k);
}

/** The query without the speakers' `names` (lower case) it says; the query as it is when nothing else is left. */
function withoutNames(query: string, names: ReadonlySet<string>): string {
  if (!names.size) return query;
  let rest = query.split(/([^\p{L}\p{N}]+)/u).filter((word) => !names.has(word.toLowerCase())).join("");
  // Chinese writes no spaces: a Han name ("奶奶") is said inside a run of the query, not as a word of its own.
  for (const name of names) if (/^\p{sc=Han}+$/u.test(name)) rest = rest.replaceAll(name, " ");
  return /[\p{L}\p{N}]/u.test(rest) ? rest : query;
}
