/**
 * A recalled line cut to what answers the query: recall's items are read within a budget, so a long turn shows its
 * matching sentences, not all of them — and a long sentence its words around the ones asked about.
 *
 * @module
 */

import { similarities, termsOf } from "../../search/relevance.ts";
import { HOUSEHOLD, termFrequencies } from "../../search/tokenizer.ts";

/**
 * The longest a line of a recalled document shows: its sentences that match the query best, in their order (a long
 * sentence, its words around the asked-about ones). 100 was chosen on LoCoMo's tune half by `eval:memory-locomo`,
 * with conversation items (`byConversation`): lines of 70, 80, 90, 100, 110, 120 characters gave strict recall@10
 * within the budget 0.833, 0.833, 0.833, 0.828, 0.825, 0.820, but showed every word of the answer for 0.217, 0.233,
 * 0.254, 0.267, 0.278, 0.291 of the questions: shorter lines fit more turns and cut into the words that answer, which
 * the model reading the item needs. 100 keeps most of both.
 */
export const LINE_SHOWN_CHARS = 100;

/**
 * A line cut to its sentences that share a word with the query, the best first while they fit in `max` characters,
 * shown in their own order ("…" where sentences or words were left out). A sentence longer than the room left shows
 * its words around the ones the query asks about, not its beginning. A line none of whose sentences matches shows its
 * first sentences that fit; a line that fits and whose every sentence matches stays as it is. A speaker's "Name: "
 * stays in front. Recall's items are read within a budget: a long turn's one relevant sentence should not cost the
 * room of three other items, nor should the pleasantries around a short turn's.
 *
 * @example
 * ```ts
 * focused("Anna: We went camping. The tent leaked all night! Next time we take the blue one.", "which tent leaked", 40);
 * // "Anna: … The tent leaked all night! …"
 * focused("Ben: Hi Anna! The passport is in the top drawer.", "where is the passport");
 * // "Ben: … The passport is in the top drawer."
 * focused("Ben: After the long drive home we found the passport under the seat of the car.", "the passport", 40);
 * // "Ben: … found the passport under the…"
 * ```
 */
export function focused(line: string, query: string, max = LINE_SHOWN_CHARS): string {
  const speaker = /^[^:\n]{1,40}: /.exec(line)?.[0] ?? "";
  const body = line.slice(speaker.length);
  const sentences = body.match(/[^.!?。！？]+[.!?。！？]*\s*/gu) ?? [body];
  if (sentences.length < 2 && line.length <= max) return line;
  const scores = similarities(sentences, query);
  const matches = scores.map((score) => score > 0);
  const anyMatches = matches.some(Boolean);
  const order = sentences.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
  const kept = new Set<number>();
  let used = speaker.length;
  for (const i of order) {
    const length = sentences[i]!.trim().length + 2;
    if (kept.size && (used + length > max || (anyMatches && !matches[i]))) continue;
    kept.add(i);
    used += length;
  }
  if (kept.size === sentences.length && line.length <= max) return line;
  const room = max - speaker.length;
  let text = "";
  sentences.forEach((sentence, i) => {
    if (!kept.has(i)) {
      if (text !== "" && !text.endsWith("… ")) text += "… ";
      return;
    }
    // The only sentence kept and too long for the room: its words around the asked-about ones.
    const shown = kept.size === 1 && sentence.trim().length + 2 > room
      ? aroundMatches(sentence.trim(), query, room - 2)
      : sentence.trim();
    text += `${text === "" && i > 0 && !shown.startsWith("…") ? "… " : ""}${shown} `;
  });
  const shown = text.trim();
  return `${speaker}${shown.length > room ? `${shown.slice(0, room - 1)}…` : shown}`;
}

/**
 * The run of `sentence`'s words at most `max` characters long (with its "…" marks) that holds the most words the
 * query asks about, the earliest such run; "…" where words were cut before or after it.
 */
function aroundMatches(sentence: string, query: string, max: number): string {
  const asked = new Set(termsOf(query).keys());
  const words = sentence.split(/\s+/);
  const hits = words.map((word) => [...termFrequencies(word, { lexicon: HOUSEHOLD }).keys()].some((t) => asked.has(t)));
  // The run from `start` as long as it fits: room for "… " before a run that does not start the sentence and "…" after.
  const runFrom = (start: number) => {
    let length = start > 0 ? 2 : 0;
    let count = 0;
    let end = start;
    while (end < words.length && length + words[end]!.length + (end > start ? 1 : 0) + 1 <= max) {
      length += words[end]!.length + (end > start ? 1 : 0);
      if (hits[end]) count++;
      end++;
    }
    return { start, end, hits: count };
  };
  let best = { start: 0, end: 0, hits: -1 };
  for (let start = 0; start < words.length; start++) {
    const run = runFrom(start);
    if (run.end > start && run.hits > best.hits) best = run;
    if (run.end === words.length) break;
  }
  if (best.end === 0) return `${sentence.slice(0, Math.max(0, max - 1))}…`;
  // The earliest run with the most asked-about words ends on them; what answers tends to follow them, so the run
  // starts two words before its first one instead (it loses none of them: it only reaches further).
  const first = hits.findIndex((hit, i) => hit && i >= best.start);
  if (best.hits > 0 && first - 2 > best.start) best = runFrom(first - 2);
  const run = words.slice(best.start, best.end).join(" ");
  return `${best.start > 0 ? "… " : ""}${run}${best.end < words.length ? "…" : ""}`;
}
